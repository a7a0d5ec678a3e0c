package store_test

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

func TestCreateBookingEnforcesPolicy(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		by := models.CLIActor
		if err := db.SaveScopeLimits(ctx, models.ScopeGlobal, 0, []models.PolicyLimit{{Rule: models.RuleMaxGPUs, Value: 1}}, changeClock, by); err != nil {
			t.Fatal(err)
		}
		req := models.NewBooking{UserID: f.owner.ID, GPUIDs: []int64{f.node.GPUs[0].ID, f.node.GPUs[1].ID}, StartsAt: hours(1), EndsAt: hours(2)}
		_, err := db.CreateBooking(ctx, req, models.DefaultBookingLimits, changeClock, by)
		wantCode(t, err, models.EPOLICY)
		if m := models.AsError(err).Fields["max_gpus"]; m.Key != "policy.breach.max_gpus" || m.Data["Limit"] != "1" || m.Data["Actual"] != "2" || m.Data["Scope"] != "global" {
			t.Errorf("breach = %+v", m)
		}
		bs, err := db.CheckBooking(ctx, req, models.DefaultBookingLimits, changeClock)
		if err != nil || len(bs) != 1 || bs[0].Rule != models.RuleMaxGPUs {
			t.Errorf("check = %+v, %v", bs, err)
		}
		// The team's own value wins over the global one.
		if err := db.SaveScopeLimits(ctx, models.ScopeTeam, f.team.ID, []models.PolicyLimit{{Rule: models.RuleMaxGPUs, Value: 2}}, changeClock, by); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateBooking(ctx, req, models.DefaultBookingLimits, changeClock, by); err != nil {
			t.Fatalf("booking within the team's limit: %v", err)
		}
		// Now Ada holds 2 GPUs 1–2 h; one more at the same time is over.
		req.GPUIDs, req.StartsAt = []int64{f.node.GPUs[2].ID}, hours(1.5)
		_, err = db.CreateBooking(ctx, req, models.DefaultBookingLimits, changeClock, by)
		wantCode(t, err, models.EPOLICY)
		in, err := db.PolicyInputFor(ctx, f.owner.ID, changeClock, changeClock, models.DefaultBookingLimits)
		if v, ok := in.Effective(models.RuleMaxGPUs, ""); err != nil || !ok || v.Source.Scope != models.ScopeTeam || v.Source.Name != "vision" {
			t.Errorf("effective = %+v %v %v", v, ok, err)
		}
		if ev := lastAudit(t, db, models.AuditPolicyLimits); ev.TargetType != "policy_team" {
			t.Errorf("audit = %+v", ev)
		}
	})
}

