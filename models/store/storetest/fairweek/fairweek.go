// Package fairweek is the fairness fixture week that every report surface
// is checked against: the store's figures, the report pages and their CSV
// exports, "gpubook report preview" and both parts of the weekly email.
// One week of data (Build) and one set of figures worked out by hand
// (Expect) are shared by the store, web, cmd and reports tests, so a
// figure cannot read one way on the page and another in the email.
//
// It is test support: only _test.go files (and nothing the server links)
// import it.
package fairweek

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

// Berlin is the fixture's cluster time zone.
var Berlin = mustZone("Europe/Berlin")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// Case is one week the fixture is laid on: DST says whether its Sunday has
// 25 hours.
type Case struct {
	Week string
	DST  bool
}

// Weeks are the DST week the issue names (2026-W43, whose Sunday 25
// October has 25 hours in Berlin) and a normal one.
var Weeks = []Case{{"2026-W43", true}, {"2026-W49", false}}

// Parse returns the case's week in Berlin.
func (c Case) Parse() models.Week {
	w, err := models.ParseWeek(c.Week, Berlin)
	if err != nil {
		panic(err)
	}
	return w
}

// IDs are the fixture's users and teams.
type IDs struct {
	Ann, Ben, Cat, Dan, Eve, Fay, T1, T2 int64
}

// Names are the fixture's users, in the order Build creates them; each
// one's email is name@example.org and their display name is the name.
var Names = []string{"ann", "ben", "cat", "dan", "eve", "fay"}

// Email is the address of the fixture's user name.
func Email(name string) string { return name + "@example.org" }

