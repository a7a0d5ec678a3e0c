package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// The synthetic week: 2026-W49 in Europe/Berlin (Mon 30 Nov 00:00 CET =
// Sun 29 Nov 23:00 UTC, to Mon 7 Dec 00:00 CET), one node with GPUs g1–g4,
// teams A {alice (lead), bob} and B {carol, dave}. Every expected figure is
// worked out next to the data that makes it; report_test.go checks them all.
//
//	booking                                   booked    busy      why
//	alice g4 Sun(W48) 23:00–Mon 01:00, 70 %    1 h W49   60 min    crosses into the week: only its Monday hour counts (W48 gets the other)
//	alice g1 Mon 10–12, util 80 %              2 h       120 min   fully used
//	alice g2 Tue 10–14: 10–11 util 50 %,       4 h       60 min    a quarter used: 11–14 her processes hold memory at 0 %:
//	      11–12 util 0 but 2 GiB, 12–14 0 %/100 MiB                 3 h held idle (memory never makes a minute busy)
//	bob   g3 Wed 09–11, util 0, no process     2 h       0         no-show
//	bob   g1 Thu 08–16 released at 10, 90 %    2 h       120 min   released early: 6 GPU-hours given back
//	bob   g4 Sat 10–12 cancelled (pre-empted)  0         0         pre-empted Sat 09:00 (audit event): 1 pre-empted; his processes
//	                                                               ran 10:00–10:29 anyway (util 20 %): 30 min unbooked
//	carol priority requests: Tue approved, Thu pending; one made in W48                  → W49: 2 made, 1 approved; 1 pending
//	carol g2+g4 Fri 12–18, auto-released 13    2×1 h     0         idle rule released it: 2×5 h given back (auto), and a no-show
//	carol g3 Sun 22–Mon(W50) 02, util 60 %     2 h W49   120 min   crosses out of the week; it ends in W50, so no no-show question here
//	carol (no booking) g1 Wed 14–15, 40 %/3 GB  —         —         60 min unbooked
//	unmapped unix user g1 Wed 15:00–15:10 30 %  —         —         counts for the cluster's load only (10 min)
//	dave: nothing at all                                           the friendly short report
//
// Totals: alice booked 7 h busy 4 h (efficiency 4/7), 3 h held idle; bob 4 h / 2 h, 6 h given
// back, 1 no-show, 30 min unbooked, 1 pre-empted; carol 2 requests (1 approved), 4 h / 2 h, 10 h given back (all
// auto), 1 no-show, 60 min unbooked. Cluster: booked 15 h, busy in bookings
// 8 h; busy GPU-minutes anywhere (utilisation at the threshold) 120+60+120+120+120+30+60+10 = 580.
var berlin = mustZone("Europe/Berlin")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// local is a wall-clock time in Berlin on day d of November/December 2026
// (30 = Monday 30 Nov, 31 = 1 Dec, …) — kept simple by using time.Date's
// normalisation.
func local(day, hh, mm int) time.Time { return time.Date(2026, 11, day, hh, mm, 0, 0, berlin) }

// fixture builds rows with plain SQL so that the test controls every value.
// Each write restamps the usage minutes it touches, as the store does.
type reportFixture struct {
	t    *testing.T
	db   *store.DB
	gpus []int64
}

func (f *reportFixture) restamp(from, to time.Time) {
	f.t.Helper()
	if err := f.db.RestampUsage(context.Background(), from, to); err != nil {
		f.t.Fatal(err)
	}
}

func (f *reportFixture) exec(q string, args ...any) {
	f.t.Helper()
	if err := f.db.Gorm.Exec(q, args...).Error; err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
}

func (f *reportFixture) user(name string) int64 {
	f.t.Helper()
	u := &models.User{Email: name + "@example.org", Name: name}
	if err := f.db.CreateUser(context.Background(), u, models.CLIActor); err != nil {
		f.t.Fatal(err)
	}
	return u.ID
}