func TestModelRestrictionAndSettings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		other := &models.Team{Name: "nlp"}
		if err := db.CreateTeam(ctx, other, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		model := f.node.GPUs[0].Model
		if err := db.SetModelTeams(ctx, model, []int64{other.ID}, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		req := models.NewBooking{UserID: f.owner.ID, GPUIDs: []int64{f.node.GPUs[0].ID}, StartsAt: hours(1), EndsAt: hours(2)}
		_, err := db.CreateBooking(ctx, req, models.DefaultBookingLimits, changeClock, models.CLIActor)
		wantCode(t, err, models.EPOLICY)
		s := models.DefaultPolicySettings()
		s.Peak.From, s.AdminExempt = 8*60, true
		if err := db.SavePolicySettings(ctx, s, changeClock, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		got, err := db.PolicySettings(ctx)
		if err != nil || got.Peak.From != 480 || got.Peak.To != 1140 || !got.AdminExempt || !got.Peak.Days[1] || got.Peak.Days[0] {
			t.Errorf("settings = %+v, %v", got, err)
		}
		req.UserID = f.admin.ID // exempt now
		if _, err := db.CreateBooking(ctx, req, models.DefaultBookingLimits, changeClock, models.CLIActor); err != nil {
			t.Errorf("exempt admin refused: %v", err)
		}
		if err := db.SetModelTeams(ctx, model, nil, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if mt, err := db.ModelTeams(ctx); err != nil || len(mt) != 0 {
			t.Errorf("model teams after clearing = %v, %v", mt, err)
		}
	})
}

func TestLoans(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		if err := db.SaveScopeLimits(ctx, models.ScopeGlobal, 0, []models.PolicyLimit{{Rule: models.RuleMaxGPUHours, Value: 600}}, changeClock, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		lim := models.DefaultBookingLimits
		from, to, team := f.owner.ID, f.other.ID, f.team.ID
		give := &models.QuotaLoan{FromUser: &from, ToUser: &to, GPUMinutes: 240}
		if err := db.CreateLoan(ctx, give, lim, changeClock, models.ActorFor(f.owner, "")); err != nil {
			t.Fatalf("lend: %v", err)
		}
		tooMuch := &models.QuotaLoan{FromUser: &from, TeamID: &team, GPUMinutes: 400}
		wantCode(t, db.CreateLoan(ctx, tooMuch, lim, changeClock, models.ActorFor(f.owner, "")), models.EINVALID)
		pool := &models.QuotaLoan{FromUser: &from, TeamID: &team, GPUMinutes: 300}
		if err := db.CreateLoan(ctx, pool, lim, changeClock, models.ActorFor(f.owner, "")); err != nil {
			t.Fatalf("give to pool: %v", err)
		}
		draw := &models.QuotaLoan{ToUser: &to, TeamID: &team, GPUMinutes: 120}
		if err := db.CreateLoan(ctx, draw, lim, changeClock, models.ActorFor(f.other, "")); err != nil {
			t.Fatalf("draw: %v", err)
		}
		ws := models.WeekStart(changeClock, nil)
		ls, err := db.Loans(ctx, f.other.ID, []int64{team}, ws)
		if err != nil || len(ls) != 3 || models.LoanBalance(ls, f.other.ID, ws) != 360 || models.PoolBalance(ls, team, ws) != 180 {
			t.Fatalf("ledger = %+v, %v", ls, err)
		}
		// Ada has 600 − 240 − 300 = 60 GPU-minutes left: a 2 h booking breaks the weekly limit.
		req := models.NewBooking{UserID: f.owner.ID, GPUIDs: []int64{f.node.GPUs[0].ID}, StartsAt: hours(1), EndsAt: hours(3)}
		_, err = db.CreateBooking(ctx, req, lim, changeClock, models.CLIActor)
		wantCode(t, err, models.EPOLICY)
	})
}

// An extension is judged by the policy too, without the rules about the
// start, and without counting the booking itself twice.
func TestExtendEnforcesPolicy(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		limits := []models.PolicyLimit{{Rule: models.RuleMaxLength, Value: 180}, {Rule: models.RuleMinNotice, Value: 24 * 60}, {Rule: models.RuleMaxGPUs, Value: 1}}
		b := f.book(t, f.owner, []int{0}, 1, 2)
		if err := db.SaveScopeLimits(ctx, models.ScopeGlobal, 0, limits, changeClock, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExtendBooking(ctx, b.ID, f.owner, hours(4), models.DefaultBookingLimits, changeClock); err != nil {
			t.Fatalf("extend within policy: %v", err)
		}
		_, err := db.ExtendBooking(ctx, b.ID, f.owner, hours(5), models.DefaultBookingLimits, changeClock)
		wantCode(t, err, models.EPOLICY)
		if m := models.AsError(err).Fields; len(m) != 1 || m["max_length"].Key == "" {
			t.Errorf("breaches = %v", m)
		}
	})
}

