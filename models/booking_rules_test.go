package models

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

var (
	ruleNow   = time.Date(2030, 5, 6, 10, 0, 0, 0, time.UTC)
	owner     = &User{ID: 1, Name: "Ada"}
	stranger  = &User{ID: 2, Name: "Bob"}
	adminUser = &User{ID: 3, Name: "Root", IsAdmin: true}
)

// ruleBooking is a booking of owner from start to end hours after ruleNow.
func ruleBooking(start, end float64, status string) *Booking {
	h := func(x float64) time.Time { return ruleNow.Add(time.Duration(x * float64(time.Hour))) }
	return &Booking{ID: 9, UserID: owner.ID, GPUIDs: []int64{4, 5}, StartsAt: h(start), EndsAt: h(end), Status: status}
}

// outcome is what a rule said, flattened so that a table row asserts all of it.
type outcome struct {
	Code   string
	Key    string
	Fields []string
}

func outcomeOf(err error) outcome {
	if err == nil {
		return outcome{}
	}
	e := AsError(err)
	o := outcome{Code: e.Code, Key: e.Msg.Key}
	for _, k := range sortedKeys(e.Fields) {
		o.Fields = append(o.Fields, k+"="+e.Fields[k].Key)
	}
	return o
}

var (
	okOutcome    = outcome{}
	notYours     = outcome{Code: EFORBIDDEN, Key: "err.booking_not_yours"}
	pastOutcome  = outcome{Code: EINVALID, Key: "err.booking_past"}
	cancelledOut = outcome{Code: EINVALID, Key: "err.booking_cancelled"}
)

