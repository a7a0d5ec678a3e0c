package store

import (
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models/wire"
)

// An idle batch is stored with one statement, its rows bound as one JSON
// text, unless it names one report (agent key) twice; such a batch goes
// row by row in order, as a violation batch does (agent_violations_json.go).

const idleCols = "node_id, agent_key, booking_id, user_name, gpu_uuids, idle_since, reported_at, received_at"

var idlePGTypes = []string{"bigint", "text", "bigint", "text", "text", "timestamptz", "timestamptz", "timestamptz"}

const idleConflict = `ON CONFLICT (node_id, agent_key) DO UPDATE SET gpu_uuids = excluded.gpu_uuids, reported_at = excluded.reported_at
WHERE agent_idle_reports.reported_at < excluded.reported_at`

var upsertIdleSQL = map[bool]string{
	false: upsertFromJSON(false, "agent_idle_reports", idleCols, idlePGTypes, idleConflict),
	true:  upsertFromJSON(true, "agent_idle_reports", idleCols, idlePGTypes, idleConflict),
}

// repeatedIdle reports whether a report (agent key) is in rs twice.
func repeatedIdle(rs []wire.IdleReport) bool {
	seen := make(map[string]struct{}, len(rs))
	for _, r := range rs {
		if _, ok := seen[r.ID]; ok {
			return true
		}
		seen[r.ID] = struct{}{}
	}
	return false
}

// upsertIdleJSON stores rs, whose agent keys differ, in one statement.
func upsertIdleJSON(tx *gorm.DB, nodeID int64, rs []wire.IdleReport, now time.Time) error {
	size := 2
	for _, r := range rs { // the row's text and room for the rest, so that buf never grows
		size += len(r.ID) + len(r.User) + 128
		for _, u := range r.GPUUUIDs {
			size += len(u) + 1
		}
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '[')
	for i, r := range rs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(append(buf, '['), nodeID, 10)
		buf = appendJSONString(append(buf, ','), clip(r.ID, 256))
		buf = appendInts(buf, r.BookingID)
		buf = appendJSONString(append(buf, ','), clip(r.User, 256))
		buf = append(buf, ',', '"')
		for j, u := range r.GPUUUIDs { // UUIDs need no escaping (wire.ValidGPUUUID)
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, u...)
		}
		buf = append(buf, '"')
		buf = appendJSONTime(buf, utc(r.IdleSince))
		buf = appendJSONTime(buf, utc(r.ReportedAt))
		buf = appendJSONTime(buf, utc(now))
		buf = append(buf, ']')
	}
	buf = append(buf, ']')
	pg := tx.Dialector.Name() == Postgres
	if err := tx.Exec(upsertIdleSQL[pg], jsonArg(pg, buf)).Error; err != nil {
		return fmt.Errorf("store: idle reports: %w", err)
	}
	return nil
}
