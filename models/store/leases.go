package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

type leaseRow struct {
	Name       string     `gorm:"column:name;primaryKey"`
	Owner      string     `gorm:"column:owner"`
	LeaseUntil time.Time  `gorm:"column:lease_until"`
	LastRunAt  *time.Time `gorm:"column:last_run_at"`
	LastPeriod string     `gorm:"column:last_period"`
	PeriodDone bool       `gorm:"column:period_done"`
}

func (leaseRow) TableName() string { return "job_leases" }

// leaseEpoch is the lease_until of a lease nobody holds: long past, so that
// every "lease_until < now" test treats it as expired.
var leaseEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// ensureLease makes the job's row if it is missing. Doing nothing on a
// conflict keeps the row's state and lets the conditional UPDATE that
// follows decide, under the row lock, who wins.
func (db *DB) ensureLease(ctx context.Context, name string) error {
	row := leaseRow{Name: name, LeaseUntil: leaseEpoch}
	err := db.Gorm.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "name"}}, DoNothing: true}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("store: job lease %s: %w", name, err)
	}
	return nil
}

// TryLease takes the job's lease for owner for ttl, or renews it when
// owner already holds it. It is false while another owner's lease runs. One
// UPDATE decides: PostgreSQL re-checks its WHERE on the locked row after a
// concurrent winner commits, and SQLite runs one writer at a time. Expiry
// is judged on the database's clock, so that a replica whose clock is
// ahead cannot take a lease that is still held.
func (db *DB) TryLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	if err := db.ensureLease(ctx, name); err != nil {
		return false, err
	}
	res := db.Gorm.WithContext(ctx).Model(&leaseRow{}).
		Where("name = ? AND (owner = ? OR lease_until < ?)", name, owner, db.clockAt(0)).
		Updates(map[string]any{"owner": owner, "lease_until": db.clockAt(ttl), "last_run_at": db.clockAt(0)})
	if res.Error != nil {
		return false, fmt.Errorf("store: try lease %s: %w", name, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// ReleaseLease gives the lease up: at once when hold is zero or less, so
// that the next run need not wait for it to expire, or after hold, so that
// a job that must run once per interval is not run again at once by
// another replica whose schedule ticks a few seconds later. Releasing a
// lease one does not hold does nothing.
func (db *DB) ReleaseLease(ctx context.Context, name, owner string, hold time.Duration) error {
	var until any = leaseEpoch
	if hold > 0 {
		until = db.clockAt(hold)
	}
	err := db.Gorm.WithContext(ctx).Model(&leaseRow{}).Where("name = ? AND owner = ?", name, owner).
		Update("lease_until", until).Error
	if err != nil {
		return fmt.Errorf("store: release lease %s: %w", name, err)
	}
	return nil
}

// ClaimPeriod is true for the one caller that gets to run period of the
// job: the first to claim a period newer than the last one, or, when the
// last claimant's lease ran out before it finished, the one that takes the
// run over. The job must be idempotent (the outbox's dedup keys make a
// report run so) because a taken-over run repeats part of the work.
func (db *DB) ClaimPeriod(ctx context.Context, name, period, owner string, ttl time.Duration) (bool, error) {
	if period == "" {
		return false, fmt.Errorf("store: claim period %s: empty period", name)
	}
	if err := db.ensureLease(ctx, name); err != nil {
		return false, err
	}
	res := db.Gorm.WithContext(ctx).Model(&leaseRow{}).
		Where("name = ? AND (last_period < ? OR (last_period = ? AND NOT period_done AND lease_until < ?))", name, period, period, db.clockAt(0)).
		Updates(map[string]any{"owner": owner, "lease_until": db.clockAt(ttl), "last_run_at": db.clockAt(0),
			"last_period": period, "period_done": false})
	if res.Error != nil {
		return false, fmt.Errorf("store: claim period %s %s: %w", name, period, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// FinishPeriod records that owner's run of period completed, so that the
// period is never run again, and frees the lease.
func (db *DB) FinishPeriod(ctx context.Context, name, period, owner string) error {
	res := db.Gorm.WithContext(ctx).Model(&leaseRow{}).
		Where("name = ? AND last_period = ? AND owner = ?", name, period, owner).
		Updates(map[string]any{"period_done": true, "lease_until": leaseEpoch})
	if res.Error != nil {
		return fmt.Errorf("store: finish period %s %s: %w", name, period, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: finish period %s %s: taken over by another process", name, period)
	}
	return nil
}
