package store

import (
	"fmt"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

// An idle batch is stored through a rowLoader (agent_rows.go), unless it
// names one report (agent key) twice; such a batch goes one row, and one
// statement, at a time in order, as a violation batch does
// (agent_violations_json.go).

const idleCols = "node_id, agent_key, booking_id, user_name, gpu_uuids, idle_since, reported_at, received_at"

var idlePGTypes = []string{"bigint", "text", "bigint", "text", "text", "timestamptz", "timestamptz", "timestamptz"}

// idleConflict keeps one row per (node, agent key); a report whose idle
// set grew replaces the GPU list and the report time.
const idleConflict = `ON CONFLICT (node_id, agent_key) DO UPDATE SET gpu_uuids = excluded.gpu_uuids, reported_at = excluded.reported_at
WHERE agent_idle_reports.reported_at < excluded.reported_at`

var idleTable = newRowTable("agent_idle_reports", idleCols, idlePGTypes, idleConflict)

// repeatedIdle reports whether a report (agent key) is in rs twice.
func repeatedIdle(rs []wire.IdleReport) bool {
	return repeatedKey(len(rs), func(i int) string { return rs[i].ID })
}

// upsertIdleReports stores rs, whose agent keys differ.
func upsertIdleReports(l *rowLoader, nodeID int64, rs []wire.IdleReport, now time.Time) error {
	l.table(idleTable)
	for _, r := range rs {
		l.Int(nodeID)
		l.Str(clip(r.ID, 256))
		l.Int(r.BookingID)
		l.Str(clip(r.User, 256))
		l.StrJoin(r.GPUUUIDs, ',')
		l.Time(utc(r.IdleSince))
		l.Time(utc(r.ReportedAt))
		l.Time(utc(now))
		if err := l.end(); err != nil {
			return fmt.Errorf("store: idle reports: %w", err)
		}
	}
	if _, err := l.done(idleTable); err != nil {
		return fmt.Errorf("store: idle reports: %w", err)
	}
	return nil
}