// TestPolicyInputReadsWhatThePartsRead checks the one-statement read of the
// policy (policy_input.go) against the store's separate readers.
func TestPolicyInputReadsWhatThePartsRead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		other := &models.Team{Name: "nlp"}
		if err := db.CreateTeam(ctx, other, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		for _, s := range []struct {
			scope string
			id    int64
			l     []models.PolicyLimit
		}{
			{models.ScopeGlobal, 0, []models.PolicyLimit{{Rule: models.RuleMaxGPUs, Value: 8}, {Rule: models.RuleMaxLength, Period: models.PeriodPeak, Value: 120}}},
			{models.ScopeTeam, f.team.ID, []models.PolicyLimit{{Rule: models.RuleMaxGPUs, Value: 4}}},
			{models.ScopeTeam, other.ID, []models.PolicyLimit{{Rule: models.RuleMaxGPUs, Value: 16}}},
			{models.ScopeUser, f.owner.ID, []models.PolicyLimit{{Rule: models.RuleMaxGPUHours, Value: 600}}},
			{models.ScopeUser, f.other.ID, []models.PolicyLimit{{Rule: models.RuleMaxGPUHours, Value: 60}}},
		} {
			if err := db.SaveScopeLimits(ctx, s.scope, s.id, s.l, changeClock, models.CLIActor); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.SetModelTeams(ctx, "H100", []int64{other.ID, f.team.ID}, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		s := models.DefaultPolicySettings()
		s.Peak.From, s.AdminExempt = 8*60, true
		if err := db.SavePolicySettings(ctx, s, changeClock, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		in, err := db.PolicyInputFor(ctx, f.owner.ID, changeClock, changeClock, models.DefaultBookingLimits)
		if err != nil {
			t.Fatal(err)
		}
		all, err := db.PolicyLimits(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var want []models.PolicyLimit
		for _, l := range all {
			if l.Scope == models.ScopeGlobal || l.Scope == models.ScopeTeam && l.ScopeID == f.team.ID || l.Scope == models.ScopeUser && l.ScopeID == f.owner.ID {
				want = append(want, l)
			}
		}
		if !reflect.DeepEqual(in.Limits, want) {
			t.Errorf("limits\n got %+v\nwant %+v", in.Limits, want)
		}
		if got, _ := db.PolicySettings(ctx); !reflect.DeepEqual(in.Settings, got) {
			t.Errorf("settings = %+v, want %+v", in.Settings, got)
		}
		if got, _ := db.ModelTeams(ctx); !reflect.DeepEqual(in.ModelTeams, got) {
			t.Errorf("model teams = %v, want %v", in.ModelTeams, got)
		}
		if !reflect.DeepEqual(in.TeamIDs, []int64{f.team.ID}) || in.TeamNames[f.team.ID] != "vision" || in.UserName != f.owner.Name || in.IsAdmin {
			t.Errorf("user part = %v %v %q %v", in.TeamIDs, in.TeamNames, in.UserName, in.IsAdmin)
		}
		if _, err := db.PolicyInputFor(ctx, 1<<40, changeClock, changeClock, models.DefaultBookingLimits); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("unknown user: %v", err)
		}
	})
}

// TestQuotaUnderConcurrency books GPUs for one user from many goroutines at
// once against a limit of one GPU at a time: the user's lock (PostgreSQL) or
// the single writer (SQLite) lets exactly one through.
func TestQuotaUnderConcurrency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const n = 8
		u, node := fixture(t, db, n)
		if err := db.SaveScopeLimits(ctx, models.ScopeGlobal, 0, []models.PolicyLimit{{Rule: models.RuleMaxGPUs, Value: 1}}, changeClock, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		start := now.Add(time.Hour).Truncate(time.Minute)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[i].ID},
					StartsAt: start, EndsAt: start.Add(time.Hour)}, models.DefaultBookingLimits, now, models.CLIActor)
			}()
		}
		wg.Wait()
		onePassed(t, "bookings", errs)
	})
}

// TestExtendQuotaUnderConcurrency: one user extends eight one-hour
// bookings by an hour each, all at once, against a weekly quota that has
// room for one more GPU-hour: exactly one extension may pass. The owner's
// lock (PostgreSQL) or the single writer (SQLite) serialises the checks.
func TestExtendQuotaUnderConcurrency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const n = 8
		u, node := fixture(t, db, n)
		// A fixed Monday morning: on the wall clock, a Sunday evening
		// extension crosses into next week and counts only in part.
		now := changeClock
		start := now.Add(time.Hour)
		ids := make([]int64, n)
		for i := range n {
			b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[i].ID},
				StartsAt: start, EndsAt: start.Add(time.Hour)}, models.DefaultBookingLimits, now, models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = b.ID
		}
		quota := []models.PolicyLimit{{Rule: models.RuleMaxGPUHours, Value: (n + 1) * 60}}
		if err := db.SaveScopeLimits(ctx, models.ScopeGlobal, 0, quota, changeClock, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = db.ExtendBooking(ctx, ids[i], u, start.Add(2*time.Hour), models.DefaultBookingLimits, now)
			}()
		}
		wg.Wait()
		onePassed(t, "extensions", errs)
	})
}

// onePassed checks that exactly one of the concurrent tries behind errs
// passed and that the policy refused the others.
func onePassed(t *testing.T, what string, errs []error) {
	t.Helper()
	ok := 0
	for _, err := range errs {
		switch models.ErrorCode(err) {
		case "":
			ok++
		case models.EPOLICY:
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 {
		t.Errorf("successful %s = %d, want exactly 1", what, ok)
	}
}
