package store

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
)

// A violation batch is stored with one statement, its rows bound as one
// JSON text (see agent_usage_rows.go for why), unless it names one episode
// twice: the upsert keeps the latest sighting, and PostgreSQL refuses to
// update a row twice in one statement, so such a batch (an escalation
// within one batch, rare) goes row by row in order.

const violationCols = "node_id, agent_key, kind, gpu_id, user_name, user_id, uid, pid, memory_mib, booking_id, action, first_seen, last_seen, received_at, container"

var violationPGTypes = []string{"bigint", "text", "text", "bigint", "text", "bigint", "integer", "integer", "bigint", "bigint", "text",
	"timestamptz", "timestamptz", "timestamptz", "text"}

const violationConflict = `ON CONFLICT (node_id, agent_key) DO UPDATE SET action = excluded.action, last_seen = excluded.last_seen,
	memory_mib = excluded.memory_mib, received_at = excluded.received_at
WHERE agent_violations.last_seen <= excluded.last_seen`

var upsertViolationsSQL = map[bool]string{
	false: upsertFromJSON(false, "agent_violations", violationCols, violationPGTypes, violationConflict),
	true:  upsertFromJSON(true, "agent_violations", violationCols, violationPGTypes, violationConflict),
}

// repeatedViolation reports whether an episode (agent key) is in vs twice.
func repeatedViolation(vs []wire.Violation) bool {
	seen := make(map[string]struct{}, len(vs))
	for _, v := range vs {
		if _, ok := seen[v.ID]; ok {
			return true
		}
		seen[v.ID] = struct{}{}
	}
	return false
}

// violationBookings lists the bookings of vs, 0 for none.
func violationBookings(vs []wire.Violation) []int64 {
	ids := make([]int64, len(vs))
	for i, v := range vs {
		ids[i] = v.BookingID
	}
	return ids
}

// nodeBookings checks with one query that every booking in ids (0: none)
// is one of the node's, and names the first that is not.
func nodeBookings(tx *gorm.DB, nodeID int64, ids []int64) error {
	var want []int64
	for _, id := range ids {
		if id != 0 && !slices.Contains(want, id) {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return nil
	}
	var have []int64
	if err := tx.Model(&bookingRow{}).Where("node_id = ? AND id IN ?", nodeID, want).Pluck("id", &have).Error; err != nil {
		return fmt.Errorf("store: violation bookings: %w", err)
	}
	for _, id := range want {
		if !slices.Contains(have, id) {
			return models.NewError(models.EFORBIDDEN, models.M("err.agent_foreign_booking", "ID", id))
		}
	}
	return nil
}

// upsertViolationsJSON stores vs, whose agent keys differ, in one statement.
func upsertViolationsJSON(tx *gorm.DB, nodeID int64, vs []wire.Violation, gpus, names map[string]int64, now time.Time) error {
	size := 2
	for _, v := range vs { // the row's text and room for its numbers and times, so that buf never grows
		size += len(v.ID) + len(v.Kind) + len(v.User) + len(v.Action) + len(v.Container) + 256
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '[')
	for i, v := range vs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(append(buf, '['), nodeID, 10)
		buf = appendJSONString(append(buf, ','), v.ID)
		buf = appendJSONString(append(buf, ','), v.Kind)
		buf = appendInts(buf, gpus[v.GPUUUID])
		buf = appendJSONString(append(buf, ','), clip(v.User, 256))
		if id := names[v.User]; id != 0 && v.User != "" {
			buf = appendInts(buf, id)
		} else {
			buf = append(buf, ",null"...)
		}
		buf = appendInts(buf, int64(v.UID), int64(v.PID), v.MemoryMiB)
		if v.BookingID != 0 {
			buf = appendInts(buf, v.BookingID)
		} else {
			buf = append(buf, ",null"...)
		}
		buf = appendJSONString(append(buf, ','), v.Action)
		buf = appendJSONTime(buf, utc(v.FirstSeen))
		buf = appendJSONTime(buf, utc(v.LastSeen))
		buf = appendJSONTime(buf, utc(now))
		buf = appendJSONString(append(buf, ','), v.Container)
		buf = append(buf, ']')
	}
	buf = append(buf, ']')
	pg := tx.Dialector.Name() == Postgres
	if err := tx.Exec(upsertViolationsSQL[pg], jsonArg(pg, buf)).Error; err != nil {
		return fmt.Errorf("store: violations: %w", err)
	}
	return nil
}
