package fairweek

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

// The late case (issue 37, point 1): ann's booking on g2 from Sunday 22:00
// to Monday 02:00 crosses into the next week. Her agent's minutes of it
// reach the portal only after the hourly sums of those hours were made,
// and she stopped at midnight, so the next week has none of them. Sent
// with those minutes still unsummed, the next week must not call the
// booking a no-show: it was busy from 22:00 to midnight.
//
//	week      ann's g2 booking  booked  busy  no-show
//	the week  Sun 22–24         2 h     2 h   —  (it ends next week)
//	the next  Mon 00–02         2 h     0 h   0  (it was used on Sunday)

// lateSunday is the late minutes' range: ann's g2 from Sunday 22:00 to
// midnight of week w.
func lateSunday(w models.Week) (from, to time.Time) {
	sun := w.Start.AddDate(0, 0, 6)
	from = time.Date(sun.Year(), sun.Month(), sun.Day(), 22, 0, 0, 0, w.Start.Location())
	return from, w.End
}

// HoldBackLate removes the minutes of ann's g2 booking that Build sent
// (Sunday 22:00 to Monday 02:00), as if her agent had not sent them yet;
// those of Monday never come (she stopped at midnight).
func HoldBackLate(t testing.TB, db *store.DB, w models.Week) {
	t.Helper()
	from, _ := lateSunday(w)
	to := w.End.Add(2 * time.Hour)
	b := &builder{t: t, db: db}
	b.gpus, _ = db.GPUs(context.Background())
	for _, table := range []string{"gpu_user_usage_minutes", "gpu_usage_minutes"} {
		b.must(db.Gorm.Exec("DELETE FROM "+table+" WHERE gpu_id = ? AND minute >= ? AND minute < ?", b.gpu(2).ID, from.UTC(), to.UTC()).Error)
	}
}

// SendLate delivers ann's held-back Sunday minutes (22:00 to midnight at
// 60 %) through the agent's ingestion at now, as a late batch.
func SendLate(t testing.TB, db *store.DB, w models.Week, now time.Time) {
	t.Helper()
	b := &builder{t: t, db: db}
	var err error
	b.gpus, err = db.GPUs(context.Background())
	b.must(err)
	from, to := lateSunday(w)
	util := 60.0
	var recs []wire.UsageRecord
	for m := from.UTC(); m.Before(to.UTC()); m = m.Add(time.Minute) {
		recs = append(recs, wire.UsageRecord{GPUUUID: b.gpu(2).UUID, Minute: m, UtilAvgPct: &util, UtilMaxPct: &util, MemTotalMiB: 81920,
			MemUsedMiB: 4000, Samples: 6, Users: []wire.UserUsage{{User: "ann", UID: 1000, MemoryMiB: 4000, Processes: 1, Busy: true}}})
	}
	for i := 0; len(recs) > 0; i++ {
		k := min(len(recs), wire.MaxRecordsPerBatch)
		batch := wire.UsageBatch{Node: "n1", BatchID: fmt.Sprint("fairweek-late-", i), Records: recs[:k]}
		_, err := telemetry.New(db).IngestUsage(context.Background(), b.gpu(2).NodeID, batch, 0, now)
		b.must(err)
		recs = recs[k:]
	}
}

// LateNext is ann's figures table of the week after the fixture's, worked
// out by hand, by the translation key of each row's label: her g2
// booking's last 2 h, idle, and no no-show; nobody else booked or used
// anything that week. Rows not named are not checked.
var LateNext = [][]string{
	{"report.booked", "2.0"},
	{"report.busy", "0.0"},
	{"report.efficiency", "0%"},
	{"report.idle", "2.0"},
	{"report.no_shows", "0"},
	{"report.share_booked", "100%"},
	{"report.share_busy", "0%"},
}
