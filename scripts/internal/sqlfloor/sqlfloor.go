// Package sqlfloor runs the database work of a gpubook operation with no
// HTTP and no gpubook code around it: the same writes (on PostgreSQL each
// transaction as one statement, below), on the connection pool gpubook's
// store uses. What it measures is the floor no
// implementation of that operation on that database can go under, which
// the load scripts (bookload, peerbench) print beside gpubook's own time.
package sqlfloor

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// TokenUserSQL is the statement gpubook finds a token's user with
// (store.TokenUserSQL); %s is the dialect's parameter ("?" or "$1").
var TokenUserSQL = strings.Replace(store.TokenUserSQL, "?", "%s", 1)

// Conn runs statements on the store's pool (db.Gorm.ConnPool): on SQLite
// transactions take gpubook's writer's turn and every statement is
// compiled once and kept, as gpubook's are; on PostgreSQL it is the
// *sql.DB of pgx. Nothing of GORM or gpubook runs around the statements.
type Conn struct {
	pool    gorm.ConnPool
	dialect string
	sql     statements
}

// statements are the floor's SQL texts in the dialect's parameters, made
// once: building them in the measured loop would add to the floor.
type statements struct {
	token, booking, bookingGPU, audit, cancel, free string
}

// On PostgreSQL each statement is a round trip of its own (0.07 ms of both
// processes' time here, about what a short statement costs), so there the
// floor sends each transaction as one statement of data-modifying CTEs,
// the three writes in one implicit transaction, one round trip: fewer
// than any implementation can send
// (bookload's pgbench floor has the same shape). On SQLite, in the
// process, a statement costs no trip and the floor runs them one by one
// as gpubook does.

// bookOnceSQL is Book's transaction as one PostgreSQL statement:
// $1 user, $2 node, $3 start, $4 end, $5 note, $6 now, $7 GPU, $8 action.
const bookOnceSQL = `WITH b AS (
	INSERT INTO bookings (user_id, node_id, starts_at, ends_at, note, kind, status, created_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, 'standard', 'confirmed', $6, $6) RETURNING id
), g AS (
	INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at, blocking) SELECT b.id, $7, $3, $4, TRUE FROM b
), a AS (
	INSERT INTO audit_events (at, actor_id, actor_label, action, target_type, target_id, details, ip)
	SELECT $6, $1, 'load', $8, 'booking', CAST(b.id AS text), $5, '127.0.0.1' FROM b
)
SELECT id FROM b`

// releaseOnceSQL is Release's transaction as one PostgreSQL statement:
// $1 now, $2 booking, $3 user, $4 action, $5 note; it answers the number
// of bookings released (1, or 0 for an unknown id).
const releaseOnceSQL = `WITH c AS (
	UPDATE bookings SET status = 'cancelled', released_at = $1, updated_at = $1 WHERE id = $2 RETURNING id
), f AS (
	UPDATE booking_gpus SET blocking = FALSE WHERE booking_id IN (SELECT id FROM c)
), a AS (
	INSERT INTO audit_events (at, actor_id, actor_label, action, target_type, target_id, details, ip)
	SELECT $1, $3, 'load', $4, 'booking', CAST(c.id AS text), $5, '127.0.0.1' FROM c
)
SELECT count(*) FROM c`

// New returns the floor's connection to db.
func New(db *store.DB) Conn {
	c := Conn{pool: db.Gorm.ConnPool, dialect: db.Dialect}
	c.sql = statements{
		token: fmt.Sprintf(TokenUserSQL, c.param(1)),
		booking: c.numbered(`INSERT INTO bookings (user_id, node_id, starts_at, ends_at, note, kind, status, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 'standard', 'confirmed', ?, ?) RETURNING id`),
		bookingGPU: c.numbered("INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at, blocking) VALUES (?, ?, ?, ?, TRUE)"),
		audit: c.numbered(`INSERT INTO audit_events (at, actor_id, actor_label, action, target_type, target_id, details, ip)
			VALUES (?, ?, 'load', ?, 'booking', ?, ?, '127.0.0.1')`),
		cancel: c.numbered("UPDATE bookings SET status = 'cancelled', released_at = ?, updated_at = ? WHERE id = ?"),
		free:   c.numbered("UPDATE booking_gpus SET blocking = FALSE WHERE booking_id = ?"),
	}
	return c
}

