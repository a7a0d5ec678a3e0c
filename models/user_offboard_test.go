package models

import (
	"testing"
	"time"
)

func TestPlanOffboard(t *testing.T) {
	now := time.Date(2026, 6, 3, 10, 0, 0, 0, time.UTC)
	h := func(x int) time.Time { return now.Add(time.Duration(x) * time.Hour) }
	b := func(id int64, from, to int, status string) Booking {
		return Booking{ID: id, StartsAt: h(from), EndsAt: h(to), Status: status}
	}
	in := []Booking{
		b(1, -5, -3, StatusConfirmed), // ended: history, kept
		b(2, -1, 2, StatusConfirmed),  // running: ends now
		b(3, 3, 5, StatusConfirmed),   // future: cancelled
		b(4, 3, 5, StatusCancelled),   // cancelled already
		b(5, 0, 1, StatusConfirmed),   // starts now: cancelled, nothing used
		b(6, -2, 0, StatusConfirmed),  // ends now: kept
	}
	got := PlanOffboard(in, now)
	ids := func(bs []Booking) []int64 {
		out := []int64{}
		for _, x := range bs {
			out = append(out, x.ID)
		}
		return out
	}
	for _, c := range []struct {
		name      string
		got, want []int64
	}{{"cancel", ids(got.Cancel), []int64{3, 5}}, {"end", ids(got.End), []int64{2}}} {
		if len(c.got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
			continue
		}
		for i := range c.got {
			if c.got[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
			}
		}
	}
}

func TestRenameEmail(t *testing.T) {
	u := &User{ID: 1, Email: "bob@example.org"}
	for _, c := range []struct {
		name, in, want, field string
	}{
		{"new address, normalised", " Bob@New.Example.org ", "bob@new.example.org", ""},
		{"empty", "", "", "err.email_required"},
		{"not an address", "bob", "bob", "err.email_invalid"},
		{"same address", "BOB@example.org", "bob@example.org", "admin.err.same_email"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := RenameEmail(u, c.in)
			if got != c.want {
				t.Errorf("email %q, want %q", got, c.want)
			}
			if key := AsError(err).Fields["email"].Key; key != c.field {
				t.Errorf("field error %q, want %q", key, c.field)
			}
		})
	}
}

func TestCheckDisable(t *testing.T) {
	a, b := &User{ID: 1}, &User{ID: 2}
	if err := CheckDisable(b, a); err != nil {
		t.Errorf("another user: %v", err)
	}
	if err := CheckDisable(a, a); ErrorCode(err) != EINVALID {
		t.Errorf("oneself: %v, want EINVALID", err)
	}
}

// TestUserUpdateSentence: a time-zone or language click is not "changed
// the name or email"; events from before "changed" was recorded still are.
func TestUserUpdateSentence(t *testing.T) {
	for _, c := range []struct {
		name, details, want string
	}{
		{"zone click", `{"changed":["time_zone"]}`, "audit.s.user_prefs"},
		{"language and zone", `{"changed":["language","time_zone"]}`, "audit.s.user_prefs"},
		{"name", `{"changed":["name","time_zone"]}`, "audit.s.user_update"},
		{"subject", `{"changed":["sso_subject"]}`, "audit.s.user_update"},
		{"old event", `{"email":"a@b"}`, "audit.s.user_update"},
		{"rename", `{"from":"a@b","email":"c@d"}`, "audit.s.user_rename"},
	} {
		t.Run(c.name, func(t *testing.T) {
			action := AuditUserUpdate
			if c.name == "rename" {
				action = AuditUserRename
			}
			got := DescribeAudit(AuditEvent{Action: action, TargetType: "user", TargetID: "3", Details: c.details})
			if got.Key != c.want {
				t.Errorf("key %q, want %q", got.Key, c.want)
			}
		})
	}
}
