package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// What the telemetry half of the store (models/store/telemetry: usage,
// violations, idle reports, partitions) shares with the store: the
// plumbing, exported once here rather than written twice, and the reads of
// the store's own tables (GPUs, bookings, unix names) that every agent
// batch checks its rows against. Nothing here takes the booking locks.

// UTC is how the store writes every time: UTC, whole seconds.
func UTC(t time.Time) time.Time { return utc(t) }

// UTCPtr is UTC of *t, nil for nil.
func UTCPtr(t *time.Time) *time.Time { return utcPtr(t) }

// Clip cuts s to at most n bytes without splitting a character.
func Clip(s string, n int) string { return clip(s, n) }

// MapErr turns a driver error into a domain error (errors.go).
func MapErr(err error, what string) error { return mapErr(err, what) }

// RetryDeadlock runs try again while PostgreSQL aborts it as a
// deadlock's victim (locks.go).
func RetryDeadlock(try func() error) error { return retryDeadlock(try) }

// WriterLock is the row lock of a writer that does not change keys.
const WriterLock = writerLock

// PGIDArray writes ids as a PostgreSQL array literal, one parameter.
func PGIDArray(ids []int64) string { return pgIDArray(ids) }

// UnixNameIDs maps the unix names an agent reported to gpubook user IDs;
// a name no user owns or assumes is absent (unix_names.go).
func (db *DB) UnixNameIDs(ctx context.Context, names []string) (map[string]int64, error) {
	return db.unixNames(ctx, names)
}

// UnixNamesTx is UnixNameIDs inside the transaction tx.
func UnixNamesTx(tx *gorm.DB, names []string) (map[string]int64, error) {
	return unixNamesIn(rawTx(tx), names)
}

// RestampTx recomputes the usage stamps of gpuIDs' minutes in [from, to)
// inside tx (usage_stamps.go), for ingest after a resend.
func RestampTx(tx *gorm.DB, gpuIDs []int64, from, to time.Time) error {
	return restampUsage(tx, gpuIDs, from, to)
}

// UnitSQL selects what models.UnitName needs of the unit g and its GPU p
// (unit_name.go), for a row scanned into UnitCols.
const UnitSQL = unitSQL

// UnitCols is a unit's columns as UnitSQL selects them.
type UnitCols = unitCols

// Name is the unit's name by models.UnitName: "GPU 3", "GPU 3 · 1g.10gb".
func (u unitCols) Name() string { return u.name() }

// usageGPUsSQL reads the GPUs of the UUIDs ? (a list).
var usageGPUsSQL = listSQL("SELECT id, node_id, uuid FROM gpus WHERE uuid IN ?")

// NodeGPUIDs maps the UUIDs a node names to its GPU IDs. A UUID of another
// node is a 403; one nobody knows is a 409 (the agent reports its inventory
// before anything else, so this means a broken agent or a GPU swapped
// since the agent started). Every agent batch reads them, so the read
// runs without GORM (raw_sql.go).
func NodeGPUIDs(tx *gorm.DB, nodeID int64, uuids []string) (map[string]int64, error) {
	conn := rawTx(tx)
	list, err := conn.listArg(uuids)
	if err != nil {
		return nil, fmt.Errorf("store: gpu ids: %w", err)
	}
	rows, err := queryAll(conn, usageGPUsSQL, func(r *sql.Rows) (g gpuRow, err error) {
		err = r.Scan(&g.ID, &g.NodeID, &g.UUID)
		return g, err
	}, list)
	if err != nil {
		return nil, fmt.Errorf("store: gpu ids: %w", err)
	}
	return batchGPUIDs(nodeID, uuids, rows)
}

// batchGPUIDs maps the UUIDs a batch names to the ids of rows, the GPUs read
// for them: refused when one is another node's or none of the cluster's.
func batchGPUIDs(nodeID int64, uuids []string, rows []gpuRow) (map[string]int64, error) {
	ids := make(map[string]int64, len(rows))
	for _, r := range rows {
		if r.NodeID != nodeID {
			return nil, models.ErrForeignGPU(r.UUID)
		}
		ids[r.UUID] = r.ID
	}
	for _, u := range uuids {
		if _, ok := ids[u]; !ok {
			return nil, models.NewError(models.ECONFLICT, models.M("err.agent_unknown_gpu", "UUID", u))
		}
	}
	return ids, nil
}

// NodeBookings checks with one query that every booking in ids (0: none)
// is one of the node's, and names the first that is not.
func NodeBookings(tx *gorm.DB, nodeID int64, ids []int64) error {
	var want []int64
	for _, id := range ids {
		if id != 0 && !slices.Contains(want, id) {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return nil
	}
	var have []int64
	if err := tx.Model(&bookingRow{}).Where("node_id = ? AND id IN ?", nodeID, want).Pluck("id", &have).Error; err != nil {
		return fmt.Errorf("store: violation bookings: %w", err)
	}
	for _, id := range want {
		if !slices.Contains(have, id) {
			return models.NewError(models.EFORBIDDEN, models.M("err.agent_foreign_booking", "ID", id))
		}
	}
	return nil
}