// Tx is a transaction on the store's pool.
type Tx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Exists runs a query outside a transaction and says whether it found a row.
func (c Conn) Exists(ctx context.Context, query string, args ...any) (bool, error) {
	rows, err := c.pool.QueryContext(ctx, query, args...)
	if err != nil {
		return false, err
	}
	found := rows.Next() // gpubook reads the row's columns too; finding it is enough here
	return found, rows.Close()
}

// InTx runs f in a transaction of the store's pool and commits it.
func (c Conn) InTx(ctx context.Context, f func(tx Tx) error) error {
	var tx interface {
		Tx
		Commit() error
		Rollback() error
	}
	switch p := c.pool.(type) {
	case gorm.ConnPoolBeginner: // the SQLite writer's pool
		t, err := p.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		var ok bool
		if tx, ok = t.(interface {
			Tx
			Commit() error
			Rollback() error
		}); !ok {
			return fmt.Errorf("sqlfloor: transaction %T", t)
		}
	case gorm.TxBeginner: // *sql.DB
		t, err := p.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		tx = t
	default:
		return fmt.Errorf("sqlfloor: the store's pool %T cannot begin a transaction", c.pool)
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// param is the dialect's n-th parameter marker.
func (c Conn) param(n int) string {
	if c.dialect == store.Postgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// Pair is one user's book-now + release.
type Pair struct {
	TokenHash           string // models.HashToken of the user's token
	UserID, NodeID, GPU int64
	Note                string // marks the floor's rows, for cleaning up
}

// ErrNoToken is Token's answer for a token no user has.
var ErrNoToken = errors.New("sqlfloor: token not found")

// Token looks the token's user up, as every API call does.
func (c Conn) Token(ctx context.Context, hash string) error {
	found, err := c.Exists(ctx, c.sql.token, hash)
	if err != nil {
		return err
	}
	if !found {
		return ErrNoToken
	}
	return nil
}

// Book inserts the booking of p.GPU over [start, end), its GPU row and its
// audit event in one transaction, and returns its ID.
func (c Conn) Book(ctx context.Context, p Pair, start, end, now time.Time) (int64, error) {
	var id int64
	if c.dialect == store.Postgres {
		err := c.pool.QueryRowContext(ctx, bookOnceSQL, p.UserID, p.NodeID, start, end, p.Note, now, p.GPU,
			models.AuditBookingCreate).Scan(&id)
		return id, err
	}
	err := c.InTx(ctx, func(tx Tx) error {
		if err := tx.QueryRowContext(ctx, c.sql.booking, p.UserID, p.NodeID, start, end, p.Note, now, now).Scan(&id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, c.sql.bookingGPU, id, p.GPU, start, end); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, c.sql.audit, now, p.UserID, models.AuditBookingCreate, strconv.FormatInt(id, 10), p.Note)
		return err
	})
	return id, err
}

// BookNowAndRelease does the database work of booking p.GPU from now for
// an hour and releasing it: the token's user, then the booking (Book); the
// token's user again, then the booking cancelled (released in its first
// second), its GPU row freed and the release's audit event in another
// transaction.
func (c Conn) BookNowAndRelease(ctx context.Context, p Pair) error {
	now := time.Now().UTC()
	s := now.Truncate(time.Second)
	if err := c.Token(ctx, p.TokenHash); err != nil {
		return err
	}
	id, err := c.Book(ctx, p, s, s.Add(time.Hour), now)
	if err != nil {
		return err
	}
	if err := c.Token(ctx, p.TokenHash); err != nil {
		return err
	}
	return c.Release(ctx, p, id, now)
}

// Release cancels booking id (released in its first second), frees its
// GPU row and writes the release's audit event, in one transaction.
func (c Conn) Release(ctx context.Context, p Pair, id int64, now time.Time) error {
	if c.dialect == store.Postgres {
		var n int
		if err := c.pool.QueryRowContext(ctx, releaseOnceSQL, now, id, p.UserID, models.AuditBookingRelease, p.Note).Scan(&n); err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("sqlfloor: release of booking %d changed %d bookings", id, n)
		}
		return nil
	}
	return c.InTx(ctx, func(tx Tx) error {
		res, err := tx.ExecContext(ctx, c.sql.cancel, now, now, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("sqlfloor: release of booking %d changed %d bookings (%v)", id, n, err)
		}
		if _, err := tx.ExecContext(ctx, c.sql.free, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, c.sql.audit, now, p.UserID, models.AuditBookingRelease, strconv.FormatInt(id, 10), p.Note)
		return err
	})
}

// numbered writes the "?" markers of sql as the dialect's.
func (c Conn) numbered(sql string) string {
	if c.dialect != store.Postgres {
		return sql
	}
	return store.DollarParams(sql)
}