func (f *reportFixture) team(name string, lead int64, members ...int64) int64 {
	f.t.Helper()
	tm := &models.Team{Name: name}
	ctx := context.Background()
	if err := f.db.CreateTeam(ctx, tm, models.CLIActor); err != nil {
		f.t.Fatal(err)
	}
	for i, id := range append([]int64{lead}, members...) {
		role := models.RoleMember
		if i == 0 {
			role = models.RoleLead
		}
		if err := f.db.SetMembership(ctx, &models.Membership{TeamID: tm.ID, UserID: id, Role: role}, models.CLIActor); err != nil {
			f.t.Fatal(err)
		}
	}
	return tm.ID
}

func (f *reportFixture) node(n int) {
	f.t.Helper()
	gpus, err := models.NewNodeGPUs("n1", n, "NVIDIA A100-SXM4-80GB", 81920)
	if err != nil {
		f.t.Fatal(err)
	}
	node := &models.Node{Name: "n1"}
	if err := f.db.CreateNode(context.Background(), node, gpus, models.CLIActor); err != nil {
		f.t.Fatal(err)
	}
	got, err := f.db.GPUs(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	for _, g := range got {
		f.gpus = append(f.gpus, g.ID)
	}
}

// book inserts a booking of gpu indexes (0 = g1) and returns its ID.
func (f *reportFixture) book(user int64, status string, from, to time.Time, gpus ...int) int64 {
	f.t.Helper()
	now := from.Add(-time.Hour).UTC()
	var id int64
	err := f.db.Gorm.Raw(`INSERT INTO bookings (user_id, node_id, starts_at, ends_at, status, created_at, updated_at)
		VALUES (?, (SELECT MIN(id) FROM nodes), ?, ?, ?, ?, ?) RETURNING id`, user, from.UTC(), to.UTC(), status, now, now).Scan(&id).Error
	if err != nil {
		f.t.Fatal(err)
	}
	for _, g := range gpus {
		f.exec("INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at, blocking) VALUES (?, ?, ?, ?, ?)",
			id, f.gpus[g], from.UTC(), to.UTC(), status == models.StatusConfirmed)
	}
	f.restamp(from, to)
	return id
}

// release ends booking id at "at" the way the store does: a new end and
// released_at in one update; the migration's trigger keeps the old end.
func (f *reportFixture) release(id int64, at time.Time) {
	f.exec("UPDATE bookings SET ends_at = ?, released_at = ?, updated_at = ? WHERE id = ?", at.UTC(), at.UTC(), at.UTC(), id)
	f.exec("UPDATE booking_gpus SET ends_at = ? WHERE booking_id = ?", at.UTC(), id)
	f.restamp(at, at.Add(30*24*time.Hour))
}

// idleReleased records the agent's idle report that the idle rule acted on.
func (f *reportFixture) idleReleased(booking int64, at time.Time) {
	f.exec(`INSERT INTO agent_idle_reports (node_id, agent_key, booking_id, gpu_uuids, idle_since, reported_at, received_at, released_at)
		VALUES ((SELECT MIN(id) FROM nodes), ?, ?, '', ?, ?, ?, ?)`, fmt.Sprint("idle-", booking), booking, at.UTC(), at.UTC(), at.UTC(), at.UTC())
}

// request records a priority request made at "at".
func (f *reportFixture) request(user int64, at time.Time, status string) {
	f.exec(`INSERT INTO priority_requests (user_id, node_id, gpu_ids, starts_at, ends_at, purpose, urgency, plan, give_back, status, created_at, updated_at)
		VALUES (?, (SELECT MIN(id) FROM nodes), '[]', ?, ?, 'p', 'u', 'p', 'g', ?, ?, ?)`, user, at.Add(time.Hour).UTC(), at.Add(2*time.Hour).UTC(), status, at.UTC(), at.UTC())
}

// use writes per-minute records for gpu index g over [from, to): the GPU's
// utilisation and, when user is not "", one process row of that unix user
// (mapped to userID when it is not 0) holding mem MiB.
func (f *reportFixture) use(g int, from, to time.Time, util float64, user string, userID int64, mem int64) {
	f.t.Helper()
	var rows, urows []string
	var args, uargs []any
	for m := from.UTC(); m.Before(to.UTC()); m = m.Add(time.Minute) {
		rows = append(rows, "(?, ?, ?, ?, ?, 81920, 60)")
		args = append(args, f.gpus[g], m, util, util, mem)
		if user != "" {
			var uid any
			if userID != 0 {
				uid = userID
			}
			urows = append(urows, "(?, ?, ?, ?, ?, 1, ?)")
			uargs = append(uargs, f.gpus[g], m, user, uid, mem, util > 0)
		}
	}
	f.exec("INSERT INTO gpu_usage_minutes (gpu_id, minute, util_avg_pct, util_max_pct, mem_used_mib, mem_total_mib, samples) VALUES "+
		strings.Join(rows, ", "), args...)
	if len(urows) > 0 {
		f.exec("INSERT INTO gpu_user_usage_minutes (gpu_id, minute, user_name, user_id, memory_mib, processes, busy) VALUES "+
			strings.Join(urows, ", "), uargs...)
	}
	f.restamp(from, to)
}

// ids of the synthetic week's users and teams.
type weekIDs struct{ alice, bob, carol, dave, teamA, teamB int64 }

// syntheticWeek fills db with the table above.
func syntheticWeek(t *testing.T, db *store.DB) weekIDs {
	f := &reportFixture{t: t, db: db}
	f.node(4)
	var w weekIDs
	w.alice, w.bob, w.carol, w.dave = f.user("alice"), f.user("bob"), f.user("carol"), f.user("dave")
	w.teamA, w.teamB = f.team("A", w.alice, w.bob), f.team("B", w.carol, w.dave)

	f.book(w.alice, models.StatusConfirmed, local(29, 23, 0), local(30, 1, 0), 3)
	f.use(3, local(29, 23, 0), local(30, 1, 0), 70, "alice", w.alice, 4096)
	f.book(w.alice, models.StatusConfirmed, local(30, 10, 0), local(30, 12, 0), 0)
	f.use(0, local(30, 10, 0), local(30, 12, 0), 80, "alice", w.alice, 8192)
	f.book(w.alice, models.StatusConfirmed, local(31, 10, 0), local(31, 14, 0), 1)
	f.use(1, local(31, 10, 0), local(31, 11, 0), 50, "alice", w.alice, 500)
	f.use(1, local(31, 11, 0), local(31, 12, 0), 0, "alice", w.alice, 2048)
	f.use(1, local(31, 12, 0), local(31, 14, 0), 0, "alice", w.alice, 100)

	f.book(w.bob, models.StatusConfirmed, local(32, 9, 0), local(32, 11, 0), 2)
	f.use(2, local(32, 9, 0), local(32, 11, 0), 0, "", 0, 0)
	b4 := f.book(w.bob, models.StatusConfirmed, local(33, 8, 0), local(33, 16, 0), 0)
	f.use(0, local(33, 8, 0), local(33, 10, 0), 90, "bob", w.bob, 10000)
	f.release(b4, local(33, 10, 0))
	pre := f.book(w.bob, models.StatusCancelled, local(35, 10, 0), local(35, 12, 0), 3)
	f.exec(`INSERT INTO audit_events (at, action, target_type, target_id, details) VALUES (?, ?, 'booking', ?, '{}')`,
		local(35, 9, 0).UTC(), models.AuditBookingPreempt, fmt.Sprint(pre))
	f.request(w.carol, local(31, 9, 0), models.RequestApproved)
	f.request(w.carol, local(33, 9, 0), models.RequestPending)
	f.request(w.carol, local(25, 9, 0), models.RequestDenied)
	f.use(3, local(35, 10, 0), local(35, 10, 30), 20, "bob", w.bob, 2000)

	b5 := f.book(w.carol, models.StatusConfirmed, local(34, 12, 0), local(34, 18, 0), 1, 3)
	f.use(1, local(34, 12, 0), local(34, 13, 0), 0, "", 0, 0)
	f.use(3, local(34, 12, 0), local(34, 13, 0), 0, "", 0, 0)
	f.idleReleased(b5, local(34, 13, 0))
	f.release(b5, local(34, 13, 0))
	f.book(w.carol, models.StatusConfirmed, local(36, 22, 0), local(37, 2, 0), 2)
	f.use(2, local(36, 22, 0), local(37, 2, 0), 60, "carol", w.carol, 5000)
	f.use(0, local(32, 14, 0), local(32, 15, 0), 40, "carol", w.carol, 3000)
	f.use(0, local(32, 15, 0), local(32, 15, 10), 30, "nobody", 0, 3000)
	return w
}
