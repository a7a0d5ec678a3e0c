package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/telemetry"
)

// Shape of the generated data: 64 nodes × 8 GPUs, 500 users in 50 teams.
// Every GPU is booked in 6-hour cycles (4 h booked, 2 h free); the owner's
// processes run the first 200 minutes of each booking (util 20–99 %), the
// last 40 are idle, and another user runs unbooked for 30 minutes in each
// gap. Every 7th booking was released an hour early. The data ends with
// the benchmark's week and reaches back as far as -minutes asks (5.2 M
// GPU-minutes: the week; 20 M: the week and the three before it, which the
// report's trend reads too).
const (
	nodes       = 64
	gpusPerNode = 8
	gpus        = nodes * gpusPerNode
	users       = 500
	teams       = 50
	weekMinutes = 7 * 24 * 60
	cycle       = 360 // minutes of one booking cycle
)

// shape is one generated data set: span minutes on every GPU up to end,
// written in time order or not.
type shape struct {
	gpus      int // on gpus/8 nodes
	span      int // minutes per GPU, a multiple of the 6-hour cycle
	end       time.Time
	unordered bool
}

// newShape sizes the data for gpuMinutes GPU-minutes on n GPUs ending at
// end.
func newShape(n, gpuMinutes int, end time.Time, unordered bool) shape {
	span := (gpuMinutes/n + cycle - 1) / cycle * cycle
	return shape{gpus: n, span: max(span, cycle), end: end, unordered: unordered}
}

func (s shape) start() time.Time { return s.end.Add(-time.Duration(s.span) * time.Minute) }
func (s shape) slots() int       { return s.span / cycle }

