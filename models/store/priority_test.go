package store_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// prioFixture is changeFixture plus a team: owner (Ada) and other (Bob) are
// members, lead and lead2 lead it, admin is an admin outside it.
type prioFixture struct {
	changeFixture
	lead, lead2 *models.User
	team        *models.Team
}

func newPrioFixture(t *testing.T, db *store.DB) prioFixture {
	t.Helper()
	f := prioFixture{changeFixture: newChangeFixture(t, db)}
	f.lead = &models.User{Email: "lea@example.org", Name: "Lea"}
	f.lead2 = &models.User{Email: "leo@example.org", Name: "Leo"}
	for _, u := range []*models.User{f.lead, f.lead2} {
		if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
			t.Fatal(err)
		}
	}
	f.team = &models.Team{Name: "vision"}
	if err := db.CreateTeam(ctx, f.team, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		u    *models.User
		role string
	}{{f.owner, models.RoleMember}, {f.other, models.RoleMember}, {f.lead, models.RoleLead}, {f.lead2, models.RoleLead}} {
		if err := db.SetMembership(ctx, &models.Membership{TeamID: f.team.ID, UserID: m.u.ID, Role: m.role}, models.CLIActor); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// request files a request by u for GPUs (by index) from start to end hours
// after changeClock, at changeClock.
func (f prioFixture) request(t *testing.T, u *models.User, idx []int, start, end float64, preempt bool) *models.PriorityRequest {
	t.Helper()
	r := &models.PriorityRequest{UserID: u.ID, StartsAt: hours(start), EndsAt: hours(end), Purpose: "paper", Urgency: "deadline",
		Plan: "fine-tune 8 h", GiveBack: "Friday", Preempt: preempt}
	for _, x := range idx {
		r.GPUIDs = append(r.GPUIDs, f.node.GPUs[x].ID)
	}
	if err := f.db.CreateRequest(ctx, r, models.DefaultBookingLimits, changeClock, models.ActorFor(u, ""), nil); err != nil {
		t.Fatalf("create request: %v", err)
	}
	return r
}

func TestApproveRequest(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		r := f.request(t, f.owner, []int{0, 1}, 2, 6, false)
		if r.TeamID == nil || *r.TeamID != f.team.ID || r.Status != models.RequestPending {
			t.Fatalf("request = %+v", r)
		}
		if n, err := db.CountPendingFor(ctx, f.lead, changeClock); err != nil || n != 1 {
			t.Errorf("pending for lead = %d, %v", n, err)
		}
		if n, err := db.CountPendingFor(ctx, f.owner, changeClock); err != nil || n != 0 {
			t.Errorf("pending for the requester = %d, %v; want 0", n, err)
		}
		// The navigation's one query: the badge, the bell, the Approvals tab.
		for _, c := range []struct {
			who  *models.User
			want models.NavState
		}{{f.lead, models.NavState{PendingApprovals: 1, LeadsATeam: true}}, {f.owner, models.NavState{}}, {f.other, models.NavState{}}} {
			if got, err := db.NavState(ctx, c.who, changeClock); err != nil || got != c.want {
				t.Errorf("nav state of %s = %+v, %v; want %+v", c.who.Name, got, err, c.want)
			}
		}
		_, err := db.ApproveRequest(ctx, r.ID, f.owner, "", models.AnyPlan, changeClock, nil)
		wantCode(t, err, models.EFORBIDDEN)
		_, err = db.ApproveRequest(ctx, r.ID, f.other, "", models.AnyPlan, changeClock, nil)
		wantCode(t, err, models.EFORBIDDEN)
		got, err := db.ApproveRequest(ctx, r.ID, f.lead, "go ahead", models.AnyPlan, changeClock, nil)
		if err != nil {
			t.Fatalf("approve: %v", err)
		}
		if got.Status != models.RequestApproved || got.BookingID == nil || got.Comment != "go ahead" || got.DeciderName != "Lea" {
			t.Fatalf("approved = %+v", got)
		}
		b, err := db.Booking(ctx, *got.BookingID)
		if err != nil || b.Kind != models.KindPriority || !b.StartsAt.Equal(hours(2)) || !b.EndsAt.Equal(hours(6)) || len(b.GPUIDs) != 2 || b.UserID != f.owner.ID {
			t.Fatalf("booking = %+v, %v", b, err)
		}
		_, err = db.ApproveRequest(ctx, r.ID, f.lead2, "", models.AnyPlan, changeClock, nil)
		wantCode(t, err, models.ECONFLICT)
		if ev := lastAudit(t, db, models.AuditRequestApprove); ev.TargetID == "" || *ev.ActorID != f.lead.ID {
			t.Errorf("audit = %+v", ev)
		}
	})
}

