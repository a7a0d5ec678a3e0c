package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// clockAt is "now + d" on the database's clock, as a value GORM binds in
// Where, Updates and Raw arguments. Leases, claims and their recovery
// compare times written by different replicas, so they must all read one
// clock: PostgreSQL's now(). SQLite serves one process, whose clock is the
// only one. DB.Clock, when set (tests), replaces both.
func (db *DB) clockAt(d time.Duration) any {
	if db.Clock != nil {
		return utc(db.Clock().Add(d))
	}
	if db.Dialect == Postgres {
		if d == 0 {
			return gorm.Expr("now()")
		}
		return gorm.Expr("(now() + make_interval(secs => ?))", d.Seconds())
	}
	return utc(time.Now().Add(d))
}

// Now is the database's current time (the process's on SQLite), for the
// jobs that must decide which period is due on the clock every replica
// shares.
func (db *DB) Now(ctx context.Context) (time.Time, error) {
	if db.Clock != nil || db.Dialect != Postgres {
		return db.clockAt(0).(time.Time), nil
	}
	var now time.Time
	if err := db.SQL.QueryRowContext(ctx, "SELECT now()").Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("store: database clock: %w", err)
	}
	return now.UTC(), nil
}
