package telemetry

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models/store"
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

// idleKeyOrder is the order in which a batch's reports are stored: by
// agent key, bytewise (as COLLATE "C" sorts), a repeated key's reports in
// the batch's order. Batches that name the same reports then lock their
// rows in one order, the order MarkIdleReports locks them in, and queue
// instead of deadlocking: 15 of 16 parallel batches of one booking, each
// in an order of its own, failed with 40P01 on PostgreSQL
// (TestAgentIdleBatchesInParallel).
func idleKeyOrder(rs []wire.IdleReport) []int32 {
	order := make([]int32, len(rs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return strings.Compare(rs[a].ID, rs[b].ID) })
	return order
}

// upsertIdleReports stores the reports of rs that order names, in that
// order; their agent keys differ.
func upsertIdleReports(l *rowLoader, nodeID int64, rs []wire.IdleReport, order []int32, now time.Time) error {
	l.table(idleTable)
	for _, i := range order {
		r := &rs[i]
		l.Int(nodeID)
		l.Str(store.Clip(r.ID, 256))
		l.Int(r.BookingID)
		l.Str(store.Clip(r.User, 256))
		l.StrJoin(r.GPUUUIDs, ',')
		l.Time(store.UTC(r.IdleSince))
		l.Time(store.UTC(r.ReportedAt))
		l.Time(store.UTC(now))
		if err := l.end(); err != nil {
			return fmt.Errorf("store: idle reports: %w", err)
		}
	}
	if _, err := l.done(idleTable); err != nil {
		return fmt.Errorf("store: idle reports: %w", err)
	}
	return nil
}
