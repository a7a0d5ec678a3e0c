package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestAgentScheduleETag walks one node through every kind of change an
// agent must see and checks that each changes the schedule's ETag, and that
// a call with nothing new (the same time, a minute later, a note edit, a
// booking outside the window, a booking whose owner has no login) keeps it:
// agents poll every 30 s and a kept ETag is a 304.
func TestAgentScheduleETag(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		nodeID, _ := enrolled(t, db, "gpu41", 41, 3)
		node, err := db.Node(ctx, nodeID)
		if err != nil {
			t.Fatal(err)
		}
		gpu := func(i int) []int64 { return []int64{node.GPUs[i].ID} }
		user := func(email string) *models.User {
			u := &models.User{Email: email, Name: email}
			if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			return u
		}
		book := func(u *models.User, gpus []int64, from, to time.Duration) int64 {
			b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: gpus, StartsAt: at0.Add(from), EndsAt: at0.Add(to)},
				models.DefaultBookingLimits, at0, models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			return b.ID
		}
		setUnix := func(u *models.User, name string) {
			if err := db.SetUnixLogin(ctx, u.ID, models.UnixIdentity{Name: name, Source: models.UnixSourceAdmin}, models.CLIActor); err != nil {
				t.Fatal(err)
			}
		}
		ada, bob, carl := user("ada@lab.org"), user("bob@lab.org"), user("carl@lab.org")
		setUnix(carl, "dave") // before dave exists, so the claim is allowed
		dave := user("dave@lab.org")

		// step asks for the schedule at now and checks the bookings the
		// agent gets (id and login) and whether the ETag changed.
		last := ""
		step := func(name string, now time.Duration, changed bool, want ...string) {
			t.Helper()
			s, tag, err := db.AgentSchedule(ctx, nodeID, at0.Add(now))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var got []string
			for _, b := range s.Bookings {
				got = append(got, b.User)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: schedule users = %v, want %v", name, got, want)
			}
			if again, tag2, _ := db.AgentSchedule(ctx, nodeID, at0.Add(now)); tag2 != tag || len(again.Bookings) != len(s.Bookings) {
				t.Errorf("%s: a second call gave ETag %s, first %s", name, tag2, tag)
			}
			if got := tag != last; got != changed {
				t.Errorf("%s: ETag changed = %v, want %v (%s → %s)", name, got, changed, last, tag)
			}
			last = tag
		}

		step("empty", 0, true)
		step("a minute later", time.Minute, false)
		book(bob, gpu(1), 26*time.Hour, 27*time.Hour)
		step("booked outside the window", 0, false)
		b1 := book(ada, gpu(0), time.Hour, 3*time.Hour)
		step("created", 0, true, "ada")
		if _, err := db.UpdateBookingNote(ctx, b1, ada, "training run", models.DefaultBookingLimits, at0); err != nil {
			t.Fatal(err)
		}
		step("note edited", 0, false, "ada")
		if _, err := db.ExtendBooking(ctx, b1, ada, at0.Add(4*time.Hour), models.DefaultBookingLimits, at0); err != nil {
			t.Fatal(err)
		}
		step("extended", 0, true, "ada")
		extended := last
		b2 := book(bob, gpu(1), 2*time.Hour, 3*time.Hour)
		step("second booking", 0, true, "ada", "bob")
		if _, err := db.CancelBooking(ctx, b2, bob, at0); err != nil {
			t.Fatal(err)
		}
		step("cancelled", 0, true, "ada")
		if last != extended {
			t.Errorf("after the cancel the ETag is %s, want %s as before the booking", last, extended)
		}
		setUnix(ada, "ada7")
		step("login changed", 0, true, "ada7")
		book(dave, gpu(2), time.Hour, 2*time.Hour)
		step("owner without a login of their own", 0, false, "ada7")
		setUnix(carl, "carl")
		step("assumed login freed", 0, true, "ada7", "dave")
		step("time passes inside the window", 90*time.Minute, false, "ada7", "dave")
		if _, err := db.ReleaseBooking(ctx, b1, ada, at0.Add(90*time.Minute)); err != nil {
			t.Fatal(err)
		}
		step("released", 90*time.Minute, true, "ada7", "dave")
		step("a booking enters the window", 2*time.Hour+time.Second, true, "ada7", "dave", "bob")
		step("a booking leaves the window", 150*time.Minute+time.Second, true, "dave", "bob")
	})
}

// TestNodeByCredentialLastSeen checks that an agent call writes last_seen_at
// only when it is 75 s old or more (the heartbeat, every minute, keeps it
// newer), and that what it returns carries the stored time.
func TestNodeByCredentialLastSeen(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		nodeID, cred := enrolled(t, db, "gpu42", 42, 1)
		for _, tt := range []struct {
			name string
			at   time.Duration
			want time.Duration // last_seen_at afterwards, from at0
		}{
			{"first call after enrolment", 30 * time.Second, 0},
			{"a minute after enrolment", time.Minute, 0},
			{"74 s after enrolment", 74 * time.Second, 0},
			{"75 s after enrolment", 75 * time.Second, 75 * time.Second},
			{"30 s later", 105 * time.Second, 75 * time.Second},
			{"74 s later", 149 * time.Second, 75 * time.Second},
			{"75 s later", 150 * time.Second, 150 * time.Second},
			{"a clock behind", 0, 150 * time.Second},
		} {
			n, err := db.NodeByCredential(ctx, cred, at0.Add(tt.at))
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			stored, err := db.AgentNode(ctx, nodeID)
			if err != nil {
				t.Fatal(err)
			}
			want := at0.Add(tt.want)
			if n.NodeID != nodeID || n.NodeName != "gpu42" || !n.Enrolled || n.Hostname != "gpu42" ||
				stored.LastSeenAt == nil || !stored.LastSeenAt.Equal(want) {
				t.Errorf("%s: node %+v, stored last seen %v, want %v", tt.name, n, stored.LastSeenAt, want)
			}
		}
	})
}
