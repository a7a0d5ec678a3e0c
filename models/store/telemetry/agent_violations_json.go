package telemetry

import (
	"fmt"
	"time"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/wire"
)

// A violation batch is stored through a rowLoader (agent_rows.go: a piece
// of about 32 kB at a time, one upsert per piece or, on PostgreSQL, one
// for the batch), unless it names one episode twice: the upsert keeps the
// latest sighting, and PostgreSQL refuses to update a row twice in one
// statement, so such a batch (an escalation within one batch, rare) goes
// through the same loader one row, and one statement, at a time in order.

const violationCols = "node_id, agent_key, kind, gpu_id, user_name, user_id, uid, pid, memory_mib, booking_id, action, first_seen, last_seen, received_at, container"

var violationPGTypes = []string{"bigint", "text", "text", "bigint", "text", "bigint", "integer", "integer", "bigint", "bigint", "text",
	"timestamptz", "timestamptz", "timestamptz", "text"}

// violationConflict keeps one row per (node, agent key). A resend or an
// escalation updates it, but never with an older sighting than the stored
// one, so that a delayed batch cannot undo "sigkill" back to "warned".
const violationConflict = `ON CONFLICT (node_id, agent_key) DO UPDATE SET action = excluded.action, last_seen = excluded.last_seen,
	memory_mib = excluded.memory_mib, received_at = excluded.received_at
WHERE agent_violations.last_seen <= excluded.last_seen`

var violationTable = newRowTable("agent_violations", violationCols, violationPGTypes, violationConflict)

// repeatedViolation reports whether an episode (agent key) is in vs twice.
func repeatedViolation(vs []wire.Violation) bool {
	return repeatedKey(len(vs), func(i int) string { return vs[i].ID })
}

// violationBookings lists the bookings of vs, 0 for none.
func violationBookings(vs []wire.Violation) []int64 {
	ids := make([]int64, len(vs))
	for i, v := range vs {
		ids[i] = v.BookingID
	}
	return ids
}

// upsertViolations stores vs, whose agent keys differ.
func upsertViolations(l *rowLoader, nodeID int64, vs []wire.Violation, gpus, names map[string]int64, now time.Time) error {
	l.table(violationTable)
	for _, v := range vs {
		l.Int(nodeID)
		l.Str(v.ID)
		l.Str(v.Kind)
		l.Int(gpus[v.GPUUUID])
		l.Str(store.Clip(v.User, 256))
		if v.User != "" {
			l.IntOrNull(names[v.User])
		} else {
			l.Null()
		}
		l.Int(int64(v.UID))
		l.Int(int64(v.PID))
		l.Int(v.MemoryMiB)
		l.IntOrNull(v.BookingID)
		l.Str(v.Action)
		l.Time(store.UTC(v.FirstSeen))
		l.Time(store.UTC(v.LastSeen))
		l.Time(store.UTC(now))
		l.Str(v.Container)
		if err := l.end(); err != nil {
			return fmt.Errorf("store: violations: %w", err)
		}
	}
	if _, err := l.done(violationTable); err != nil {
		return fmt.Errorf("store: violations: %w", err)
	}
	return nil
}
