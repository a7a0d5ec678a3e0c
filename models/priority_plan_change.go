package models

import (
	"slices"
	"strconv"
	"strings"
)

// PlanShown writes the plan a decider is shown compactly ("id:action:lost"
// per booking), for the approve form to carry back: when the calendar
// changed before the approval, PlanChanges can then say what changed
// instead of only that something did.
func PlanShown(plan []Preemption) string {
	parts := make([]string, len(plan))
	for i, p := range plan {
		parts[i] = strconv.FormatInt(p.Booking.ID, 10) + ":" + p.Action + ":" + strconv.FormatInt(p.LostGPUSeconds, 10)
	}
	return strings.Join(parts, ",")
}

// shownStep is one booking of a shown plan, as PlanShown wrote it.
type shownStep struct {
	action string
	lost   int64
}

// parseShown reads PlanShown's text; what it cannot read (a form made by
// hand) it leaves out, so that the booking reads as new in the way.
func parseShown(s string) map[int64]shownStep {
	out := map[int64]shownStep{}
	for _, part := range strings.Split(s, ",") {
		f := strings.Split(part, ":")
		if len(f) != 3 {
			continue
		}
		id, err1 := strconv.ParseInt(f[0], 10, 64)
		lost, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || id <= 0 {
			continue
		}
		out[id] = shownStep{action: f[1], lost: lost}
	}
	return out
}

// PlanChanges says, booking by booking, how the plan now differs from the
// one the decider was shown (PlanShown): a booking newly in the way, one
// no longer in the way, one that gives way differently or loses another
// amount. Bookings in the order of the new plan, then those gone by id.
// Action and Was are GiveWay* values, for the view to name.
func PlanChanges(shown string, now []Preemption) []Msg {
	was := parseShown(shown)
	var out []Msg
	for _, p := range now {
		b := p.Booking
		w, ok := was[b.ID]
		delete(was, b.ID)
		switch {
		case !ok:
			out = append(out, M("request.changed.new", "ID", b.ID, "Name", b.UserName, "Action", p.Action, "Hours", FormatGPUHours(p.LostGPUSeconds)))
		case w.action != p.Action || w.lost != p.LostGPUSeconds:
			out = append(out, M("request.changed.other", "ID", b.ID, "Name", b.UserName, "Was", w.action,
				"WasHours", FormatGPUHours(w.lost), "Action", p.Action, "Hours", FormatGPUHours(p.LostGPUSeconds)))
		}
	}
	gone := make([]int64, 0, len(was))
	for id := range was {
		gone = append(gone, id)
	}
	slices.Sort(gone)
	for _, id := range gone {
		out = append(out, M("request.changed.gone", "ID", id))
	}
	return out
}