// sqlFor writes the generator's statements for one database. Rows are
// made by the database from counters (generate_series on PostgreSQL, a
// recursive CTE on SQLite); nothing crosses the wire row by row. The stamps (booking, memories,
// booked flag, minute number) are written with the rows, from the same
// formulas that made the bookings; TestGeneratedStamps checks them against
// store.RestampUsage. unordered writes the minutes in a scrambled order,
// as many agents' late and resent batches leave them on disk.
func (s shape) sqlFor(pg bool) []string {
	t0 := s.start().Unix()
	ts := func(secs string) string {
		if pg {
			return fmt.Sprintf("to_timestamp(%d + (%s))", t0, secs)
		}
		return fmt.Sprintf("strftime('%%Y-%%m-%%d %%H:%%M:%%S+00:00', %d + (%s), 'unixepoch')", t0, secs)
	}
	now := ts("0")
	counter := func(name string, from, to int) string {
		if pg {
			return fmt.Sprintf("%s(%s) AS (SELECT generate_series(%d, %d))", name, name, from, to)
		}
		return fmt.Sprintf("%s(%s) AS (SELECT %d UNION ALL SELECT %s + 1 FROM %s WHERE %s < %d)", name, name, from, name, name, name, to)
	}
	order := ""
	if s.unordered {
		order = " ORDER BY (g * 2654435761 + m * 40503) % 1000003"
	}
	slots := s.slots()
	// Per minute m of GPU g: slot sl = m / 360, position r = m % 360; the
	// booking (g-1)*slots + sl + 1 holds r < 240, or r < 180 when released.
	r, sl := "(m % 360)", "(m / 360)"
	held := "(" + r + " < CASE WHEN " + sl + " % 7 = 3 THEN 180 ELSE 240 END)"
	owner := "((g * 7 + " + sl + ") % 500 + 1)"
	other := "((g * 13 + " + sl + ") % 500 + 1)"
	ownerRuns := "(" + r + " < 200)"
	otherRuns := "(" + r + " BETWEEN 300 AND 329)"
	return []string{
		`WITH RECURSIVE ` + counter("i", 1, users) + ` INSERT INTO users (id, email, name, created_at, updated_at)
		 SELECT i, 'u' || i || '@bench.example', 'User ' || i, ` + now + `, ` + now + ` FROM i`,
		`WITH RECURSIVE ` + counter("i", 1, teams) + ` INSERT INTO teams (id, name, created_at) SELECT i, 'team ' || i, ` + now + ` FROM i`,
		`WITH RECURSIVE ` + counter("i", 1, users) + ` INSERT INTO memberships (team_id, user_id, role, created_at)
		 SELECT (i - 1) % 50 + 1, i, CASE WHEN i <= 50 THEN 'lead' ELSE 'member' END, ` + now + ` FROM i`,
		`WITH RECURSIVE ` + counter("i", 1, (s.gpus+gpusPerNode-1)/gpusPerNode) + ` INSERT INTO nodes (id, name, created_at, updated_at) SELECT i, 'node' || i, ` + now + `, ` + now + ` FROM i`,
		`WITH RECURSIVE ` + counter("g", 1, s.gpus) + ` INSERT INTO gpus (id, node_id, idx, uuid, model, memory_mib, created_at, updated_at)
		 SELECT g, (g - 1) / 8 + 1, (g - 1) % 8, 'GPU-bench-' || g, 'H100', 81559, ` + now + `, ` + now + ` FROM g`,
		fmt.Sprintf(`WITH RECURSIVE %s, %s INSERT INTO bookings (id, user_id, node_id, starts_at, ends_at, released_at, ends_before_release, created_at, updated_at)
		 SELECT (g - 1) * %d + s + 1, (g * 7 + s) %% 500 + 1, (g - 1) / 8 + 1, %s, %s,
		        CASE WHEN s %% 7 = 3 THEN %s END, CASE WHEN s %% 7 = 3 THEN %s END, %s, %s FROM g, s`,
			counter("g", 1, s.gpus), counter("s", 0, slots-1), slots,
			ts("s * 21600"), ts("s * 21600 + CASE WHEN s % 7 = 3 THEN 10800 ELSE 14400 END"),
			ts("s * 21600 + 10800"), ts("s * 21600 + 14400"), ts("s * 21600 - 3600"), ts("s * 21600 - 3600")),
		`INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at) SELECT b.id, (b.id - 1) / ` + fmt.Sprint(slots) + ` + 1, b.starts_at, b.ends_at FROM bookings b`,
		fmt.Sprintf(`WITH RECURSIVE %s, %s INSERT INTO gpu_usage_minutes (gpu_id, minute, util_avg_pct, util_max_pct, mem_used_mib, mem_total_mib, samples,
		        booking_id, booker_mem_mib, top_mem_mib, unix_minute)
		 SELECT g, %s,
		        CASE WHEN %s OR %s THEN 20 + (g * 31 + m * 17) %% 80 ELSE 0 END,
		        CASE WHEN %s OR %s THEN 99 ELSE 0 END,
		        CASE WHEN %s < 240 THEN 30000 ELSE 0 END, 81559, 60,
		        CASE WHEN %s THEN (g - 1) * %d + %s + 1 END,
		        CASE WHEN %s AND %s THEN 30000 ELSE 0 END,
		        CASE WHEN %s OR %s THEN 30000 ELSE 0 END,
		        %d + m
		 FROM m, g%s`,
			counter("m", 0, s.span-1), counter("g", 1, s.gpus), ts("m * 60"),
			ownerRuns, otherRuns, ownerRuns, otherRuns, r, held, slots, sl, held, ownerRuns, ownerRuns, otherRuns, t0/60, order),
		fmt.Sprintf(`WITH RECURSIVE %s, %s INSERT INTO gpu_user_usage_minutes (gpu_id, minute, user_name, user_id, memory_mib, processes, busy, booked)
		 SELECT g, %s, 'u' || CASE WHEN %s THEN %s ELSE %s END, CASE WHEN %s THEN %s ELSE %s END, 30000, 1, TRUE,
		        CASE WHEN %s AND %s THEN TRUE ELSE FALSE END
		 FROM m, g WHERE %s OR %s%s`,
			counter("m", 0, s.span-1), counter("g", 1, s.gpus), ts("m * 60"),
			ownerRuns, owner, other, ownerRuns, owner, other, ownerRuns, held, ownerRuns, otherRuns, order),
	}
}

// fill writes the data set into db (migrated, empty). On PostgreSQL it
// first creates the day partitions the data falls in, as the job would
// have day by day, and writes the rows in one transaction with
// session_replication_role = replica: no per-row trigger (the late-minute
// mark, which has nothing to mark before the first roll) and no per-row
// foreign-key check (the generator's keys are consistent by
// construction). Those per-row calls made 20 M GPU-minutes take over 80
// minutes; the rows and indexes written are the same.
func fill(ctx context.Context, db *store.DB, s shape) error {
	pg := db.Dialect == store.Postgres
	if pg {
		for d := s.start(); d.Before(s.end.Add(24 * time.Hour)); d = d.Add(models.PartitionDaysAhead * 24 * time.Hour) {
			if _, err := telemetry.New(db).EnsureUsagePartitions(ctx, d); err != nil {
				return err
			}
		}
	}
	stmts := s.sqlFor(pg)
	if pg {
		stmts = append([]string{"SET LOCAL session_replication_role = replica"}, stmts...)
		stmts = append(stmts, `SELECT setval(pg_get_serial_sequence('users', 'id'), 500)`,
			`SELECT setval(pg_get_serial_sequence('bookings', 'id'), (SELECT MAX(id) FROM bookings))`)
	}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, q := range stmts {
			if err := tx.Exec(q).Error; err != nil {
				return fmt.Errorf("reportbench: %.60s…: %w", strings.TrimSpace(q), err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return db.Gorm.WithContext(ctx).Exec("ANALYZE").Error
}