func TestApproveNeedsFreeSlotWithoutPreempt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		f.book(t, f.other, []int{1}, 3, 5)
		r := f.request(t, f.owner, []int{0, 1}, 2, 6, false)
		_, err := db.ApproveRequest(ctx, r.ID, f.lead, "", models.AnyPlan, changeClock, nil)
		wantCode(t, err, models.ECONFLICT)
		if got, _ := db.Request(ctx, r.ID); got.Status != models.RequestPending {
			t.Errorf("status after refusal = %s, want pending", got.Status)
		}
		if _, err := db.DenyRequest(ctx, r.ID, f.lead2, "no", changeClock, nil); err != nil {
			t.Fatalf("deny: %v", err)
		}
		if got, _ := db.Request(ctx, r.ID); got.Status != models.RequestDenied || got.Comment != "no" {
			t.Errorf("denied = %+v", got)
		}
	})
}

func TestPreemptSplitsAndCancels(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		early := f.book(t, f.other, []int{0}, 1, 4)  // begins before: keeps 1–2
		inside := f.book(t, f.other, []int{1}, 3, 5) // within: cancelled
		apart := f.book(t, f.other, []int{2}, 3, 5)  // other GPU: untouched
		f.book(t, f.admin, []int{3}, 0, 10)          // no free GPU to move to
		r := f.request(t, f.owner, []int{0, 1}, 2, 6, true)
		var sent []models.Notice
		mail := func(n models.Notice, to *models.User) (models.OutboxMessage, error) {
			sent = append(sent, n)
			return models.OutboxMessage{Kind: n.Kind, ToEmail: to.Email, Subject: "s", TextBody: "t", HTMLBody: "h"}, nil
		}
		if _, err := db.ApproveRequest(ctx, r.ID, f.lead, "", models.AnyPlan, changeClock, mail); err != nil {
			t.Fatalf("approve: %v", err)
		}
		e, _ := db.Booking(ctx, early.ID)
		in, _ := db.Booking(ctx, inside.ID)
		ap, _ := db.Booking(ctx, apart.ID)
		if !e.EndsAt.Equal(hours(2)) || e.Status != models.StatusConfirmed || in.Status != models.StatusCancelled || !ap.EndsAt.Equal(hours(5)) || ap.Status != models.StatusConfirmed {
			t.Fatalf("after pre-emption: early %v %s, inside %s, apart %v %s", e.EndsAt, e.Status, in.Status, ap.EndsAt, ap.Status)
		}
		if rows := blockingRows(t, db, early.ID); !rows[0].EndsAt.Equal(hours(2)) {
			t.Errorf("booking_gpus of the trimmed booking end at %v", rows[0].EndsAt)
		}
		kinds := map[string]int{}
		for _, n := range sent {
			kinds[n.Kind]++
		}
		if kinds[models.NoticePreempted] != 2 || kinds[models.NoticeDecision] != 1 {
			t.Errorf("notices = %v", kinds)
		}
		var queued int64
		db.Gorm.Table("outbox").Where("kind = ?", models.NoticePreempted).Count(&queued)
		if queued != 2 {
			t.Errorf("outbox has %d pre-emption emails, want 2", queued)
		}
		if ev := lastAudit(t, db, models.AuditBookingPreempt); ev.TargetType != "booking" {
			t.Errorf("audit = %+v", ev)
		}
		ev := lastAudit(t, db, models.AuditRequestApprove)
		if !strings.Contains(ev.Details, `"preempted":[{`) || !strings.Contains(ev.Details, `"action":"cancel","booking_id":`+strconv.FormatInt(inside.ID, 10)) {
			t.Errorf("approve audit details = %s", ev.Details)
		}
	})
}