// Build lays the fixture on week w of db (an empty, migrated database),
// through the ways production fills it: the users, teams and node through
// the store's admin methods, the bookings through the history import
// (models.ParseImportCSV and ImportBookings, as "gpubook import bookings"
// does), the early release through ReleaseBooking, and the per-minute use
// through the agent's ingestion (IngestUsage), which stamps it. Node n1
// has GPUs 0–5; teams T1 {ann (lead), ben} and T2 {cat (lead), dan}; eve
// and fay in no team.
//
//	case                                  booked       busy   other figures
//	ann g0 Mon 10–12, her process 80 %    2 h          120
//	ann g1 Tue 10–14, used 10–12 only     4 h          120    2 h idle
//	ann g2 Sun 22–Mon(next) 02, 60 %      2 h          120    crosses out of the week: its end is next week's
//	ben g2 Wed 09–11, nothing             2 h          0      no-show
//	ben g0 Thu 08–16, used 08–10 (90 %),  2 h          120    6 h given back
//	    released 10:00
//	ben g3 Fri 10–11, 50 % but no         1 h          0      60 min without per-user data; no-show
//	    per-user rows
//	cat g3 Wed 14–16; dan's process       2 h          0      no-show; used by dan 60 min; dan 60 min unbooked
//	    on it 14–15 (60 %)
//	cat g4 Thu 10–12, her process holds   2 h          0      120 min held idle; no-show
//	    30 GiB at 0 %
//	eve g5 Fri 10–13, 50 %, no booking    —            —      180 min unbooked (eve is in no team)
//	dan and fay g5 Fri 14:00–14:30, 40 %  —            —      30 min unbooked each; the cluster counts 30, not 60
//	fay g1 Sat 22–Sun 06, 100 %           9 h (8 h)    540 (480)  across the DST night: 2 h Saturday, 7 h (6 h) Sunday
//	eve g0 Sat 08–18, 60 % 08:00–08:50   10 h         50     no-show: busy 50 of 600 minutes, under 10 %
//	eve g0 Sun 08–10, 60 % 08:00–08:12   2 h          12     not a no-show: 12 of 120 minutes is 10 %, not under
//	dan g4 Sat 10–14, cancelled by dan    —            —      cancelled late: 10–11 is under 2 h after the
//	    Sat 09:00                                             cancel, 1 h charged as idle; 11–14 nothing
//	dan g4 Sun 12–14, cancelled by dan    —            —      cancelled a day ahead: nothing
//	    Sat 12:00
//	ann g3 Mon 10–11, her process 6 %     1 h          60     busy (6 % is over the busy threshold) but low-intensity:
//	                                                          its busy minutes average 6 %, under 25 %
//	gus g4 Sat 14–15, 3 %, no booking     —            —      gus is no gpubook user: 60 min by Unix account "gus"
//
// Mean utilisation of the booked GPU-minutes with a record: ann 120×80 % +
// 120×70 % + 120×60 % + 60×6 % over 420 = 60.9 %; ben 120×90 % + 60×50 %
// over 180 = 76.7 %; cat 60×60 % + 120×0 % over 180 = 20.0 %; eve 62×60 %
// = 60.0 %; fay 100 %; dan n/a (nothing booked).
func Build(t testing.TB, db *store.DB, w models.Week) IDs {
	t.Helper()
	b := &builder{t: t, db: db}
	b.node(6)
	var id IDs
	id.Ann, id.Ben, id.Cat, id.Dan, id.Eve, id.Fay = b.user("ann"), b.user("ben"), b.user("cat"), b.user("dan"), b.user("eve"), b.user("fay")
	id.T1, id.T2 = b.team("T1", id.Ann, id.Ben), b.team("T2", id.Cat, id.Dan)
	at := func(day, hh int) time.Time {
		d := w.Start.AddDate(0, 0, day)
		return time.Date(d.Year(), d.Month(), d.Day(), hh, 0, 0, 0, w.Start.Location())
	}
	b.importBookings(w.End.AddDate(0, 0, 7), []booking{
		{"ann", 0, at(0, 10), at(0, 12)}, {"ann", 1, at(1, 10), at(1, 14)}, {"ann", 2, at(6, 22), at(7, 2)},
		{"ben", 2, at(2, 9), at(2, 11)}, {"ben", 0, at(3, 8), at(3, 16)}, {"ben", 3, at(4, 10), at(4, 11)},
		{"cat", 3, at(2, 14), at(2, 16)}, {"cat", 4, at(3, 10), at(3, 12)},
		{"fay", 1, at(5, 22), at(6, 6)},
		{"eve", 0, at(5, 8), at(5, 18)}, {"eve", 0, at(6, 8), at(6, 10)},
		{"dan", 4, at(5, 10), at(5, 14)}, {"dan", 4, at(6, 12), at(6, 14)},
		{"ann", 3, at(0, 10), at(0, 11)},
	})
	b.use(0, at(0, 10), at(0, 12), 80, proc{"ann", 8000})
	b.use(1, at(1, 10), at(1, 12), 70, proc{"ann", 8000})
	b.use(2, at(6, 22), at(7, 2), 60, proc{"ann", 4000})

	b.use(0, at(3, 8), at(3, 10), 90, proc{"ben", 10000})
	b.release(id.Ben, at(3, 8), at(3, 10))
	b.use(3, at(4, 10), at(4, 11), 50)

	b.use(3, at(2, 14), at(2, 15), 60, proc{"dan", 5000})
	b.use(4, at(3, 10), at(3, 12), 0, proc{"cat", 30720})

	b.use(5, at(4, 10), at(4, 13), 50, proc{"eve", 6000})
	b.use(5, at(4, 14), at(4, 14).Add(30*time.Minute), 40, proc{"dan", 2000}, proc{"fay", 3000})

	b.use(1, at(5, 22), at(6, 6), 100, proc{"fay", 9000})

	b.use(0, at(5, 8), at(5, 8).Add(50*time.Minute), 60, proc{"eve", 4000})
	b.use(0, at(6, 8), at(6, 8).Add(12*time.Minute), 60, proc{"eve", 4000})
	b.cancel(id.Dan, at(5, 10), at(5, 9))
	b.cancel(id.Dan, at(6, 12), at(5, 12))

	b.use(3, at(0, 10), at(0, 11), 6, proc{"ann", 8000})
	b.use(4, at(5, 14), at(5, 15), 3, proc{"gus", 1000})
	return id
}

// builder fails the test on the first error.
type builder struct {
	t    testing.TB
	db   *store.DB
	gpus []models.GPU
	n    int // usage batches sent
}

func (b *builder) must(err error) {
	b.t.Helper()
	if err != nil {
		b.t.Fatal(err)
	}
}

func (b *builder) user(name string) int64 {
	b.t.Helper()
	u := &models.User{Email: Email(name), Name: name}
	b.must(b.db.CreateUser(context.Background(), u, models.CLIActor))
	return u.ID
}

func (b *builder) team(name string, lead int64, members ...int64) int64 {
	b.t.Helper()
	ctx := context.Background()
	tm := &models.Team{Name: name}
	b.must(b.db.CreateTeam(ctx, tm, models.CLIActor))
	for i, id := range append([]int64{lead}, members...) {
		role := models.RoleMember
		if i == 0 {
			role = models.RoleLead
		}
		b.must(b.db.SetMembership(ctx, &models.Membership{TeamID: tm.ID, UserID: id, Role: role}, models.CLIActor))
	}
	return tm.ID
}

