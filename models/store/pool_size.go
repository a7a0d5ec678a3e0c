package store

import "time"

// DefaultMaxConns is each replica's PostgreSQL pool when the operator sets
// none: three replicas at 25 stay under PostgreSQL's default
// max_connections of 100 with room for migrations, the CLI and psql.
const DefaultMaxConns = 25

// SetMaxConns sizes the PostgreSQL pool of this process, so that N
// replicas together stay under the server's max_connections (see
// docs/scaling.md). Idle connections are kept up to half of it. SQLite
// keeps its own small pool: it has one writer whatever the setting.
func (db *DB) SetMaxConns(n int) {
	if db.Dialect != Postgres || n <= 0 {
		return
	}
	db.SQL.SetMaxOpenConns(n)
	db.SQL.SetMaxIdleConns(max(1, n/2))
	db.SQL.SetConnMaxIdleTime(5 * time.Minute)
}
