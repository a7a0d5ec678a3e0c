package store

import (
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// migrationLock makes replicas that start together (a rolling upgrade, or
// a fresh deployment of three at once) take turns at the migrations: on
// PostgreSQL goose holds a session advisory lock while it migrates, and
// the others wait, then find nothing left to apply. Without it two of them
// ran the same CREATE EXTENSION and one died on a duplicate key. They
// retry every second for up to ten minutes, longer than any of our
// migrations takes. SQLite serves one process and needs no lock.
func migrationLock(dialect string) ([]goose.ProviderOption, error) {
	if dialect != Postgres {
		return nil, nil
	}
	l, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 600), lock.WithUnlockTimeout(1, 60))
	if err != nil {
		return nil, err
	}
	return []goose.ProviderOption{goose.WithSessionLocker(l)}, nil
}