func (b *builder) node(n int) {
	b.t.Helper()
	gpus, err := models.NewNodeGPUs("n1", n, "NVIDIA A100-SXM4-80GB", 81920)
	b.must(err)
	b.must(b.db.CreateNode(context.Background(), &models.Node{Name: "n1"}, gpus, models.CLIActor))
	b.gpus, err = b.db.GPUs(context.Background())
	b.must(err)
}

// gpu is the GPU of index g.
func (b *builder) gpu(g int) models.GPU {
	b.t.Helper()
	for _, x := range b.gpus {
		if x.Index == g {
			return x
		}
	}
	b.t.Fatalf("fairweek: no GPU %d", g)
	return models.GPU{}
}

// booking is one row of the import file.
type booking struct {
	user     string
	gpu      int
	from, to time.Time
}

// importBookings writes the bookings as an import file and imports it all
// or nothing, at now.
func (b *builder) importBookings(now time.Time, rows []booking) {
	b.t.Helper()
	var csv strings.Builder
	csv.WriteString("email,node,gpus,start,end,note\n")
	for _, r := range rows {
		fmt.Fprintf(&csv, "%s,n1,%d,%s,%s,fairweek\n", Email(r.user), r.gpu, r.from.Format(time.RFC3339), r.to.Format(time.RFC3339))
	}
	parsed, bad, err := models.ParseImportCSV(strings.NewReader(csv.String()), Berlin)
	b.must(err)
	res, err := b.db.ImportBookings(context.Background(), parsed, bad, false, now, models.CLIActor)
	b.must(err)
	if !res.Written || res.Imported != len(rows) {
		b.t.Fatalf("fairweek import: %+v", res)
	}
}

// release ends user's booking that starts at from at "at", as the user's
// release button does then.
func (b *builder) release(user int64, from, at time.Time) {
	b.t.Helper()
	ctx := context.Background()
	var id int64
	b.must(b.db.Gorm.WithContext(ctx).Raw("SELECT id FROM bookings WHERE user_id = ? AND starts_at = ?", user, from.UTC()).Scan(&id).Error)
	u, err := b.db.User(ctx, user)
	b.must(err)
	_, err = b.db.ReleaseBooking(ctx, id, u, at)
	b.must(err)
}

// cancel cancels user's booking that starts at from at "at", as the
// user's cancel button does then.
func (b *builder) cancel(user int64, from, at time.Time) {
	b.t.Helper()
	ctx := context.Background()
	var id int64
	b.must(b.db.Gorm.WithContext(ctx).Raw("SELECT id FROM bookings WHERE user_id = ? AND starts_at = ?", user, from.UTC()).Scan(&id).Error)
	u, err := b.db.User(ctx, user)
	b.must(err)
	_, err = b.db.CancelBooking(ctx, id, u, at)
	b.must(err)
}

// proc is one unix user's processes on a GPU in a minute.
type proc struct {
	name string
	mem  int64
}

// use sends per-minute records of GPU g over [from, to) the way the agent
// does: batches through IngestUsage, which stamps them.
func (b *builder) use(g int, from, to time.Time, util float64, procs ...proc) {
	b.t.Helper()
	var recs []wire.UsageRecord
	for m := from.UTC(); m.Before(to.UTC()); m = m.Add(time.Minute) {
		u := util
		r := wire.UsageRecord{GPUUUID: b.gpu(g).UUID, Minute: m, UtilAvgPct: &u, UtilMaxPct: &u, MemTotalMiB: 81920, Samples: 6}
		for _, p := range procs {
			r.MemUsedMiB += p.mem
			r.Users = append(r.Users, wire.UserUsage{User: p.name, UID: 1000, MemoryMiB: p.mem, Processes: 1, Busy: util > 0})
		}
		recs = append(recs, r)
	}
	for len(recs) > 0 {
		k := min(len(recs), wire.MaxRecordsPerBatch)
		b.n++
		batch := wire.UsageBatch{Node: "n1", BatchID: fmt.Sprint("fairweek-", b.n), Records: recs[:k]}
		if _, err := telemetry.New(b.db).IngestUsage(context.Background(), b.gpu(g).NodeID, batch, 0, to.Add(time.Hour)); err != nil {
			b.t.Fatal(err)
		}
		recs = recs[k:]
	}
}
