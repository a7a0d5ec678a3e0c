package views

import (
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// diffWeek is a week of one GPU with ann (team A) and hal: before, ann had
// booked nothing; after, ann booked 2 h, was busy 1 h, and hal used her
// booking for 2 h — the kind of change issue 37 found missing from the
// recompute's list (shares, efficiency n/a → 50 %, used by nobody → hal).
func diffWeek(t *testing.T, after bool) *models.WeekData {
	t.Helper()
	loc, _ := time.LoadLocation("Europe/Berlin")
	w, err := models.ParseWeek("2026-W49", loc)
	if err != nil {
		t.Fatal(err)
	}
	n := models.ReportDays + models.TrendWeeks - 1
	d := &models.WeekData{Week: w, AsOf: w.End, Spans: models.ReportSpans(w, w.End), GPUCount: 1,
		Users:       []models.User{{ID: 1, Name: "ann"}, {ID: 2, Name: "hal"}},
		Memberships: []models.Membership{{TeamID: 9, UserID: 1, TeamName: "A", Role: models.RoleLead}},
		ByUser:      map[int64][]models.Figures{1: make([]models.Figures, n), 2: make([]models.Figures, n)},
		UsedBy:      map[int64][]models.UserMinutes{}, ClusterBusyMin: make([]int64, n), ClusterUnbookedMin: make([]int64, n),
		HourBusyMin: map[int64]int64{}}
	if after {
		d.ByUser[1][2] = models.Figures{BookedSec: 7200, BusyMin: 60}
		d.ByUser[2][2] = models.Figures{UnbookedMin: 120}
		d.UsedBy[1] = []models.UserMinutes{{UserID: 2, Name: "hal", Minutes: 120}}
	}
	return d
}

func TestDiffWeeks(t *testing.T) {
	tr := i18n.MustLoad().For("en")
	before, after := diffWeek(t, false), diffWeek(t, true)
	got := map[string]string{}
	for _, c := range DiffWeeks(tr, before, after) {
		got[DiffWho(tr, c)+" | "+c.Table+" | "+DiffFigure(c)] = c.Before + " -> " + c.After
	}
	for _, want := range []struct{ cell, change string }{
		{"ann | figures | GPU-hours booked", "0.0 -> 2.0"},
		{"ann | figures | Efficiency", "n/a -> 50%"},
		{"ann | figures | Used by others on your bookings", "nobody -> hal 2.0 h"},
		{"ann | figures | Share of booked GPU-hours", "0% -> 100%"},
		{"ann | figures | Share of busy GPU-hours", "0% -> 100%"},
		{"ann | days | Wed 12-02 · Efficiency", "n/a -> 50%"},
		{"ann | users | GPU-hours booked", "0.0 -> 2.0"},
		{"ann | members:A | Efficiency", "n/a -> 50%"},
		{"hal | figures | GPU-hours used without a booking", "0.0 -> 2.0"},
		{"(the week) | cluster | Booked share of capacity", "0% -> 1%"},
		{"(the week) | top_unbooked | hal", " -> 2.0"},
		{"hal | users | Rank", "1 of 2 by busy GPU-hours -> 2 of 2 by busy GPU-hours"}, // ann is busier now
	} {
		if got[want.cell] != want.change {
			t.Errorf("%s: %q, want %q", want.cell, got[want.cell], want.change)
		}
	}
	for cell, change := range got {
		if strings.HasPrefix(cell, "ann |") && strings.Contains(cell, "Rank") {
			t.Errorf("ann is first in her team and the cluster both times, but the diff lists %s: %s", cell, change)
		}
	}
	if ch := DiffWeeks(tr, after, diffWeek(t, true)); len(ch) != 0 {
		t.Errorf("two equal computations differ: %+v", ch)
	}
	if ch := DiffWeeks(tr, nil, after); len(ch) != 0 {
		t.Errorf("a week never frozen lists %d changes, want none (it had shown nothing closed)", len(ch))
	}
}
