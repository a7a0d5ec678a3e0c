package store

import (
	"context"
	"fmt"
	"time"
)

// JobLease is one job's coordination state, for the tests of leases.
type JobLease struct {
	Name, Owner, LastPeriod string
	LeaseUntil              time.Time
	LastRunAt               *time.Time
	PeriodDone              bool
}

// JobLeases lists every job's lease row by name.
func (db *DB) JobLeases(ctx context.Context) ([]JobLease, error) {
	var rows []leaseRow
	if err := db.Gorm.WithContext(ctx).Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: job leases: %w", err)
	}
	out := make([]JobLease, len(rows))
	for i, r := range rows {
		out[i] = JobLease{Name: r.Name, Owner: r.Owner, LastPeriod: r.LastPeriod, LeaseUntil: r.LeaseUntil.UTC(),
			LastRunAt: utcPtr(r.LastRunAt), PeriodDone: r.PeriodDone}
	}
	return out, nil
}

// RolledReads is how many rolled parts db read from the rolled hours
// rather than found kept (report_rolled.go).
func (db *DB) RolledReads() int64 {
	db.rolled.mu.Lock()
	defer db.rolled.mu.Unlock()
	return db.rolled.reads
}

// KeepLiveWeeksFrom keeps the weeks in progress of a cluster of gpus or
// more that cost above or more (liveKeepGPUs, liveKeepAbove), so that a
// test's small cluster stands for a fleet.
func (db *DB) KeepLiveWeeksFrom(gpus int, above time.Duration) {
	db.live.mu.Lock()
	defer db.live.mu.Unlock()
	db.live.keepGPUs, db.live.keepAbove = gpus, above
}

// LiveComputations is how many times db computed a week in progress.
func (db *DB) LiveComputations() int64 {
	db.live.mu.Lock()
	defer db.live.mu.Unlock()
	return db.live.computed
}
