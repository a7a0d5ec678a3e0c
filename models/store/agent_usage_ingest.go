package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
)

// IngestUsage stores a usage batch held in memory (IngestUsageStream).
func (db *DB) IngestUsage(ctx context.Context, nodeID int64, b wire.UsageBatch, retention time.Duration, now time.Time) (models.UsageResult, error) {
	return db.IngestUsageStream(ctx, nodeID, b.Stream(), retention, now)
}

// usageScan is what the first reading of a batch learns: the GPUs it
// names, in order of appearance, its first and last minute, how many
// records and user rows it holds, and, when asked (named is not nil) and
// while it is small enough for the pipelined path (pipelinedIngest), the
// unix names its users go by.
type usageScan struct {
	uuids          []string
	seen           map[string]bool
	lo, hi         time.Time
	records, users int
	names          []string
	named          map[string]bool
}

// scanUsage reads the batch a first time: it checks every record
// (wire's rules and the future-minute rule) and learns what the second
// reading needs: with names, the users' names for the pipelined path.
func scanUsage(s wire.UsageStream, retention time.Duration, now time.Time, names bool) (usageScan, error) {
	scan := usageScan{seen: map[string]bool{}}
	if names {
		scan.named = map[string]bool{}
	}
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
	if s.named == nil || !s.small() {
		return
	}
	for _, u := range r.Users {
		if !s.named[u.User] {
			s.named[u.User] = true
			s.names = append(s.names, u.User)
		}
	}
}

// IngestUsageStream stores a usage batch with INSERT … ON CONFLICT DO
// NOTHING on the (GPU, minute) and (GPU, minute, user) keys, so that a
// resend, in part or whole, never counts twice. It reads the batch twice
// and never holds it whole: first to check every record (wire's rules and
// the future-minute rule) before it touches the database, then, in one
// transaction, to store them a chunk of usageChunk records at a time,
// through a rowLoader (agent_rows.go). Refused (an invalid record, a
// foreign GPU) means nothing written. On PostgreSQL a small batch, a
// node's minute, is stored in three round trips instead
// (agent_usage_ingest_pg.go), with the same statements and result.
func (db *DB) IngestUsageStream(ctx context.Context, nodeID int64, s wire.UsageStream, retention time.Duration, now time.Time) (models.UsageResult, error) {
	scan, err := scanUsage(s, retention, now, db.Dialect == Postgres)
	if err != nil {
		return models.UsageResult{}, models.AgentError(err)
	}
	if db.Dialect == Postgres && scan.small() {
		res, done, err := db.ingestPipelined(ctx, nodeID, s, scan, retention, now)
		if err != nil {
			return models.UsageResult{}, mapErr(models.AgentError(err), "usage")
		}
		if done {
			return res, nil
		}
	}
	var res models.UsageResult
	err = db.bulkTx(ctx, func(tx *gorm.DB, l *rowLoader) error {
		res = models.UsageResult{}
		ids, err := db.nodeGPUIDs(tx, nodeID, scan.uuids)
		if err != nil {
			return err
		}
		lo, hi := scan.lo, scan.hi.Add(time.Minute)
		holders, err := usageHolders(tx, nodeID, scan.uuids, lo, hi)
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
			return restampUsage(tx, mapValues(ids), lo, hi)
		}
		return nil
	})
	if err != nil {
		return models.UsageResult{}, mapErr(models.AgentError(err), "usage")
	}
	return res, nil
}
