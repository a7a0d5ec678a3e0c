package models

import (
	"reflect"
	"testing"
	"time"
)

// TestFindSlotsMIG: node "m" has GPU 20 split into 1g.10gb instances 21–23
// (22 booked until 12:00) and a 3g.40gb instance 24, and a whole GPU 25.
func TestFindSlotsMIG(t *testing.T) {
	lim := DefaultBookingLimits
	gpus := []GPU{{ID: 20, NodeID: 9, NodeName: "m", Index: 0, Model: "A100", InService: true, MIG: true, MIGSlices: 7},
		{ID: 25, NodeID: 9, NodeName: "m", Index: 1, Model: "A100", InService: true}}
	for i, p := range []string{"1g.10gb", "1g.10gb", "1g.10gb", "3g.40gb"} {
		gpus = append(gpus, GPU{ID: int64(21 + i), NodeID: 9, NodeName: "m", Index: 64 + i, Model: "A100", InService: true,
			ParentID: 20, MIGProfile: p, MIGSlices: 1})
	}
	busy := []Booking{busyOn("09:00", "12:00", 22)}
	tests := []struct {
		name string
		q    SlotQuery
		want []Slot
	}{
		{"whole GPUs: neither the split GPU nor a slice", SlotQuery{GPUs: 1, Duration: time.Hour},
			[]Slot{slot(9, "m", "A100", "10:30", "11:30", 25)}},
		{"two whole GPUs: there is one", SlotQuery{GPUs: 2, Duration: time.Hour}, []Slot{}},
		{"slices of a profile, lowest indices, any case", SlotQuery{GPUs: 2, Duration: time.Hour, Profile: "1G.10gb"},
			[]Slot{slot(9, "m", "A100", "10:30", "11:30", 21, 23), slot(9, "m", "A100", "12:00", "13:00", 21, 22)}},
		{"three 1g slices only once the booked one is free", SlotQuery{GPUs: 3, Duration: time.Hour, Profile: "1g.10gb"},
			[]Slot{slot(9, "m", "A100", "12:00", "13:00", 21, 22, 23)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ValidateSlotQuery(tt.q, gpus, lim, slotNow)
			if err != nil {
				t.Fatal(err)
			}
			if got := FindSlots(gpus, busy, q, lim, slotNow); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if _, err := ValidateSlotQuery(SlotQuery{GPUs: 1, Duration: time.Hour, Profile: "2g.20gb"}, gpus, lim, slotNow); AsError(err).Fields["profile"].Key != "err.profile_unknown" {
		t.Errorf("unknown profile: %v", err)
	}
}