// A priority booking in the way makes an approval fail after the first
// standard booking was already planned: nothing may stay changed.
func TestPreemptIsAtomic(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		std := f.book(t, f.other, []int{0}, 1, 4)
		first := f.request(t, f.other, []int{1}, 3, 5, false)
		approved, err := db.ApproveRequest(ctx, first.ID, f.lead, "", models.AnyPlan, changeClock, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := f.request(t, f.owner, []int{0, 1}, 2, 6, true)
		_, err = db.ApproveRequest(ctx, r.ID, f.lead, "", models.AnyPlan, changeClock, nil)
		wantCode(t, err, models.ECONFLICT)
		if b, _ := db.Booking(ctx, std.ID); !b.EndsAt.Equal(hours(4)) || b.Status != models.StatusConfirmed {
			t.Fatalf("standard booking changed by a failed approval: %+v", b)
		}
		if rows := blockingRows(t, db, std.ID); !rows[0].EndsAt.Equal(hours(4)) || !rows[0].Blocking {
			t.Fatalf("booking_gpus changed: %+v", rows)
		}
		if got, _ := db.Request(ctx, r.ID); got.Status != models.RequestPending || got.BookingID != nil {
			t.Fatalf("request after failure = %+v", got)
		}
		// A cancelled context fails the same way, leaving everything as it was.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err = db.ApproveRequest(cctx, r.ID, f.admin, "", models.AnyPlan, changeClock, nil)
		if err == nil {
			t.Fatal("approve with a cancelled context succeeded")
		}
		if got, _ := db.Request(ctx, r.ID); got.Status != models.RequestPending {
			t.Fatalf("request after cancelled ctx = %s", got.Status)
		}
		// Not even an admin pre-empts a priority booking.
		_, err = db.ApproveRequest(ctx, r.ID, f.admin, "", models.AnyPlan, changeClock, nil)
		wantCode(t, err, models.ECONFLICT)
		// A failure after the first booking was split (the second owner's
		// email cannot be rendered) rolls the split back too.
		f.book(t, f.admin, []int{3}, 0, 10) // no free GPU to move to
		std2 := f.book(t, f.other, []int{2}, 4, 7)
		r2 := f.request(t, f.owner, []int{0, 2}, 3, 5, true)
		calls := 0
		failing := func(n models.Notice, to *models.User) (models.OutboxMessage, error) {
			if calls++; calls == 2 {
				return models.OutboxMessage{}, context.DeadlineExceeded
			}
			return models.OutboxMessage{Kind: n.Kind, ToEmail: to.Email, Subject: "s", TextBody: "t"}, nil
		}
		if _, err := db.ApproveRequest(ctx, r2.ID, f.admin, "", models.AnyPlan, changeClock, failing); err == nil || calls != 2 {
			t.Fatalf("approve with a failing mailer: %v after %d calls", err, calls)
		}
		if b, _ := db.Booking(ctx, std.ID); !b.EndsAt.Equal(hours(4)) || b.Status != models.StatusConfirmed {
			t.Fatalf("split survived a failed approval: %+v", b)
		}
		if b, _ := db.Booking(ctx, std2.ID); !b.StartsAt.Equal(hours(4)) || b.Status != models.StatusConfirmed {
			t.Fatalf("second booking changed by a failed approval: %+v", b)
		}
		var queued int64
		db.Gorm.Table("outbox").Count(&queued)
		if queued != 0 {
			t.Fatalf("%d emails queued by a failed approval", queued)
		}
		if b, _ := db.Booking(ctx, *approved.BookingID); b.Status != models.StatusConfirmed {
			t.Errorf("priority booking after the refusals: %s", b.Status)
		}
	})
}

func TestExpireRequests(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		soon := f.request(t, f.owner, []int{0}, 1, 2, false)
		later := f.request(t, f.owner, []int{1}, 5, 6, false)
		n, err := db.ExpireRequests(ctx, hours(1))
		if err != nil || n != 1 {
			t.Fatalf("expired %d, %v; want 1", n, err)
		}
		a, _ := db.Request(ctx, soon.ID)
		b, _ := db.Request(ctx, later.ID)
		if a.Status != models.RequestExpired || b.Status != models.RequestPending {
			t.Fatalf("statuses %s %s", a.Status, b.Status)
		}
		_, err = db.ApproveRequest(ctx, later.ID, f.lead, "", models.AnyPlan, hours(5), nil)
		wantCode(t, err, models.ECONFLICT) // its start has come: too late to decide
		if n, err := db.ExpireRequests(ctx, hours(1)); err != nil || n != 0 {
			t.Errorf("second expiry run expired %d, %v", n, err)
		}
	})
}

// Two leads approve two conflicting requests at the same moment on
// PostgreSQL: exactly one booking results, the other request stays pending.
func TestConcurrentApprovalsPostgres(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	f := newPrioFixture(t, db)
	for round := 0; round < 5; round++ {
		start := float64(10 * (round + 1))
		a := f.request(t, f.owner, []int{0, 1}, start, start+4, false)
		b := f.request(t, f.other, []int{1, 2}, start+1, start+3, false)
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
		bs, _ := db.Bookings(ctx, models.BookingFilter{From: hours(start), To: hours(start + 4), GPUID: f.node.GPUs[1].ID})
		if len(bs) != 1 {
			t.Fatalf("round %d: %d bookings on the shared GPU", round, len(bs))
		}
	}
	// The same request by two leads at once: one decision.
	r := f.request(t, f.owner, []int{3}, 100, 101, false)
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for _, by := range []*models.User{f.lead, f.lead2, f.admin} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := db.ApproveRequest(ctx, r.ID, by, "", models.AnyPlan, changeClock, nil); err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d deciders won the same request", wins)
	}
}