func TestCheckCancel(t *testing.T) {
	tests := []struct {
		name  string
		b     *Booking
		actor *User
		want  outcome
	}{
		{"owner, upcoming", ruleBooking(1, 2, StatusConfirmed), owner, okOutcome},
		{"admin, someone else's", ruleBooking(1, 2, StatusConfirmed), adminUser, okOutcome},
		{"stranger", ruleBooking(1, 2, StatusConfirmed), stranger, notYours},
		{"anonymous", ruleBooking(1, 2, StatusConfirmed), nil, notYours},
		{"active: release instead", ruleBooking(-1, 2, StatusConfirmed), owner, outcome{Code: EINVALID, Key: "err.booking_started_release"}},
		{"starts exactly now counts as started", ruleBooking(0, 2, StatusConfirmed), owner, outcome{Code: EINVALID, Key: "err.booking_started_release"}},
		{"past", ruleBooking(-3, -1, StatusConfirmed), owner, pastOutcome},
		{"already cancelled", ruleBooking(1, 2, StatusCancelled), owner, cancelledOut},
		{"stranger on a past booking is still forbidden", ruleBooking(-3, -1, StatusConfirmed), stranger, notYours},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := outcomeOf(CheckCancel(tt.b, tt.actor, ruleNow)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCheckRelease(t *testing.T) {
	notStarted := outcome{Code: EINVALID, Key: "err.booking_not_started_cancel"}
	tests := []struct {
		name    string
		b       *Booking
		actor   *User
		now     time.Time
		want    outcome
		wantEnd time.Time
	}{
		{"owner, active", ruleBooking(-1, 2, StatusConfirmed), owner, ruleNow, okOutcome, ruleNow},
		{"admin, active", ruleBooking(-1, 2, StatusConfirmed), adminUser, ruleNow, okOutcome, ruleNow},
		{"stranger", ruleBooking(-1, 2, StatusConfirmed), stranger, ruleNow, notYours, ruleNow},
		{"upcoming: cancel instead", ruleBooking(1, 2, StatusConfirmed), owner, ruleNow, notStarted, ruleNow.Add(time.Hour)},
		{"at its very start: cancel instead", ruleBooking(0, 2, StatusConfirmed), owner, ruleNow, notStarted, ruleNow},
		{"half a second in: the whole range is freed", ruleBooking(0, 2, StatusConfirmed), owner, ruleNow.Add(500 * time.Millisecond), okOutcome, ruleNow},
		{"fractions of a second are dropped", ruleBooking(-1, 2, StatusConfirmed), owner, ruleNow.Add(1700 * time.Millisecond), okOutcome, ruleNow.Add(time.Second)},
		{"past", ruleBooking(-3, -1, StatusConfirmed), owner, ruleNow, pastOutcome, ruleNow},
		{"at its end it is past", ruleBooking(-3, 0, StatusConfirmed), owner, ruleNow, pastOutcome, ruleNow},
		{"cancelled", ruleBooking(-1, 2, StatusCancelled), owner, ruleNow, cancelledOut, ruleNow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := outcomeOf(CheckRelease(tt.b, tt.actor, tt.now)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			got, whole := ReleaseEnd(tt.b, tt.now)
			if !got.Equal(tt.wantEnd) || whole != !got.After(tt.b.StartsAt) {
				t.Errorf("ReleaseEnd = %v, %v; want %v", got, whole, tt.wantEnd)
			}
		})
	}
}

func TestCheckExtend(t *testing.T) {
	lim := DefaultBookingLimits
	at := func(h float64) time.Time { return ruleNow.Add(time.Duration(h * float64(time.Hour))) }
	tests := []struct {
		name    string
		b       *Booking
		actor   *User
		newEnd  time.Time
		want    outcome
		wantEnd time.Time
	}{
		{"active, later", ruleBooking(-1, 2, StatusConfirmed), owner, at(4), okOutcome, at(4)},
		{"upcoming, later", ruleBooking(1, 2, StatusConfirmed), owner, at(3), okOutcome, at(3)},
		{"admin", ruleBooking(1, 2, StatusConfirmed), adminUser, at(3), okOutcome, at(3)},
		{"zone and fractions normalised", ruleBooking(1, 2, StatusConfirmed), owner,
			at(3).In(time.FixedZone("CST", 8*3600)).Add(400 * time.Millisecond), okOutcome, at(3)},
		{"stranger", ruleBooking(1, 2, StatusConfirmed), stranger, at(3), notYours, time.Time{}},
		{"not later", ruleBooking(1, 2, StatusConfirmed), owner, at(2),
			outcome{Code: EINVALID, Key: "err.invalid", Fields: []string{"ends_at=err.extend_not_later"}}, time.Time{}},
		{"earlier", ruleBooking(1, 2, StatusConfirmed), owner, at(1.5),
			outcome{Code: EINVALID, Key: "err.invalid", Fields: []string{"ends_at=err.extend_not_later"}}, time.Time{}},
		{"missing", ruleBooking(1, 2, StatusConfirmed), owner, time.Time{},
			outcome{Code: EINVALID, Key: "err.invalid", Fields: []string{"ends_at=err.end_required"}}, time.Time{}},
		{"longer than the limit", ruleBooking(-1, 2, StatusConfirmed), owner, at(-1).Add(lim.MaxLength + time.Second),
			outcome{Code: EINVALID, Key: "err.invalid", Fields: []string{"ends_at=err.too_long_booking"}}, time.Time{}},
		{"exactly the limit", ruleBooking(-1, 2, StatusConfirmed), owner, at(-1).Add(lim.MaxLength), okOutcome, at(-1).Add(lim.MaxLength)},
		{"past", ruleBooking(-3, -1, StatusConfirmed), owner, at(3), pastOutcome, time.Time{}},
		{"cancelled", ruleBooking(1, 2, StatusCancelled), owner, at(3), cancelledOut, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			end, err := CheckExtend(tt.b, tt.actor, tt.newEnd, lim, ruleNow)
			if got := outcomeOf(err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if !end.Equal(tt.wantEnd) || end.Location() != time.UTC {
				t.Errorf("end = %v, want %v (UTC)", end, tt.wantEnd)
			}
		})
	}
}

func TestCheckNote(t *testing.T) {
	lim := DefaultBookingLimits
	long := strings.Repeat("界", lim.MaxNoteLen+1)
	tests := []struct {
		name, note, wantNote string
		b                    *Booking
		actor                *User
		want                 outcome
	}{
		{"upcoming, trimmed", "  run 7\n", "run 7", ruleBooking(1, 2, StatusConfirmed), owner, okOutcome},
		{"active", "still running", "still running", ruleBooking(-1, 2, StatusConfirmed), owner, okOutcome},
		{"empty is allowed", "   ", "", ruleBooking(1, 2, StatusConfirmed), owner, okOutcome},
		{"exactly the limit in characters", long[len("界"):], long[len("界"):], ruleBooking(1, 2, StatusConfirmed), owner, okOutcome},
		{"too long", long, "", ruleBooking(1, 2, StatusConfirmed), owner,
			outcome{Code: EINVALID, Key: "err.invalid", Fields: []string{"note=err.too_long"}}},
		{"not UTF-8", "bad \xff", "", ruleBooking(1, 2, StatusConfirmed), owner,
			outcome{Code: EINVALID, Key: "err.invalid", Fields: []string{"note=err.text_invalid"}}},
		{"admin", "x", "x", ruleBooking(1, 2, StatusConfirmed), adminUser, okOutcome},
		{"stranger", "x", "", ruleBooking(1, 2, StatusConfirmed), stranger, notYours},
		{"past is read-only", "x", "", ruleBooking(-3, -1, StatusConfirmed), owner, pastOutcome},
		{"cancelled is read-only", "x", "", ruleBooking(1, 2, StatusCancelled), owner, cancelledOut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			note, err := CheckNote(tt.b, tt.actor, tt.note, lim, ruleNow)
			if got := outcomeOf(err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if note != tt.wantNote {
				t.Errorf("note = %q, want %q", note, tt.wantNote)
			}
		})
	}
}

func TestExtendConflictError(t *testing.T) {
	b := ruleBooking(1, 2, StatusConfirmed)
	at := func(h float64) time.Time { return ruleNow.Add(time.Duration(h * float64(time.Hour))) }
	tests := []struct {
		name      string
		conflicts []Conflict
		wantKey   string
		wantFree  time.Time
	}{
		{"free for a while", []Conflict{{GPUID: 5, StartsAt: at(4.5), EndsAt: at(6)}, {GPUID: 4, StartsAt: at(3), EndsAt: at(5)}}, "err.extend_conflict", at(3)},
		{"booked right after", []Conflict{{GPUID: 4, StartsAt: at(2), EndsAt: at(5)}}, "err.extend_blocked", at(2)},
		{"no conflicts reads as blocked at the end", nil, "err.extend_blocked", at(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ExtendConflictError(b, tt.conflicts)
			free, _ := e.Msg.Data["FreeUntil"].(time.Time)
			if e.Code != ECONFLICT || e.Msg.Key != tt.wantKey || !free.Equal(tt.wantFree) || !reflect.DeepEqual(e.Conflicts, tt.conflicts) {
				t.Errorf("got %s %s free %v conflicts %v, want %s free %v", e.Code, e.Msg.Key, free, e.Conflicts, tt.wantKey, tt.wantFree)
			}
		})
	}
}
