package models_test

import (
	"testing"

	"github.com/gpubook/gpubook/models"
)

func TestBalances(t *testing.T) {
	ws := at(shanghai, "2026-03-02 00:00")
	loans := []models.QuotaLoan{
		{WeekStart: ws, FromUser: ptr(7), TeamID: ptr(3), GPUMinutes: 300}, // 7 gives 5 h to the pool
		{WeekStart: ws, ToUser: ptr(8), TeamID: ptr(3), GPUMinutes: 120},   // 8 draws 2 h
		{WeekStart: ws, FromUser: ptr(8), ToUser: ptr(7), GPUMinutes: 60},  // 8 lends 1 h to 7
	}
	if got := models.PoolBalance(loans, 3, ws); got != 180 {
		t.Errorf("pool = %d, want 180", got)
	}
	if got := models.LoanBalance(loans, 7, ws); got != -240 {
		t.Errorf("user 7 = %d, want -240", got)
	}
	if got := models.LoanBalance(loans, 8, ws); got != 60 {
		t.Errorf("user 8 = %d, want 60", got)
	}
}

func TestValidateLoan(t *testing.T) {
	tests := []struct {
		name  string
		loan  models.QuotaLoan
		check models.LoanCheck
		field string // "" = valid
	}{
		{"lend to a colleague", models.QuotaLoan{FromUser: ptr(7), ToUser: ptr(8), GPUMinutes: 60}, models.LoanCheck{LenderLeft: 120}, ""},
		{"lend more than left", models.QuotaLoan{FromUser: ptr(7), ToUser: ptr(8), GPUMinutes: 180}, models.LoanCheck{LenderLeft: 120}, "hours"},
		{"no weekly limit: nothing to lend", models.QuotaLoan{FromUser: ptr(7), ToUser: ptr(8), GPUMinutes: 60}, models.LoanCheck{LenderLeft: -1}, "hours"},
		{"lend to oneself", models.QuotaLoan{FromUser: ptr(7), ToUser: ptr(7), GPUMinutes: 60}, models.LoanCheck{LenderLeft: 120}, "to"},
		{"zero", models.QuotaLoan{FromUser: ptr(7), ToUser: ptr(8)}, models.LoanCheck{LenderLeft: 120}, "hours"},
		{"draw from the pool", models.QuotaLoan{ToUser: ptr(7), TeamID: ptr(3), GPUMinutes: 60}, models.LoanCheck{PoolLeft: 60, SameTeam: true}, ""},
		{"draw more than the pool holds", models.QuotaLoan{ToUser: ptr(7), TeamID: ptr(3), GPUMinutes: 90}, models.LoanCheck{PoolLeft: 60, SameTeam: true}, "hours"},
		{"pool of another team", models.QuotaLoan{ToUser: ptr(7), TeamID: ptr(4), GPUMinutes: 30}, models.LoanCheck{PoolLeft: 60}, "to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := models.ValidateLoan(&tt.loan, tt.check)
			fields := models.AsError(err).Fields
			if err == nil && tt.field != "" || err != nil && (tt.field == "" || fields[tt.field].Key == "") {
				t.Errorf("got %v, want problem with %q", err, tt.field)
			}
		})
	}
}
