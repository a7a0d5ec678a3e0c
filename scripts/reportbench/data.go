package main

import (
	"context"
	"fmt"
	"time"

	"github.com/gpubook/gpubook/models/store"
)

// Shape of the generated week: 64 nodes × 8 GPUs, 500 users in 50 teams.
// Every GPU is booked in 6-hour cycles (4 h booked, 2 h free), 28 bookings
// a week; the owner's processes run the first 200 minutes of each booking
// (util 20–99 %), the last 40 are idle, and another user runs unbooked
// for 30 minutes in each gap. Every 7th booking was released an hour early.
const (
	nodes       = 64
	gpusPerNode = 8
	users       = 500
	teams       = 50
	weekMinutes = 7 * 24 * 60
)

// fill writes the week starting at start with set-based INSERT … SELECT
// generate_series statements: the database makes the rows, none cross the
// wire. Minutes are written in time order, as agents deliver them, then
// stamped for the reports.
func fill(ctx context.Context, db *store.DB, start time.Time) error {
	t := start.UTC().Format(time.RFC3339)
	stmts := []string{
		`INSERT INTO users (id, email, name, created_at, updated_at)
		 SELECT i, 'u' || i || '@bench.example', 'User ' || i, now(), now() FROM generate_series(1, 500) i`,
		`INSERT INTO teams (id, name, created_at) SELECT i, 'team ' || i, now() FROM generate_series(1, 50) i`,
		`INSERT INTO memberships (team_id, user_id, role, created_at)
		 SELECT (i - 1) % 50 + 1, i, CASE WHEN i <= 50 THEN 'lead' ELSE 'member' END, now() FROM generate_series(1, 500) i`,
		`INSERT INTO nodes (id, name, created_at, updated_at) SELECT i, 'node' || i, now(), now() FROM generate_series(1, 64) i`,
		`INSERT INTO gpus (id, node_id, idx, uuid, model, memory_mib, created_at, updated_at)
		 SELECT g, (g - 1) / 8 + 1, (g - 1) % 8, 'GPU-bench-' || g, 'H100', 81559, now(), now() FROM generate_series(1, 512) g`,
		// booking id = (gpu-1)*28 + slot + 1; owner = (gpu*7 + slot) % 500 + 1
		`INSERT INTO bookings (id, user_id, node_id, starts_at, ends_at, released_at, ends_before_release, created_at, updated_at)
		 SELECT (g - 1) * 28 + s + 1, (g * 7 + s) % 500 + 1, (g - 1) / 8 + 1,
		        TIMESTAMPTZ '` + t + `' + s * INTERVAL '6 hours',
		        TIMESTAMPTZ '` + t + `' + s * INTERVAL '6 hours' + CASE WHEN s % 7 = 3 THEN INTERVAL '3 hours' ELSE INTERVAL '4 hours' END,
		        CASE WHEN s % 7 = 3 THEN TIMESTAMPTZ '` + t + `' + s * INTERVAL '6 hours' + INTERVAL '3 hours' END,
		        CASE WHEN s % 7 = 3 THEN TIMESTAMPTZ '` + t + `' + s * INTERVAL '6 hours' + INTERVAL '4 hours' END,
		        now(), now()
		 FROM generate_series(1, 512) g, generate_series(0, 27) s`,
		`INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at)
		 SELECT b.id, (b.id - 1) / 28 + 1, b.starts_at, b.ends_at FROM bookings b`,
		`INSERT INTO gpu_usage_minutes (gpu_id, minute, util_avg_pct, util_max_pct, mem_used_mib, mem_total_mib, samples)
		 SELECT g, TIMESTAMPTZ '` + t + `' + m * INTERVAL '1 minute',
		        CASE WHEN m % 360 < 200 OR m % 360 BETWEEN 300 AND 329 THEN 20 + (g * 31 + m * 17) % 80 ELSE 0 END,
		        CASE WHEN m % 360 < 200 OR m % 360 BETWEEN 300 AND 329 THEN 99 ELSE 0 END,
		        CASE WHEN m % 360 < 240 THEN 30000 ELSE 0 END, 81559, 60
		 FROM generate_series(0, 10079) m, generate_series(1, 512) g`,
		`INSERT INTO gpu_user_usage_minutes (gpu_id, minute, user_name, user_id, memory_mib, processes, busy)
		 SELECT g, TIMESTAMPTZ '` + t + `' + m * INTERVAL '1 minute',
		        'u' || CASE WHEN m % 360 < 200 THEN (g * 7 + m / 360) % 500 + 1 ELSE (g * 13 + m / 360) % 500 + 1 END,
		        CASE WHEN m % 360 < 200 THEN (g * 7 + m / 360) % 500 + 1 ELSE (g * 13 + m / 360) % 500 + 1 END,
		        30000, 1, TRUE
		 FROM generate_series(0, 10079) m, generate_series(1, 512) g WHERE m % 360 < 200 OR m % 360 BETWEEN 300 AND 329`,
		`SELECT setval(pg_get_serial_sequence('users', 'id'), 500)`,
		`SELECT setval(pg_get_serial_sequence('bookings', 'id'), 512 * 28)`,
	}
	for _, s := range stmts {
		if err := db.Gorm.WithContext(ctx).Exec(s).Error; err != nil {
			return fmt.Errorf("reportbench: %.60s…: %w", s, err)
		}
	}
	// The rows were written around the store, which stamps usage itself
	// (IngestUsage): stamp them the way a booking change does, a day at a
	// time, then compact the tables the updates doubled.
	for d := range 7 {
		day := start.Add(time.Duration(d) * 24 * time.Hour)
		if err := db.RestampUsage(ctx, day, day.Add(24*time.Hour)); err != nil {
			return fmt.Errorf("reportbench: %w", err)
		}
	}
	for _, s := range []string{`VACUUM (FULL) gpu_usage_minutes, gpu_user_usage_minutes`, `ANALYZE`} {
		if err := db.Gorm.WithContext(ctx).Exec(s).Error; err != nil {
			return fmt.Errorf("reportbench: %s: %w", s, err)
		}
	}
	return nil
}
