package models

import (
	"reflect"
	"testing"
)

func TestPlanChanges(t *testing.T) {
	step := func(id int64, name, action string, lost int64) Preemption {
		return Preemption{Booking: Booking{ID: id, UserName: name}, Action: action, LostGPUSeconds: lost}
	}
	shown := []Preemption{step(1, "Ada", GiveWayMove, 0), step(2, "Bob", GiveWaySplit, 7200), step(3, "Cy", GiveWayCancel, 3600)}
	for _, c := range []struct {
		name  string
		shown string
		now   []Preemption
		want  []Msg
	}{
		{"unchanged", PlanShown(shown), shown, nil},
		{"a booking newly in the way", PlanShown(shown[:2]), shown,
			[]Msg{M("request.changed.new", "ID", int64(3), "Name", "Cy", "Action", GiveWayCancel, "Hours", "1")}},
		{"a booking gone", PlanShown(shown), shown[1:],
			[]Msg{M("request.changed.gone", "ID", int64(1))}},
		{"a move became a cancel", PlanShown(shown[:1]), []Preemption{step(1, "Ada", GiveWayCancel, 5400)},
			[]Msg{M("request.changed.other", "ID", int64(1), "Name", "Ada", "Was", GiveWayMove, "WasHours", "0", "Action", GiveWayCancel, "Hours", "1.5")}},
		{"nothing shown (a form without it)", "", shown[:1],
			[]Msg{M("request.changed.new", "ID", int64(1), "Name", "Ada", "Action", GiveWayMove, "Hours", "0")}},
		{"garbage is ignored", "x:y,4:move", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := PlanChanges(c.shown, c.now)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("PlanChanges(%q) =\n%+v\nwant\n%+v", c.shown, got, c.want)
			}
		})
	}
}

func TestPlanShown(t *testing.T) {
	got := PlanShown([]Preemption{{Booking: Booking{ID: 7}, Action: GiveWaySplit, LostGPUSeconds: 60}, {Booking: Booking{ID: 9}, Action: GiveWayMove}})
	if want := "7:split:60,9:move:0"; got != want {
		t.Errorf("PlanShown = %q, want %q", got, want)
	}
}
