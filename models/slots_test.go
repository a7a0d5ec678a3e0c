package models

import (
	"reflect"
	"testing"
	"time"
)

var slotNow = time.Date(2030, 5, 6, 10, 7, 30, 0, time.UTC) // rounds up to 10:30

// slotCluster: node "a" has GPUs 1–4 (A100, GPU 4 out of service), node "b"
// has GPUs 5–6 (A100) and node "c" GPUs 7–8 (H100). Listed out of order on purpose.
func slotCluster() []GPU {
	g := func(id, node int64, name string, idx int, model string, in bool) GPU {
		return GPU{ID: id, NodeID: node, NodeName: name, Index: idx, Model: model, InService: in}
	}
	return []GPU{
		g(7, 3, "c", 0, "H100", true), g(8, 3, "c", 1, "H100", true),
		g(2, 1, "a", 1, "A100", true), g(1, 1, "a", 0, "A100", true), g(3, 1, "a", 2, "A100", true), g(4, 1, "a", 3, "A100", false),
		g(5, 2, "b", 0, "A100", true), g(6, 2, "b", 1, "A100", true),
	}
}

func at(hhmm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", "2030-05-06 "+hhmm)
	if err != nil {
		panic(err)
	}
	return t
}

func busyOn(start, end string, gpus ...int64) Booking {
	return Booking{GPUIDs: gpus, StartsAt: at(start), EndsAt: at(end), Status: StatusConfirmed}
}

func slot(node int64, name, model, start, end string, gpus ...int64) Slot {
	return Slot{NodeID: node, NodeName: name, Model: model, GPUIDs: gpus, StartsAt: at(start), EndsAt: at(end)}
}

