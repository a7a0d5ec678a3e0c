package telemetry

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/wire"
)

// IngestUsage stores a usage batch held in memory (IngestUsageStream).
func (db *Store) IngestUsage(ctx context.Context, nodeID int64, b wire.UsageBatch, retention time.Duration, now time.Time) (models.UsageResult, error) {
	return db.IngestUsageStream(ctx, nodeID, b.Stream(), retention, now)
}

// usageScan is what the first reading of a batch learns: the GPUs it
// names, in order of appearance, its first and last minute, and how many
// records and user rows it holds.
type usageScan struct {
	uuids          []string
	seen           map[string]bool
	lo, hi         time.Time
	records, users int
}

// smallBatch is the most records, and the most user rows, of a batch
// whose loader starts with a few kB a table rather than a whole piece:
// a minute of a node of up to 64 GPUs.
const smallBatch = 64

// small says whether the batch is a node's minute (smallBatch).
func (s *usageScan) small() bool { return s.records <= smallBatch && s.users <= smallBatch }

// scanUsage reads the batch a first time: it checks every record
// (wire's rules and the future-minute rule) and learns what the second
// reading needs.
func scanUsage(s wire.UsageStream, retention time.Duration, now time.Time) (usageScan, error) {
	scan := usageScan{seen: map[string]bool{}}
	err := s.ValidateEach(func(_ int, r *wire.UsageRecord) error {
		if _, err := models.CheckUsageRecord(*r, now, retention); err != nil {
			return err
		}
		scan.add(r)
		return nil
	})
	return scan, err
}

func (s *usageScan) add(r *wire.UsageRecord) {
	if !s.seen[r.GPUUUID] {
		s.seen[r.GPUUUID] = true
		s.uuids = append(s.uuids, r.GPUUUID)
	}
	if s.lo.IsZero() || r.Minute.Before(s.lo) {
		s.lo = r.Minute
	}
	if r.Minute.After(s.hi) {
		s.hi = r.Minute
	}
	s.records++
	s.users += len(r.Users)
}

// IngestUsageStream stores a usage batch with INSERT … ON CONFLICT DO
// NOTHING on the (GPU, minute) and (GPU, minute, user) keys, so that a
// resend, in part or whole, never counts twice. It reads the batch twice
// and never holds it whole: first to check every record (wire's rules and
// the future-minute rule) before it touches the database, then, in one
// transaction, to store them a chunk of usageChunk records at a time,
// through a rowLoader (agent_rows.go): every batch, a node's minute or
// an hour's backlog, the same way on both databases. Refused (an invalid
// record, a foreign GPU) means nothing written.
func (db *Store) IngestUsageStream(ctx context.Context, nodeID int64, s wire.UsageStream, retention time.Duration, now time.Time) (models.UsageResult, error) {
	scan, err := scanUsage(s, retention, now)
	if err != nil {
		return models.UsageResult{}, models.AgentError(err)
	}
	var res models.UsageResult
	err = db.bulkTx(ctx, func(tx *gorm.DB, l *rowLoader) error {
		res = models.UsageResult{}
		ids, err := store.NodeGPUIDs(tx, nodeID, scan.uuids)
		if err != nil {
			return err
		}
		lo, hi := scan.lo, scan.hi.Add(time.Minute)
		holders, err := store.UsageHolders(tx, nodeID, scan.uuids, lo, hi)
		if err != nil {
			return err
		}
		if scan.small() {
			l.pieceCap = 4 << 10 // a minute of a node: a few kB a table
		}
		w := newUsageWriter(l, ids, holders, scan.records, scan.users)
		err = s.Each(func(_ int, r *wire.UsageRecord) error {
			if verdict, _ := models.CheckUsageRecord(*r, now, retention); verdict == models.UsageStale {
				res.Stale++
				return nil
			}
			return w.add(r)
		})
		if err != nil {
			return err
		}
		inserted, usersInserted, err := w.finish()
		if err != nil {
			return err
		}
		res.Inserted, res.Duplicates = int(inserted), w.rows-int(inserted)
		if inserted < int64(w.rows) && usersInserted > 0 {
			// A resend brought user rows for minutes stored before: their
			// stamps were taken without them.
			return store.RestampTx(tx, mapValues(ids), lo, hi)
		}
		return nil
	})
	if err != nil {
		return models.UsageResult{}, store.MapErr(models.AgentError(err), "usage")
	}
	return res, nil
}
