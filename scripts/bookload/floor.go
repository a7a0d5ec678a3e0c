package main

import (
	"context"
	"fmt"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/scripts/internal/sqlfloor"
)

// The SQL floor is the database work no correct booking can skip, run
// without HTTP and without gpubook's code: find the token's user, then in
// one transaction insert the booking, its GPU row (checked by the overlap
// guard: PostgreSQL's exclusion constraint, SQLite's triggers) and its
// audit event, on gpubook's real schema. It reads no policy and locks no
// row; gpubook must do both, so a real booking costs more. On PostgreSQL
// pgbench drives it (one statement for the token, one for the three
// inserts, as gpubook sends them); on SQLite a Go loop on the same pool as
// the raw baseline. The bookings lie two years on, clear of the HTTP load's
// cells, and are deleted after each level.

const floorNote = "sql floor"

// floorStart is where the floor's bookings begin: two years on, clear of
// the HTTP load (which books from now on, a few hundred hours at most).
func (t *target) floorStart() time.Time { return t.start.AddDate(2, 0, 0) }

// sqlFloor measures the floor at clients concurrent clients for d.
func sqlFloor(ctx context.Context, dialect string, db *store.DB, dbURL string, t *target, clients int, d time.Duration) (result, error) {
	var res result
	var err error
	if dialect == store.Postgres {
		res, err = pgFloor(ctx, dbURL, t, clients, d)
	} else {
		res = sqliteFloor(ctx, db, t, clients, d)
	}
	if err != nil {
		return res, err
	}
	// Later levels book on the same database; leave it as the HTTP load left it.
	return res, deleteFloorRows(ctx, db, floorNote)
}

// deleteFloorRows deletes what a floor wrote: its bookings (note), their
// GPU rows and their audit events (details), so that the next level and
// the next floor find the database as the HTTP load left it.
func deleteFloorRows(ctx context.Context, db *store.DB, note string) error {
	for _, q := range []string{
		"DELETE FROM audit_events WHERE details = ?",
		"DELETE FROM booking_gpus WHERE booking_id IN (SELECT id FROM bookings WHERE note = ?)",
		"DELETE FROM bookings WHERE note = ?",
	} {
		if err := db.Gorm.WithContext(ctx).Exec(q, note).Error; err != nil { // GORM writes ? as the dialect's parameter
			return fmt.Errorf("%s: cleanup: %w", note, err)
		}
	}
	return nil
}

// pgbenchReady says whether pgbench's arithmetic can give each of clients
// clients a GPU and a user of its own (client c: the c-th GPU, the user
// c mod the load's users), which the pgbench floors rely on.
func (t *target) pgbenchReady(clients int) error {
	if clients > len(t.gpuIDs) {
		return fmt.Errorf("the pgbench floors give each client a GPU of its own: at most %d clients", len(t.gpuIDs))
	}
	if !consecutive(t.gpuIDs) || !consecutive(t.users) {
		return fmt.Errorf("the pgbench floors need consecutive GPU and user ids")
	}
	return nil
}

// pgFloor runs pgbench with a script of gpubook's two statements, prepared
// as pgx prepares them; client c books GPU c, hour k of its own for its k-th
// booking, as one of the load's users (ids and GPU ids are consecutive, so
// pgbench's arithmetic picks them). The token looked up is always the first
// user's: the cost of the lookup does not depend on whose it is.
func pgFloor(ctx context.Context, dbURL string, t *target, clients int, d time.Duration) (result, error) {
	if err := t.pgbenchReady(clients); err != nil {
		return result{}, err
	}
	start := t.floorStart().Format(time.RFC3339)
	within := func(slot string) string {
		return fmt.Sprintf("timestamptz '%s' + %s * interval '1 hour'", start, slot)
	}
	script := fmt.Sprintf(`\set k :k + 1
\set gpu %d + :client_id
\set uid %d + :client_id %% %d
`+sqlfloor.TokenUserSQL+`;
WITH b AS (
	INSERT INTO bookings (user_id, node_id, starts_at, ends_at, note, kind, status, created_at, updated_at)
	VALUES (:uid, %d, %s, %s, '%s', 'standard', 'confirmed', now(), now()) RETURNING id
), g AS (
	INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at, blocking) SELECT b.id, :gpu, %s, %s, TRUE FROM b
), a AS (
	INSERT INTO audit_events (at, actor_id, actor_label, action, target_type, target_id, details, ip)
	SELECT now(), :uid, 'load', 'booking.create', 'booking', CAST(b.id AS text), '%s', '127.0.0.1' FROM b
)
SELECT id FROM b;
`, t.gpuIDs[0], t.users[0], len(t.users), "'"+models.HashToken(t.tokens[0])+"'",
		t.nodeID, within(":k"), within("(:k + 1)"), floorNote, within(":k"), within("(:k + 1)"), floorNote)
	return runPgbench(ctx, dbURL, script, clients, d, "-M", "prepared", "-D", "k=0")
}

func consecutive(ids []int64) bool {
	for i := range ids {
		if ids[i] != ids[0]+int64(i) {
			return false
		}
	}
	return len(ids) > 0
}

// sqliteFloor is the same work on SQLite, on the store's own pool
// (sqlfloor): the token query, then BEGIN IMMEDIATE (the DSN's _txlock),
// the three inserts gpubook runs there, COMMIT. The k-th booking takes cell k
// of the (GPU, hour) grid, so no two calls collide.
func sqliteFloor(ctx context.Context, db *store.DB, t *target, clients int, d time.Duration) result {
	hash := models.HashToken(t.tokens[0])
	start := t.floorStart()
	conn := sqlfloor.New(db)
	return drive(clients, 0, d, func(k int) error {
		if err := conn.Token(ctx, hash); err != nil {
			return err
		}
		p := sqlfloor.Pair{UserID: t.users[k%len(t.users)], NodeID: t.nodeID, GPU: t.gpuIDs[k%len(t.gpuIDs)], Note: floorNote}
		s := start.Add(time.Duration(k/len(t.gpuIDs)) * time.Hour)
		_, err := conn.Book(ctx, p, s, s.Add(time.Hour), time.Now().UTC())
		return err
	})
}
