package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

// maxDemoUsageDays is how far back the demo's agent records go by default.
const maxDemoUsageDays = 7

// The demo's week of agent records: every GPU-minute of the last seven
// days (or of --usage-days), sent through the same ingestion the agents use. Each past booking
// follows one of three stories, so that the weekly report has something to
// tell: used throughout, used for the first half and then held idle (the
// memory stays allocated), or never used. Outside bookings the GPUs idle,
// except for a few hours of unbooked use.
const (
	usageFull = iota
	usageHalf
	usageNone
)

// usageSpan is a stretch of one GPU's week with one user's story.
type usageSpan struct {
	start, end time.Time
	user       string // unix name
	uid        int
	story      int
}

// seedUsage writes the week of records. It runs after seedBookings and
// ingests with ON CONFLICT DO NOTHING, so running the demo again adds nothing.
func (s *seeder) seedUsage(ctx context.Context, d demoData) error {
	if s.usageDays == 0 {
		return nil
	}
	to := s.now.UTC().Truncate(time.Minute)
	from := to.Add(-time.Duration(s.usageDays) * 24 * time.Hour)
	r := rand.New(rand.NewPCG(7, uint64(from.Unix()/86400)))
	spans := s.usageSpans(r, d, from, to)
	nodes, err := s.db.Nodes(ctx)
	if err != nil {
		return err
	}
	total := 0
	for i, n := range nodes {
		fmt.Fprintf(s.progress, "demo: writing %d day(s) of agent records for %s (node %d of %d)…\n", s.usageDays, n.Name, i+1, len(nodes))
		var recs []wire.UsageRecord
		for m := from; m.Before(to); m = m.Add(time.Minute) {
			for _, g := range n.GPUs {
				if g.IsMIGParent() { // its instances report, the split GPU does not
					continue
				}
				recs = append(recs, usageRecord(r, g, m, spans[g.ID]))
			}
			if len(recs)+len(n.GPUs) > wire.MaxRecordsPerBatch || !m.Add(time.Minute).Before(to) {
				batch := wire.UsageBatch{Node: n.Name, BatchID: fmt.Sprintf("demo-%d-%d", n.ID, m.Unix()), Records: recs}
				res, err := telemetry.New(s.db).IngestUsage(ctx, n.ID, batch, models.DefaultUsageRetentionDays*24*time.Hour, s.now)
				if err != nil {
					return fmt.Errorf("usage of %s: %w", n.Name, err)
				}
				total += res.Inserted
				recs = nil
			}
		}
	}
	s.added.usage = total
	return nil
}

// usageSpans gives each past booking its story and adds, per GPU and day,
// a one-in-eight chance of an hour or two of somebody's unbooked use.
func (s *seeder) usageSpans(r *rand.Rand, d demoData, from, to time.Time) map[int64][]usageSpan {
	out := map[int64][]usageSpan{}
	for _, b := range d.Bookings {
		if !b.Start.Before(to) || !b.End.After(from) {
			continue
		}
		story := []int{usageFull, usageFull, usageFull, usageHalf, usageHalf, usageNone}[r.IntN(6)]
		for _, g := range b.GPUs {
			id := s.gpus[gpuKey(b.Node, g)]
			out[id] = append(out[id], usageSpan{b.Start, b.End, models.UnixName(b.UserEmail), 1000 + int(s.users[b.UserEmail]), story})
		}
	}
	for id := range s.gpus {
		gid := s.gpus[id]
		for day := from.Truncate(24 * time.Hour); day.Before(to); day = day.Add(24 * time.Hour) {
			if r.IntN(8) != 0 {
				continue
			}
			u := d.Users[r.IntN(len(d.Users))]
			start := day.Add(time.Duration(r.IntN(22)) * time.Hour)
			span := usageSpan{start, start.Add(time.Duration(1+r.IntN(2)) * time.Hour), models.UnixName(u.Email), 1000 + int(s.users[u.Email]), usageFull}
			if !bookedDuring(out[gid], span) {
				out[gid] = append(out[gid], span)
			}
		}
	}
	return out
}

func bookedDuring(spans []usageSpan, x usageSpan) bool {
	for _, s := range spans {
		if models.Overlaps(s.start, s.end, x.start, x.end) {
			return true
		}
	}
	return false
}

// usageRecord is GPU g's minute m under whichever span covers it.
func usageRecord(r *rand.Rand, g models.GPU, m time.Time, spans []usageSpan) wire.UsageRecord {
	rec := wire.UsageRecord{GPUUUID: g.UUID, Minute: m, MemUsedMiB: 0, MemTotalMiB: g.MemoryMiB, Samples: 12}
	util, mem := 0.0, int64(0)
	for _, s := range spans {
		if m.Before(s.start) || !m.Before(s.end) {
			continue
		}
		half := m.Sub(s.start) >= s.end.Sub(s.start)/2
		switch {
		case s.story == usageFull, s.story == usageHalf && !half:
			util, mem = 55+40*r.Float64(), g.MemoryMiB/2
		case s.story == usageHalf:
			mem = g.MemoryMiB / 3 // the model stays loaded, nothing runs
		default:
			continue // booked, never used
		}
		rec.Users = []wire.UserUsage{{User: s.user, UID: s.uid, MemoryMiB: mem, Processes: 1, Busy: util >= 5}}
		break
	}
	rec.UtilAvgPct, rec.UtilMaxPct = &util, &util
	rec.MemUsedMiB = min(mem+512, g.MemoryMiB)
	return rec
}
