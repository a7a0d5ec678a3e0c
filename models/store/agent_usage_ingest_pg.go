package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
)

// On PostgreSQL a node's steady state — one batch a minute, a record per
// GPU — took eight round trips through GORM: BEGIN, the node's GPUs, the
// bookings that held them, the unix names explicitly owned, the users who
// go by their email's local part, the two inserts, COMMIT. On a small
// machine a round trip costs about what the statements do, so a small
// batch (pipelinedIngest) is stored in three on the driver's own
// connection (pgConn): BEGIN with the four reads, then both inserts, then
// COMMIT. The statements and the rules are the GORM path's; a batch that
// needs more than one piece a table, or a resend that brought user rows
// for minutes stored before (they must be restamped before the commit),
// is rolled back and stored the GORM way (IngestUsageStream).

// pipelinedIngest is the most records, and the most user rows, a batch
// may hold to take the pipelined path: a minute of a node of up to 64
// GPUs, far below usageChunk (one chunk, written once).
const pipelinedIngest = 64

// small says whether the batch scanned so far may take the pipelined path.
func (s *usageScan) small() bool { return s.records <= pipelinedIngest && s.users <= pipelinedIngest }

// The pipelined path's reads are the GORM path's statements in
// PostgreSQL's form (usageGPUsSQL, usageHoldersSQL, unixOwnersSQL), and
// the users who go by a name's email local part with the patterns as one
// array where unixNamesIn writes one LIKE each.
var (
	ingestGPUsPG    = pgArrays(usageGPUsSQL)
	ingestHoldersPG = pgArrays(usageHoldersSQL)
	ingestOwnersPG  = pgArrays(unixOwnersSQL)
	ingestAssumedPG = `SELECT id, email FROM users WHERE unix_name IS NULL AND email LIKE ANY($1)`
)

// The two inserts, each taking its table's one piece as its parameter.
var (
	ingestUsagePG     = DollarParams(usageTable.pgInsert)
	ingestUserUsagePG = DollarParams(userUsageTable.pgInsert)
)

// pgArrays writes q, whose every "IN ?" takes a slice (GORM expands it to
// a list), for the driver: each such marker an array parameter
// (= ANY($n)), every marker numbered.
func pgArrays(q string) string { return DollarParams(strings.ReplaceAll(q, " IN ?", " = ANY(?)")) }

// ingestPipelined stores a small batch, scanned and checked by
// IngestUsageStream, in three round trips. done is false when the batch
// must take the GORM path after all; nothing is written then.
func (db *DB) ingestPipelined(ctx context.Context, nodeID int64, s wire.UsageStream, scan usageScan, retention time.Duration, now time.Time) (res models.UsageResult, done bool, err error) {
	lo, hi := scan.lo, scan.hi.Add(time.Minute)
	err = db.pgConn(ctx, func(c *pgx.Conn) error {
		ids, holders, names, err := ingestReads(ctx, c, nodeID, scan, lo, hi)
		if err != nil {
			return err
		}
		l := &rowLoader{ctx: ctx, lines: true, pieceCap: 4 << 10}
		w := newUsageWriter(l, ids, holders, scan.records, scan.users)
		w.userIDs = names // every name of the batch: flush looks none up
		err = s.Each(func(_ int, r *wire.UsageRecord) error {
			if verdict, _ := models.CheckUsageRecord(*r, now, retention); verdict == models.UsageStale {
				res.Stale++
				return nil
			}
			return w.add(r)
		})
		if err == nil {
			err = w.flush()
		}
		if errors.Is(err, errPieceFull) {
			return nil // not done: the GORM path copies
		}
		if err != nil {
			return err
		}
		inserted, usersInserted, err := ingestWrites(ctx, c, l)
		if err != nil {
			return err
		}
		if inserted < int64(w.rows) && usersInserted > 0 {
			return nil // not done: the GORM path restamps the minutes stored before
		}
		if _, err := c.Exec(ctx, "COMMIT"); err != nil {
			return err
		}
		res.Inserted, res.Duplicates = int(inserted), w.rows-int(inserted)
		done = true
		return nil
	})
	return res, done, err
}

// ingestReads sends BEGIN and the batch's four reads in one round trip,
// and returns the node's GPUs by UUID, the holders of [lo, hi) and every
// name of the batch resolved (0: no gpubook user).
func ingestReads(ctx context.Context, c *pgx.Conn, nodeID int64, scan usageScan, lo, hi time.Time) (map[string]int64, []models.UsageHolder, map[string]int64, error) {
	patterns := make([]string, len(scan.names))
	for i, n := range scan.names {
		patterns[i] = n + "@%"
	}
	batch := &pgx.Batch{}
	batch.Queue("BEGIN")
	batch.Queue(ingestGPUsPG, scan.uuids)
	batch.Queue(ingestHoldersPG, scan.uuids, nodeID, utc(hi), utc(lo), models.StatusConfirmed)
	batch.Queue(ingestOwnersPG, scan.names)
	batch.Queue(ingestAssumedPG, patterns)
	var gpus []gpuRow
	var holders []models.UsageHolder
	owners := make(map[string]int64, len(scan.names))
	var assumed []models.User
	res := sendBatch(ctx, c, batch)
	res.exec()
	res.rows(func(r sqlRows) error {
		var g gpuRow
		err := r.Scan(&g.ID, &g.NodeID, &g.UUID)
		gpus = append(gpus, g)
		return err
	})
	res.rows(func(r sqlRows) error {
		var h models.UsageHolder
		err := r.Scan(&h.GPUID, &h.BookingID, &h.UserID, &h.StartsAt, &h.EndsAt)
		h.StartsAt, h.EndsAt = h.StartsAt.UTC(), h.EndsAt.UTC()
		holders = append(holders, h)
		return err
	})
	res.rows(func(r sqlRows) error {
		var name string
		var id int64
		err := r.Scan(&name, &id)
		owners[name] = id
		return err
	})
	res.rows(func(r sqlRows) error {
		var u models.User
		err := r.Scan(&u.ID, &u.Email)
		assumed = append(assumed, u)
		return err
	})
	if err := res.close(); err != nil {
		return nil, nil, nil, fmt.Errorf("store: usage reads: %w", err)
	}
	ids, err := batchGPUIDs(nodeID, scan.uuids, gpus)
	if err != nil {
		return nil, nil, nil, err
	}
	names := withAssumedNames(owners, assumed)
	for _, n := range scan.names {
		if _, ok := names[n]; !ok {
			names[n] = 0
		}
	}
	return ids, holders, names, nil
}

// ingestWrites sends the loader's two pieces (GPU minutes first, then
// their users) in one round trip and says how many rows each table took.
func ingestWrites(ctx context.Context, c *pgx.Conn, l *rowLoader) (inserted, usersInserted int64, err error) {
	usage, users := l.piece(usageTable), l.piece(userUsageTable)
	if usage == "" {
		return 0, 0, nil // every record stale: no user rows either
	}
	batch := &pgx.Batch{}
	batch.Queue(ingestUsagePG, usage)
	if users != "" {
		batch.Queue(ingestUserUsagePG, users)
	}
	res := sendBatch(ctx, c, batch)
	inserted = res.count()
	if users != "" {
		usersInserted = res.count()
	}
	if err := res.close(); err != nil {
		return 0, 0, fmt.Errorf("store: usage rows: %w", err)
	}
	return inserted, usersInserted, nil
}
