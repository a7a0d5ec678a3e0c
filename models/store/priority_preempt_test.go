package store_test

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// checkApplied reads back every booking of plan and compares it with what
// the plan said would happen to it: the plan and the applied result equal.
func checkApplied(t *testing.T, db *store.DB, plan []models.Preemption) {
	t.Helper()
	for _, p := range plan {
		b, err := db.Booking(ctx, p.Booking.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.Action == models.GiveWayCancel {
			if b.Status != models.StatusCancelled {
				t.Errorf("booking %d: %s, planned cancelled", b.ID, b.Status)
			}
			continue
		}
		if b.Status != models.StatusConfirmed || !slices.Equal(b.GPUIDs, p.GPUIDs) || !b.StartsAt.Equal(p.Keep[0].Start) || !b.EndsAt.Equal(p.Keep[0].End) {
			t.Errorf("booking %d = %v %v–%v %s, planned %s %v %v", b.ID, b.GPUIDs, b.StartsAt, b.EndsAt, b.Status, p.Action, p.GPUIDs, p.Keep[0])
		}
		for _, part := range p.Keep[1:] {
			bs, err := db.Bookings(ctx, models.BookingFilter{From: part.Start, To: part.End, UserID: b.UserID})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, x := range bs {
				found = found || (x.ID != b.ID && x.StartsAt.Equal(part.Start) && x.EndsAt.Equal(part.End) &&
					slices.Equal(x.GPUIDs, p.GPUIDs) && x.Kind == models.KindStandard && x.Note == b.Note)
			}
			if !found {
				t.Errorf("booking %d: no part %v–%v after the split (have %+v)", b.ID, part.Start, part.End, bs)
			}
		}
	}
}

// TestPreemptAppliesThePlan: one approval moves, splits, trims a running
// booking and cancels, exactly as the preview said, tells each owner what
// happened, and audits it.
func TestPreemptAppliesThePlan(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		moved := f.book(t, f.admin, []int{0}, 1, 9)      // another team's, not started: moves to GPU 3
		running := f.book(t, f.other, []int{1}, -1, 2.5) // running: keeps −1–2
		inside := f.book(t, f.other, []int{1}, 3, 5)     // within, no GPU left: cancelled
		after := f.book(t, f.other, []int{1}, 5.5, 7)    // keeps 6–7
		f.book(t, f.admin, []int{2}, 0, 30)              // GPU 2 is not free
		r := f.request(t, f.owner, []int{0, 1}, 2, 6, true)
		plan, err := db.PreemptionPlan(ctx, r.ID, changeClock)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]string{}
		var lost int64
		for _, p := range plan {
			got[p.Booking.ID] = p.Action + " " + p.LostGPUHours()
			lost += p.LostGPUSeconds
		}
		want := map[int64]string{moved.ID: "move 0", running.ID: "split 0.5", inside.ID: "cancel 2", after.ID: "split 0.5"}
		if len(got) != len(want) {
			t.Fatalf("plan = %v, want %v", got, want)
		}
		for id, w := range want {
			if got[id] != w {
				t.Errorf("booking %d: %q, want %q", id, got[id], w)
			}
		}
		if plan[0].OwnerTeams != "" || plan[1].OwnerTeams != "vision" {
			t.Errorf("owner teams = %q, %q", plan[0].OwnerTeams, plan[1].OwnerTeams)
		}
		var sent []models.Notice
		mail := func(n models.Notice, to *models.User) (models.OutboxMessage, error) {
			sent = append(sent, n)
			return models.OutboxMessage{Kind: n.Kind, ToEmail: to.Email, Subject: "s", TextBody: "t"}, nil
		}
		if _, err := db.ApproveRequest(ctx, r.ID, f.lead, "", models.PlanFingerprint(r.ID, plan), changeClock, mail); err != nil {
			t.Fatalf("approve: %v", err)
		}
		checkApplied(t, db, plan)
		if b, _ := db.Booking(ctx, moved.ID); !slices.Equal(b.GPUIDs, []int64{f.node.GPUs[3].ID}) {
			t.Errorf("moved booking on %v", b.GPUIDs)
		}
		actions := map[string]int{}
		for _, n := range sent {
			if n.Kind == models.NoticePreempted {
				actions[n.Preemption.Action]++
			}
		}
		if actions[models.GiveWayMove] != 1 || actions[models.GiveWaySplit] != 2 || actions[models.GiveWayCancel] != 1 {
			t.Errorf("pre-emption notices = %v", actions)
		}
		ev := lastAudit(t, db, models.AuditRequestApprove)
		if !strings.Contains(ev.Details, `"action":"move"`) || !strings.Contains(ev.Details, `"lost_gpu_seconds":7200`) {
			t.Errorf("approve audit = %s", ev.Details)
		}
	})
}

