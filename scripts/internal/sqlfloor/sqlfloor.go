// Package sqlfloor runs the database work of a gpubook operation with no
// HTTP and no gpubook code around it: the same SQL statements, on the
// connection pool gpubook's store uses. What it measures is the floor no
// implementation of that operation on that database can go under, which
// the load scripts (bookload, peerbench) print beside gpubook's own time.
package sqlfloor

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// TokenUserSQL is the statement gpubook finds a token's user with; %s is
// the dialect's parameter ("?" or "$1").
const TokenUserSQL = `SELECT u.*, t.id AS token_id, t.last_used_at AS token_last_used_at FROM api_tokens t
	JOIN users u ON u.id = t.user_id WHERE t.token_hash = %s AND t.revoked_at IS NULL LIMIT 1`

// Conn runs statements on the store's pool (db.Gorm.ConnPool): on SQLite
// transactions take gpubook's writer's turn and every statement is
// compiled once and kept, as gpubook's are; on PostgreSQL it is the
// *sql.DB of pgx. Nothing of GORM or gpubook runs around the statements.
type Conn struct {
	pool    gorm.ConnPool
	dialect string
}

// New returns the floor's connection to db.
func New(db *store.DB) Conn { return Conn{pool: db.Gorm.ConnPool, dialect: db.Dialect} }

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

// BookNowAndRelease does the database work of booking p.GPU from now for
// an hour and releasing it: the token's user, then the booking, its GPU
// row and its audit event in one transaction; the token's user again, then
// the booking cancelled (released in its first second), its GPU row freed
// and the release's audit event in another.
func (c Conn) BookNowAndRelease(ctx context.Context, p Pair) error {
	token := func() error {
		found, err := c.Exists(ctx, fmt.Sprintf(TokenUserSQL, c.param(1)), p.TokenHash)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("sqlfloor: token not found")
		}
		return nil
	}
	q := func(sql string) string { return c.numbered(sql) }
	audit := q(`INSERT INTO audit_events (at, actor_id, actor_label, action, target_type, target_id, details, ip)
		VALUES (?, ?, 'load', ?, 'booking', ?, ?, '127.0.0.1')`)
	now := time.Now().UTC()
	s := now.Truncate(time.Second)
	var id int64
	if err := token(); err != nil {
		return err
	}
	err := c.InTx(ctx, func(tx Tx) error {
		if err := tx.QueryRowContext(ctx, q(`INSERT INTO bookings (user_id, node_id, starts_at, ends_at, note, kind, status, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 'standard', 'confirmed', ?, ?) RETURNING id`), p.UserID, p.NodeID, s, s.Add(time.Hour), p.Note, now, now).Scan(&id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q("INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at, blocking) VALUES (?, ?, ?, ?, TRUE)"),
			id, p.GPU, s, s.Add(time.Hour)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, audit, now, p.UserID, models.AuditBookingCreate, strconv.FormatInt(id, 10), p.Note)
		return err
	})
	if err != nil {
		return err
	}
	if err := token(); err != nil {
		return err
	}
	return c.InTx(ctx, func(tx Tx) error {
		if _, err := tx.ExecContext(ctx, q("UPDATE bookings SET status = 'cancelled', released_at = ?, updated_at = ? WHERE id = ?"), now, now, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q("UPDATE booking_gpus SET blocking = FALSE WHERE booking_id = ?"), id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, audit, now, p.UserID, models.AuditBookingRelease, strconv.FormatInt(id, 10), p.Note)
		return err
	})
}

// numbered writes the "?" markers of sql as the dialect's.
func (c Conn) numbered(sql string) string {
	if c.dialect != store.Postgres {
		return sql
	}
	out := make([]byte, 0, len(sql)+16)
	n := 0
	for i := 0; i < len(sql); i++ {
		if sql[i] == '?' {
			n++
			out = append(out, c.param(n)...)
			continue
		}
		out = append(out, sql[i])
	}
	return string(out)
}
