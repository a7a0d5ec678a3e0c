package telemetry_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

// TestAgentRowsTextAndPieces: the rows of a batch reach the database in
// pieces (agent_rows.go: JSON; on PostgreSQL, lines of it sent with COPY
// once a table's rows fill more than one piece) with every text as the
// agent sent it — quotes, backslashes, what COPY's text format would
// read as NULL, non-ASCII — and none lost or doubled where one piece ends
// and the next begins (500 violations of about 800 bytes fill a dozen).
func TestAgentRowsTextAndPieces(t *testing.T) {
	names := []string{`a\b`, `"quoted"`, `it's`, `\N`, `\t not a tab`, `ends with \`, "€ and 漢字", strings.Repeat(`\`, 256)}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		n1, _ := storetest.Enrolled(t, db, "gpu31", 1, 2)
		var batch []wire.Violation
		for i := range wire.MaxViolationsPerBatch {
			batch = append(batch, wire.Violation{ID: fmt.Sprintf("%04d:%s", i, strings.Repeat("k", 250)), Kind: wire.ViolationUnbooked,
				GPUUUID: storetest.RealUUID(1, i%2), User: names[i%len(names)], UID: 1001, PID: 1 + i, MemoryMiB: int64(i),
				FirstSeen: storetest.AgentAt0, LastSeen: storetest.AgentAt0, Action: wire.ActionWarned})
		}
		if err := telemetry.New(db).RecordViolations(ctx, n1, wire.ViolationBatch{Violations: batch}, storetest.AgentAt0); err != nil {
			t.Fatal(err)
		}
		var rows []struct {
			AgentKey  string
			UserName  string
			MemoryMib int64
		}
		if err := db.Gorm.Table("agent_violations").Select("agent_key, user_name, memory_mib").Order("agent_key").Find(&rows).Error; err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(batch) {
			t.Fatalf("%d rows stored, want %d", len(rows), len(batch))
		}
		for i, r := range rows {
			if r.AgentKey != batch[i].ID || r.UserName != batch[i].User || r.MemoryMib != int64(i) {
				t.Errorf("row %d = %q, %q, %d; want %q, %q, %d", i, r.AgentKey[:8], r.UserName, r.MemoryMib, batch[i].ID[:8], batch[i].User, i)
			}
		}
	})
}