// TestPreemptRefusesAChangedPlan: a booking made after the preview changes
// the plan; the approval with the old fingerprint is refused and changes
// nothing, and the new preview can be approved.
func TestPreemptRefusesAChangedPlan(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		f.book(t, f.admin, []int{2, 3}, 0, 30) // nothing can move
		first := f.book(t, f.other, []int{0}, 1, 4)
		r := f.request(t, f.owner, []int{0, 1}, 2, 6, true)
		seen, err := db.PreemptionPlan(ctx, r.ID, changeClock)
		if err != nil || len(seen) != 1 {
			t.Fatalf("preview = %+v, %v", seen, err)
		}
		later := f.book(t, f.other, []int{1}, 3, 8) // while the lead reads
		_, err = db.ApproveRequest(ctx, r.ID, f.lead, "", models.PlanFingerprint(r.ID, seen), changeClock, nil)
		wantCode(t, err, models.ECONFLICT)
		if e := models.AsError(err); e.Msg.Key != "request.err.plan_changed" {
			t.Errorf("refusal = %v", err)
		}
		if got, _ := db.Request(ctx, r.ID); got.Status != models.RequestPending || got.BookingID != nil {
			t.Fatalf("request after refusal = %+v", got)
		}
		for _, b := range []*models.Booking{first, later} {
			if got, _ := db.Booking(ctx, b.ID); !got.StartsAt.Equal(b.StartsAt) || !got.EndsAt.Equal(b.EndsAt) || got.Status != models.StatusConfirmed {
				t.Errorf("booking %d changed by a refused approval: %+v", b.ID, got)
			}
		}
		now, err := db.PreemptionPlan(ctx, r.ID, changeClock)
		if err != nil || len(now) != 2 {
			t.Fatalf("second preview = %+v, %v", now, err)
		}
		if _, err := db.ApproveRequest(ctx, r.ID, f.lead, "", models.PlanFingerprint(r.ID, now), changeClock, nil); err != nil {
			t.Fatalf("approve the reviewed plan: %v", err)
		}
		checkApplied(t, db, now)
	})
}

// TestPreemptDemoStories replays the two stories of the issue: a 3-hour
// request never costs anyone more than 3 h × its GPUs, and nothing when a
// GPU is free to move to.
func TestPreemptDemoStories(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		blockOut bool       // GPUs 2 and 3 busy: nothing can move
		in       [2]float64 // the other team's booking on GPU 1
		wantLost int64      // GPU-seconds
	}{
		{"48-hour booking overlapped by 2 hours, nowhere to move", true, [2]float64{4, 52}, 2 * 3600},
		{"a booking around the request, nowhere to move", true, [2]float64{1, 25.5}, 3 * 3600},
		{"48-hour booking overlapped by 2 hours, a free GPU", false, [2]float64{4, 52}, 0},
		{"a booking around the request, a free GPU", false, [2]float64{1, 25.5}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				f := newPrioFixture(t, db)
				if tt.blockOut {
					f.book(t, f.lead2, []int{2, 3}, 0, 60)
				}
				theirs := f.book(t, f.admin, []int{1}, tt.in[0], tt.in[1])
				r := f.request(t, f.owner, []int{0, 1}, 3, 6, true)
				plan, err := db.PreemptionPlan(ctx, r.ID, changeClock)
				if err != nil {
					t.Fatal(err)
				}
				if lost := models.LostGPUSeconds(plan); lost != tt.wantLost || lost > 3*3600*int64(len(r.GPUIDs)) {
					t.Fatalf("plan loses %d GPU-seconds, want %d: %+v", lost, tt.wantLost, plan)
				}
				if _, err := db.ApproveRequest(ctx, r.ID, f.lead, "", models.PlanFingerprint(r.ID, plan), changeClock, nil); err != nil {
					t.Fatal(err)
				}
				checkApplied(t, db, plan)
				kept := int64(0)
				bs, _ := db.Bookings(ctx, models.BookingFilter{From: hours(-1), To: hours(100), UserID: f.admin.ID})
				for _, b := range bs {
					if b.Status == models.StatusConfirmed {
						kept += int64(b.EndsAt.Sub(b.StartsAt).Seconds()) * int64(len(b.GPUIDs))
					}
				}
				if was := int64(theirs.EndsAt.Sub(theirs.StartsAt).Seconds()); was-kept != tt.wantLost {
					t.Errorf("the owner kept %d of %d GPU-seconds, lost %d, want %d", kept, was, was-kept, tt.wantLost)
				}
			})
		})
	}
}

