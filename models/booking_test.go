package models_test

import (
	"testing"

	"github.com/gpubook/gpubook/models"
)

// TestCheckGPUIDs: the rules every list of GPUs asked for obeys, with the
// first problem named.
func TestCheckGPUIDs(t *testing.T) {
	lim := models.BookingLimits{MaxGPUCount: 3}
	tests := []struct {
		name string
		ids  []int64
		ok   bool
		want string // the message key of gpu_ids, "" when ok
	}{
		{"one", []int64{4}, true, ""},
		{"at the limit", []int64{1, 2, 3}, true, ""},
		{"none", nil, false, "err.gpus_required"},
		{"empty", []int64{}, false, "err.gpus_required"},
		{"over the limit", []int64{1, 2, 3, 4}, false, "err.gpus_too_many"},
		{"zero", []int64{1, 0}, false, "err.gpu_id_invalid"},
		{"negative", []int64{-7}, false, "err.gpu_id_invalid"},
		{"twice", []int64{5, 6, 5}, false, "err.gpu_duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe := models.FieldErrors{}
			ok := models.CheckGPUIDs(tt.ids, lim, fe)
			got := ""
			if m, has := fe["gpu_ids"]; has {
				got = m.Key
			}
			if ok != tt.ok || got != tt.want || len(fe) > 1 {
				t.Errorf("got ok=%v %q (%v), want ok=%v %q", ok, got, fe, tt.ok, tt.want)
			}
		})
	}
}