func TestFindSlots(t *testing.T) {
	lim := DefaultBookingLimits
	tests := []struct {
		name string
		busy []Booking
		q    SlotQuery
		want []Slot
	}{
		{"empty cluster: one option per node at the next slot, ties by node name", nil,
			SlotQuery{GPUs: 2, Duration: 2 * time.Hour},
			[]Slot{slot(1, "a", "A100", "10:30", "12:30", 1, 2), slot(2, "b", "A100", "10:30", "12:30", 5, 6), slot(3, "c", "H100", "10:30", "12:30", 7, 8)}},
		{"model filter, any case", nil, SlotQuery{GPUs: 1, Duration: time.Hour, Model: "h100"},
			[]Slot{slot(3, "c", "H100", "10:30", "11:30", 7)}},
		{"node filter, any case", nil, SlotQuery{GPUs: 1, Duration: time.Hour, Node: "B"},
			[]Slot{slot(2, "b", "A100", "10:30", "11:30", 5)}},
		{"node and model filters together: node b has no H100", nil, SlotQuery{GPUs: 1, Duration: time.Hour, Node: "b", Model: "H100"}, []Slot{}},
		{"out of service GPUs never count: node a has 3 usable", nil, SlotQuery{GPUs: 4, Duration: time.Hour}, []Slot{}},
		{"never fewer than asked: 3 GPUs only on node a", nil, SlotQuery{GPUs: 3, Duration: time.Hour},
			[]Slot{slot(1, "a", "A100", "10:30", "11:30", 1, 2, 3)}},
		{"busy GPUs are skipped, lowest free indices picked",
			[]Booking{busyOn("09:00", "13:00", 1)}, SlotQuery{GPUs: 2, Duration: time.Hour, Model: "A100"},
			[]Slot{slot(1, "a", "A100", "10:30", "11:30", 2, 3), slot(2, "b", "A100", "10:30", "11:30", 5, 6), slot(1, "a", "A100", "13:00", "14:00", 1, 2)}},
		{"later starts come from busy ends, rounded up to the grid",
			[]Booking{busyOn("10:00", "11:10", 5), busyOn("10:00", "12:00", 6), busyOn("09:00", "14:00", 1, 2, 3), busyOn("10:00", "20:00", 7)},
			SlotQuery{GPUs: 2, Duration: time.Hour, Model: "A100"},
			[]Slot{slot(2, "b", "A100", "12:00", "13:00", 5, 6), slot(1, "a", "A100", "14:00", "15:00", 1, 2)}},
		{"a gap shorter than the duration is no option",
			[]Booking{busyOn("10:00", "11:00", 7), busyOn("12:00", "18:00", 7)}, SlotQuery{GPUs: 1, Duration: 2 * time.Hour, Model: "H100"},
			[]Slot{slot(3, "c", "H100", "10:30", "12:30", 8), slot(3, "c", "H100", "18:00", "20:00", 7)}},
		{"touching ranges are free",
			[]Booking{busyOn("10:00", "10:30", 7, 8)}, SlotQuery{GPUs: 2, Duration: time.Hour, Model: "H100"},
			[]Slot{slot(3, "c", "H100", "10:30", "11:30", 7, 8)}},
		{"cancelled bookings do not block",
			[]Booking{{GPUIDs: []int64{7, 8}, StartsAt: at("10:00"), EndsAt: at("20:00"), Status: StatusCancelled}},
			SlotQuery{GPUs: 2, Duration: time.Hour, Model: "H100"},
			[]Slot{slot(3, "c", "H100", "10:30", "11:30", 7, 8)}},
		{"after moves the start, on the grid", nil, SlotQuery{GPUs: 1, Duration: time.Hour, Model: "H100", After: at("15:10")},
			[]Slot{slot(3, "c", "H100", "15:30", "16:30", 7)}},
		{"after in the past means now", nil, SlotQuery{GPUs: 1, Duration: time.Hour, Model: "H100", After: at("01:00")},
			[]Slot{slot(3, "c", "H100", "10:30", "11:30", 7)}},
		{"at most three options, earliest first",
			[]Booking{busyOn("09:00", "11:00", 5), busyOn("09:00", "12:00", 6), busyOn("09:00", "13:00", 1, 2, 3), busyOn("09:00", "15:00", 8)},
			SlotQuery{GPUs: 1, Duration: time.Hour},
			[]Slot{slot(3, "c", "H100", "10:30", "11:30", 7), slot(2, "b", "A100", "11:00", "12:00", 5), slot(2, "b", "A100", "12:00", "13:00", 5)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FindSlots(slotCluster(), tt.busy, tt.q, lim, slotNow)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestFindSlotsStaysWithinMaxAhead(t *testing.T) {
	lim := DefaultBookingLimits
	lim.MaxAhead = 3 * time.Hour
	busy := []Booking{busyOn("09:00", "14:00", 7, 8)}
	got := FindSlots(slotCluster(), busy, SlotQuery{GPUs: 1, Duration: time.Hour, Model: "H100"}, lim, slotNow)
	if len(got) != 0 {
		t.Errorf("got %+v, want none (the only start is 14:00, beyond 13:07)", got)
	}
}

func TestValidateSlotQuery(t *testing.T) {
	lim := DefaultBookingLimits
	tests := []struct {
		name      string
		q         SlotQuery
		wantModel string
		want      outcome
	}{
		{"fine", SlotQuery{GPUs: 2, Duration: 4 * time.Hour, Model: " a100 "}, "A100", okOutcome},
		{"any model", SlotQuery{GPUs: 64, Duration: 30 * time.Minute}, "", okOutcome},
		{"no GPUs", SlotQuery{GPUs: 0, Duration: time.Hour}, "",
			outcome{Code: EINVALID, Key: "err.invalid", Fields: []string{"gpus=err.slot_gpus_invalid"}}},
		{"too many GPUs", SlotQuery{GPUs: 65, Duration: time.Hour}, "",
			outcome{Code: EINVALID, Key: "err.invalid", Fields: []string{"gpus=err.slot_gpus_invalid"}}},
		{"shorter than a slot", SlotQuery{GPUs: 1, Duration: 29 * time.Minute}, "",
			outcome{Code: EINVALID, Key: "err.invalid", Fields: []string{"hours=err.too_short"}}},
		{"longer than the limit", SlotQuery{GPUs: 1, Duration: lim.MaxLength + time.Second}, "",
			outcome{Code: EINVALID, Key: "err.invalid", Fields: []string{"hours=err.too_long_booking"}}},
		{"unknown node", SlotQuery{GPUs: 1, Duration: time.Hour, Node: "z"}, "",
			outcome{Code: EINVALID, Key: "err.invalid", Fields: []string{"node=err.node_unknown"}}},
		{"unknown model, and after too far", SlotQuery{GPUs: 1, Duration: time.Hour, Model: "V100", After: slotNow.Add(lim.MaxAhead + time.Minute)}, "V100",
			outcome{Code: EINVALID, Key: "err.invalid", Fields: []string{"after=err.start_too_far", "model=err.model_unknown"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ValidateSlotQuery(tt.q, slotCluster(), lim, slotNow)
			if got := outcomeOf(err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if q.Model != tt.wantModel || q.GPUs != tt.q.GPUs || q.Duration != tt.q.Duration || !q.After.Equal(tt.q.After) {
				t.Errorf("query = %+v, want model %q and the rest unchanged", q, tt.wantModel)
			}
		})
	}
}

func TestCeilTo(t *testing.T) {
	tests := []struct{ in, want time.Time }{
		{at("10:00"), at("10:00")},
		{at("10:00").Add(time.Nanosecond), at("10:30")},
		{at("10:29"), at("10:30")},
		{at("10:00").In(time.FixedZone("IST", 5*3600+1800)), at("10:00")},
	}
	for _, tt := range tests {
		t.Run(tt.in.String(), func(t *testing.T) {
			if got := ceilTo(tt.in, 30*time.Minute); !got.Equal(tt.want) || got.Location() != time.UTC {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