// TestConcurrentPreemptingApprovals: two leads approve two overlapping
// pre-empting requests at once, on both databases: one wins, the other is
// refused with a conflict, and the calendar holds one priority booking.
func TestConcurrentPreemptingApprovals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		f.book(t, f.admin, []int{3}, 0, 100)
		for round := 0; round < 3; round++ {
			start := float64(10 * (round + 1))
			f.book(t, f.admin, []int{1}, start, start+6)
			a := f.request(t, f.owner, []int{0, 1}, start+1, start+4, true)
			b := f.request(t, f.other, []int{1, 2}, start+2, start+5, true)
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, pair := range []struct {
				id int64
				by *models.User
			}{{a.ID, f.lead}, {b.ID, f.lead2}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = db.ApproveRequest(ctx, pair.id, pair.by, "", models.AnyPlan, changeClock, nil)
				}()
			}
			wg.Wait()
			wins := 0
			for _, err := range errs {
				if err == nil {
					wins++
				} else if models.ErrorCode(err) != models.ECONFLICT {
					t.Fatalf("round %d: unexpected error %v", round, err)
				}
			}
			if wins != 1 {
				t.Fatalf("round %d: %d approvals won (%v), want exactly 1", round, wins, errs)
			}
			bs, _ := db.Bookings(ctx, models.BookingFilter{From: hours(start), To: hours(start + 6), GPUID: f.node.GPUs[1].ID})
			prio := 0
			for _, x := range bs {
				if x.Kind == models.KindPriority && x.Status == models.StatusConfirmed {
					prio++
				}
			}
			if prio != 1 {
				t.Fatalf("round %d: %d priority bookings on the shared GPU", round, prio)
			}
		}
	})
}

// TestWithdrawAndTeamChoice: a requester in two teams sends the request to
// the second; only they may withdraw it, once.
func TestWithdrawAndTeamChoice(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		nlp := &models.Team{Name: "nlp"}
		if err := db.CreateTeam(ctx, nlp, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if err := db.SetMembership(ctx, &models.Membership{TeamID: nlp.ID, UserID: f.owner.ID, Role: models.RoleMember}, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		r := &models.PriorityRequest{UserID: f.owner.ID, GPUIDs: []int64{f.node.GPUs[0].ID}, StartsAt: hours(2), EndsAt: hours(3),
			Purpose: "p", Urgency: "u", Plan: "p", GiveBack: "g", TeamID: &nlp.ID}
		if err := db.CreateRequest(ctx, r, models.DefaultBookingLimits, changeClock, models.ActorFor(f.owner, ""), nil); err != nil {
			t.Fatal(err)
		}
		if r.TeamID == nil || *r.TeamID != nlp.ID || r.TeamName != "nlp" {
			t.Fatalf("request team = %v %q, want nlp", r.TeamID, r.TeamName)
		}
		if n, _ := db.CountPendingFor(ctx, f.lead, changeClock); n != 0 {
			t.Errorf("the other team's lead sees %d pending", n)
		}
		bad := &models.PriorityRequest{UserID: f.other.ID, GPUIDs: r.GPUIDs, StartsAt: hours(2), EndsAt: hours(3),
			Purpose: "p", Urgency: "u", Plan: "p", GiveBack: "g", TeamID: &nlp.ID}
		err := db.CreateRequest(ctx, bad, models.DefaultBookingLimits, changeClock, models.ActorFor(f.other, ""), nil)
		if e := models.AsError(err); e.Code != models.EINVALID || e.Fields["team_id"].Key != "request.err.team" {
			t.Errorf("request for a team one is not in: %v", err)
		}
		_, err = db.WithdrawRequest(ctx, r.ID, f.other, changeClock)
		wantCode(t, err, models.EFORBIDDEN)
		got, err := db.WithdrawRequest(ctx, r.ID, f.owner, changeClock)
		if err != nil || got.Status != models.RequestWithdrawn {
			t.Fatalf("withdraw = %+v, %v", got, err)
		}
		_, err = db.WithdrawRequest(ctx, r.ID, f.owner, changeClock)
		wantCode(t, err, models.ECONFLICT)
		_, err = db.ApproveRequest(ctx, r.ID, f.admin, "", models.AnyPlan, changeClock, nil)
		wantCode(t, err, models.ECONFLICT)
		if ev := lastAudit(t, db, models.AuditRequestWithdraw); *ev.ActorID != f.owner.ID {
			t.Errorf("withdraw audit = %+v", ev)
		}
	})
}
