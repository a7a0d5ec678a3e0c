package models

import (
	"encoding/json"
	"time"
)

// What the fair-share usage charges (docs/reports.md, "Fair share"). A
// booked GPU-hour in which the booker worked costs 1; an hour used without
// a booking costs UnbookedWeight; a booked hour left idle, and an hour
// cancelled too late for anyone else to book it, cost IdleWeight, which is
// at least UnbookedWeight: a card booked and left idle kept everyone off
// it, while unbooked use at least did work on a card nobody held. For the
// same GPU work this orders the charges (TestChargeOrder): booking exactly
// < using unbooked < booking generously and leaving much of it idle <
// never showing up.

// DefaultIdleWeight is IdleWeight unless set: above the default unbooked
// weight (1.5), so that a no-show costs more than the same hours used
// without a booking, not only as much.
const DefaultIdleWeight = 2.0

// DefaultNoShowPct: a booking busy for under a tenth of its GPU-time is a
// no-show; one busy minute no longer clears a day-long booking.
const DefaultNoShowPct = 10.0

// DefaultLateCancel: the hours of a booking cancelled less than two hours
// before they start are charged as booked-idle.
const DefaultLateCancel = 2 * time.Hour

// LegacyIdleWeight is the idle weight of a week frozen before the idle
// weight existed: then every booked hour cost 1, used or not, so reading
// its snapshot with 1 shows the factor that was sent.
const LegacyIdleWeight = 1.0

// chargeOrDefault fills the unset charge rules: the idle weight with the
// larger of DefaultIdleWeight and the unbooked weight (never below it),
// the no-show share with DefaultNoShowPct, the late-cancel lead with
// DefaultLateCancel (a negative lead turns late cancellations off).
func (r ReportRules) chargeOrDefault() ReportRules {
	if r.IdleWeight <= 0 {
		r.IdleWeight = max(DefaultIdleWeight, r.UnbookedWeight)
	}
	if r.NoShowPct <= 0 {
		r.NoShowPct = DefaultNoShowPct
	}
	if r.LateCancel == 0 {
		r.LateCancel = DefaultLateCancel
	}
	return r
}

// LateCancelLead is the lead under which cancelled hours are charged; 0
// when late cancellations are off.
func (r ReportRules) LateCancelLead() time.Duration {
	r = r.OrDefault()
	if r.LateCancel < 0 {
		return 0
	}
	return r.LateCancel
}

// UnmarshalJSON reads the rules of a frozen week. A week frozen before the
// idle weight existed has none in its snapshot; it was charged with every
// booked hour at 1, so it is read with LegacyIdleWeight, not the default,
// and its factor stays what was sent.
func (r *ReportRules) UnmarshalJSON(b []byte) error {
	type plain ReportRules
	p := plain{IdleWeight: LegacyIdleWeight}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = ReportRules(p)
	return nil
}

// LateCancelHours is the GPU-hours of the user's bookings cancelled less
// than the rules' lead before they would have started.
func (f Figures) LateCancelHours() float64 { return float64(f.LateCancelSec) / 3600 }

// ChargedHours is what the fair-share usage counts of these figures: the
// busy booked GPU-hours at 1, the idle booked hours and the hours
// cancelled late at the idle weight, the unbooked hours at the unbooked
// weight.
func (f Figures) ChargedHours(r ReportRules) float64 {
	r = r.OrDefault()
	return f.BusyHours() + r.IdleWeight*(f.IdleHours()+f.LateCancelHours()) + r.UnbookedWeight*f.UnbookedHours()
}

// IsNoShow tells a no-show from its booker's busy GPU-minutes and its
// GPU-seconds: busy for under NoShowPct of its time. The store asks the
// same in SQL (report_sql.go); this is the rule in words and tested.
func (r ReportRules) IsNoShow(busyMin, bookedSec int64) bool {
	return float64(busyMin*60)*100 < r.OrDefault().NoShowPct*float64(bookedSec)
}
