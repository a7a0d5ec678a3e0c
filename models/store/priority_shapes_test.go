package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// shapeSpans are where the bookings in the way lie, in hours from the
// shape's clock, against a request from 1 h to 4 h: running around it,
// inside it, from before it to inside it, and from inside it to after it.
var shapeSpans = []struct {
	name       string
	start, end float64
}{{"running around", -1, 6}, {"inside", 1.5, 3}, {"over its start", 0.5, 2}, {"over its end", 2, 8}}

// TestPreemptShapesLoseWhatThePreviewSays approves, on both databases, a
// request of every size from 1 to 8 GPUs against bookings of every size
// from 1 to 8 GPUs in its way, where moves are possible and where they are
// not, owned by someone whose bookings are all or nothing and someone
// whose are not, and compares what the lead was shown with what the
// approval did: the owner's bookings afterwards are exactly the plan's
// kept parts, the GPU-time they lost equals the preview's total, and that
// total never exceeds the request's hours × GPUs unless a row is marked
// all or nothing (which the preview names).
func TestPreemptShapesLoseWhatThePreviewSays(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		requester, node := fixture(t, db, 10) // GPUs 0–7 in the way, 8 and 9 to move to
		victim, blocker := &models.User{Email: "bob@example.org", Name: "Bob"}, &models.User{Email: "cy@example.org", Name: "Cy"}
		admin := &models.User{Email: "root@example.org", Name: "Root", IsAdmin: true}
		wholeVictim := &models.User{Email: "wu@example.org", Name: "Wu"} // in a team whose bookings are all or nothing
		for _, u := range []*models.User{victim, blocker, admin, wholeVictim} {
			if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
				t.Fatal(err)
			}
		}
		team := &models.Team{Name: "dist"}
		if err := db.CreateTeam(ctx, team, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if err := db.SetMembership(ctx, &models.Membership{TeamID: team.ID, UserID: wholeVictim.ID, Role: models.RoleMember}, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if err := db.SetTeamWholeBookings(ctx, team.ID, true, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		gpus := func(from, n int) []int64 {
			var out []int64
			for i := from; i < from+n; i++ {
				out = append(out, node.GPUs[i].ID)
			}
			return out
		}
		day := 0
		for need := 1; need <= 8; need++ {
			for size := 1; size <= 8; size++ {
				for _, movable := range []bool{false, true} {
					for _, sp := range shapeSpans {
						for _, owner := range []*models.User{victim, wholeVictim} {
							now := changeClock.Add(time.Duration(day) * 24 * time.Hour)
							day++
							at := func(h float64) time.Time { return now.Add(time.Duration(h * float64(time.Hour))) }
							book := func(u *models.User, ids []int64, s, e float64) {
								if _, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: ids, StartsAt: at(s), EndsAt: at(e), Note: "n"},
									models.DefaultBookingLimits, at(-2), models.ActorFor(u, "")); err != nil {
									t.Fatalf("book: %v", err)
								}
							}
							for first := 0; first < need; first += size {
								book(owner, gpus(first, min(size, 8-first)), sp.start, sp.end)
							}
							if !movable {
								book(blocker, gpus(8, 2), -2, 10)
							}
							name := fmt.Sprintf("request of %d GPUs, bookings of %d, %s, movable %v, owner %s", need, size, sp.name, movable, owner.Name)
							r := &models.PriorityRequest{UserID: requester.ID, GPUIDs: gpus(0, need), StartsAt: at(1), EndsAt: at(4),
								Purpose: "paper", Urgency: "deadline", Plan: "train", GiveBack: "Friday", Preempt: true}
							if err := db.CreateRequest(ctx, r, models.DefaultBookingLimits, now, models.ActorFor(requester, ""), nil); err != nil {
								t.Fatalf("%s: request: %v", name, err)
							}
							checkShapeApplied(t, db, name, r, owner.ID, at(-3), at(11), now, admin)
						}
					}
				}
			}
		}
	})
}

// checkShapeApplied previews r, approves the plan shown and compares.
func checkShapeApplied(t *testing.T, db *store.DB, name string, r *models.PriorityRequest, owner int64, from, to, now time.Time, admin *models.User) {
	t.Helper()
	held := func() ([]string, int64) {
		bs, err := db.Bookings(ctx, models.BookingFilter{From: from, To: to, UserID: owner})
		if err != nil {
			t.Fatal(err)
		}
		var rects []string
		var sec int64
		for _, b := range bs {
			if b.Status == models.StatusConfirmed {
				rects = append(rects, fmt.Sprintf("%d-%d%v", b.StartsAt.Unix(), b.EndsAt.Unix(), b.GPUIDs))
				sec += int64(b.EndsAt.Sub(b.StartsAt)/time.Second) * int64(len(b.GPUIDs))
			}
		}
		slices.Sort(rects)
		return rects, sec
	}
	_, before := held()
	plan, err := db.PreemptionPlan(ctx, r.ID, now)
	if err != nil {
		t.Fatalf("%s: plan: %v", name, err)
	}
	var want []string
	for _, p := range plan {
		for _, k := range p.Keep {
			want = append(want, fmt.Sprintf("%d-%d%v", k.Start.Unix(), k.End.Unix(), k.GPUIDs))
		}
	}
	slices.Sort(want)
	if _, err := db.ApproveRequest(ctx, r.ID, admin, "ok", models.PlanFingerprint(r.ID, plan), now, nil); err != nil {
		t.Fatalf("%s: approve: %v", name, err)
	}
	got, after := held()
	shown, most := models.LostGPUSeconds(plan), int64(r.EndsAt.Sub(r.StartsAt)/time.Second)*int64(len(r.GPUIDs))
	named := slices.ContainsFunc(plan, func(p models.Preemption) bool { return p.Whole })
	if applied := before - after; applied != shown || shown > most && !named {
		t.Errorf("%s: preview total %s GPU-h, applied %s, request %s", name,
			models.FormatGPUHours(shown), models.FormatGPUHours(applied), models.FormatGPUHours(most))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: the owner holds %v, the plan kept %v", name, got, want)
	}
}
