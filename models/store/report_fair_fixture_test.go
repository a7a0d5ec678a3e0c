package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/wire"
)

// The fairness week: every case the report's definitions (docs/reports.md)
// must get right, laid on week w of Europe/Berlin — 2026-W43, whose Sunday
// has 25 hours, and a normal week. Bookings are written as the store keeps
// them; usage goes in through the agent's ingestion (IngestUsage), so the
// stamps are the ones production writes. Node n1 has GPUs g0–g5; teams
// T1 {ann (lead), ben} and T2 {cat (lead), dan}; eve and fay in no team.
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
type fairIDs struct {
	ann, ben, cat, dan, eve, fay, t1, t2 int64
}

// fairWeek builds the table above on week w; dst says whether w's Sunday
// has 25 hours.
func fairWeek(t *testing.T, db *store.DB, w models.Week) fairIDs {
	t.Helper()
	f := &reportFixture{t: t, db: db}
	f.node(6)
	var id fairIDs
	id.ann, id.ben, id.cat, id.dan, id.eve, id.fay = f.user("ann"), f.user("ben"), f.user("cat"), f.user("dan"), f.user("eve"), f.user("fay")
	id.t1, id.t2 = f.team("T1", id.ann, id.ben), f.team("T2", id.cat, id.dan)
	at := func(day, hh int) time.Time {
		d := w.Start.AddDate(0, 0, day)
		return time.Date(d.Year(), d.Month(), d.Day(), hh, 0, 0, 0, w.Start.Location())
	}
	in := &ingester{t: t, db: db, f: f}
	f.book(id.ann, models.StatusConfirmed, at(0, 10), at(0, 12), 0)
	in.use(0, at(0, 10), at(0, 12), 80, user{"ann", 8000})
	f.book(id.ann, models.StatusConfirmed, at(1, 10), at(1, 14), 1)
	in.use(1, at(1, 10), at(1, 12), 70, user{"ann", 8000})
	f.book(id.ann, models.StatusConfirmed, at(6, 22), at(7, 2), 2)
	in.use(2, at(6, 22), at(7, 2), 60, user{"ann", 4000})

	f.book(id.ben, models.StatusConfirmed, at(2, 9), at(2, 11), 2)
	b := f.book(id.ben, models.StatusConfirmed, at(3, 8), at(3, 16), 0)
	in.use(0, at(3, 8), at(3, 10), 90, user{"ben", 10000})
	f.release(b, at(3, 10))
	f.book(id.ben, models.StatusConfirmed, at(4, 10), at(4, 11), 3)
	in.use(3, at(4, 10), at(4, 11), 50)

	f.book(id.cat, models.StatusConfirmed, at(2, 14), at(2, 16), 3)
	in.use(3, at(2, 14), at(2, 15), 60, user{"dan", 5000})
	f.book(id.cat, models.StatusConfirmed, at(3, 10), at(3, 12), 4)
	in.use(4, at(3, 10), at(3, 12), 0, user{"cat", 30720})

	in.use(5, at(4, 10), at(4, 13), 50, user{"eve", 6000})
	in.use(5, at(4, 14), at(4, 14).Add(30*time.Minute), 40, user{"dan", 2000}, user{"fay", 3000})

	from, to := at(5, 22), at(6, 6)
	f.book(id.fay, models.StatusConfirmed, from, to, 1)
	in.use(1, from, to, 100, user{"fay", 9000})
	return id
}

// user is one unix user's process row of a minute.
type user struct {
	name string
	mem  int64
}

// ingester sends usage the way the agent does: batches of per-minute
// records through IngestUsage, which stamps them.
type ingester struct {
	t  *testing.T
	db *store.DB
	f  *reportFixture
	n  int
}

func (in *ingester) use(g int, from, to time.Time, util float64, users ...user) {
	in.t.Helper()
	ctx := context.Background()
	gpus, err := in.db.GPUs(ctx)
	if err != nil {
		in.t.Fatal(err)
	}
	var recs []wire.UsageRecord
	for m := from.UTC(); m.Before(to.UTC()); m = m.Add(time.Minute) {
		u := util
		r := wire.UsageRecord{GPUUUID: gpus[g].UUID, Minute: m, UtilAvgPct: &u, UtilMaxPct: &u, MemTotalMiB: 81920, Samples: 6}
		for _, x := range users {
			r.MemUsedMiB += x.mem
			r.Users = append(r.Users, wire.UserUsage{User: x.name, UID: 1000, MemoryMiB: x.mem, Processes: 1, Busy: util > 0})
		}
		recs = append(recs, r)
	}
	for len(recs) > 0 {
		k := min(len(recs), wire.MaxRecordsPerBatch)
		in.n++
		b := wire.UsageBatch{Node: "n1", BatchID: fmt.Sprint("batch-", in.n), Records: recs[:k]}
		if _, err := in.db.IngestUsage(ctx, gpus[g].NodeID, b, 0, to.Add(time.Hour)); err != nil {
			in.t.Fatal(err)
		}
		recs = recs[k:]
	}
}
