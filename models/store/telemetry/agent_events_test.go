package telemetry_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

func TestAgentViolationsKeepTheLatestAction(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := storetest.Fixture(t, db, 1)
		n1, _ := storetest.Enrolled(t, db, "gpu21", 1, 2)
		v := wire.Violation{ID: "n1:unbooked:1", Kind: wire.ViolationUnbooked, GPUUUID: storetest.RealUUID(1, 1), User: "ada", UID: 1001,
			PID: 42, MemoryMiB: 100, FirstSeen: storetest.AgentAt0, LastSeen: storetest.AgentAt0, Action: wire.ActionWarned}
		later := v
		later.LastSeen, later.Action, later.MemoryMiB = storetest.AgentAt0.Add(6*time.Minute), wire.ActionSIGKILL, 300
		for _, batch := range [][]wire.Violation{{v}, {later}, {v}} { // the last is a delayed resend
			if err := telemetry.New(db).RecordViolations(ctx, n1, wire.ViolationBatch{Violations: batch}, storetest.AgentAt0.Add(10*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := telemetry.New(db).Violations(ctx, models.ViolationFilter{UserID: u.ID})
		if err != nil || len(got) != 1 {
			t.Fatalf("violations = %+v, %v", got, err)
		}
		g := got[0]
		if g.Action != wire.ActionSIGKILL || !g.LastSeen.Equal(later.LastSeen) || !g.FirstSeen.Equal(storetest.AgentAt0) || g.MemoryMiB != 300 ||
			g.UserName != "ada" || g.UserID != u.ID || g.PID != 42 || g.UID != 1001 || g.GPUIndex != 1 || g.NodeName != "gpu21" || g.AgentKey != v.ID {
			t.Errorf("violation = %+v", g)
		}
		bad := v
		bad.ID, bad.Kind, bad.BookingID = "x", wire.ViolationOverstay, 999
		err = telemetry.New(db).RecordViolations(ctx, n1, wire.ViolationBatch{Violations: []wire.Violation{bad}}, storetest.AgentAt0)
		if models.ErrorCode(err) != models.EFORBIDDEN {
			t.Errorf("a booking not of this node: %v, want forbidden", err)
		}
	})
}

// releaser is the booking store's ReleaseBooking, if built.
type releaser interface {
	ReleaseBooking(ctx context.Context, id int64, actor *models.User, now time.Time) (*models.Booking, error)
}

func TestAgentIdleAutoRelease(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, n1, b := twoGPUBooking(t, db, "gpu31")
		rep := wire.IdleReport{ID: "n1:1:x", BookingID: b.ID, User: "ada", GPUUUIDs: []string{storetest.RealUUID(1, 0), storetest.RealUUID(1, 1)},
			IdleSince: storetest.AgentAt0, ReportedAt: storetest.AgentAt0.Add(30 * time.Minute)}
		stored, err := telemetry.New(db).RecordIdle(ctx, n1, wire.IdleBatch{Reports: []wire.IdleReport{rep}}, rep.ReportedAt)
		if err != nil || len(stored) != 1 || stored[0].Report.UserID != u.ID || len(stored[0].Report.GPUIDs) != 2 ||
			stored[0].Report.WarnedAt != nil || len(stored[0].IDs) != 1 || stored[0].IDs[0] != stored[0].Report.ID {
			t.Fatalf("stored = %+v, %v", stored, err)
		}
		idle := storetest.UsageBatch(1, storetest.AgentAt0.Add(30*time.Minute), 5, 2)
		zero := 0.0
		for i := range idle.Records {
			idle.Records[i].UtilAvgPct, idle.Records[i].UtilMaxPct, idle.Records[i].Users = &zero, &zero, nil
		}
		if _, err := telemetry.New(db).IngestUsage(ctx, n1, idle, 0, storetest.AgentAt0.Add(35*time.Minute)); err != nil {
			t.Fatal(err)
		}
		pol := models.IdlePolicy{AutoRelease: true, Grace: 5 * time.Minute, UtilPct: 5}
		if due, err := telemetry.New(db).IdleReleaseDue(ctx, n1, pol, storetest.AgentAt0.Add(34*time.Minute)); err != nil || len(due) != 0 {
			t.Errorf("due before the grace ended: %+v, %v", due, err)
		}
		due, err := telemetry.New(db).IdleReleaseDue(ctx, n1, pol, storetest.AgentAt0.Add(35*time.Minute))
		if err != nil || len(due) != 1 || due[0].BookingID != b.ID {
			t.Fatalf("due = %+v, %v", due, err)
		}
		if err := telemetry.New(db).MarkIdle(ctx, due[0].ID, true, true, storetest.AgentAt0.Add(35*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if due, err := telemetry.New(db).IdleReleaseDue(ctx, n1, pol, storetest.AgentAt0.Add(36*time.Minute)); err != nil || len(due) != 0 {
			t.Errorf("released report still due: %+v, %v", due, err)
		}
		if r, ok := any(db).(releaser); ok {
			got, err := r.ReleaseBooking(ctx, b.ID, models.AutoReleaseActor, storetest.AgentAt0.Add(35*time.Minute))
			if err != nil || !got.EndsAt.Equal(storetest.AgentAt0.Add(35*time.Minute)) {
				t.Errorf("auto-release: %+v, %v", got, err)
			}
		}
	})
}

// TestAgentViolationLongUserName: a name longer than 256 bytes is refused
// whole (nothing stored), one of 256 bytes of multi-byte characters is
// stored as it is on both databases.
func TestAgentViolationLongUserName(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		n1, _ := storetest.Enrolled(t, db, "gpu21", 1, 1)
		v := wire.Violation{ID: "n1:unbooked:long", Kind: wire.ViolationUnbooked, GPUUUID: storetest.RealUUID(1, 0),
			User: strings.Repeat("€", 86), UID: 1001, PID: 42, MemoryMiB: 100, FirstSeen: storetest.AgentAt0, LastSeen: storetest.AgentAt0, Action: wire.ActionWarned}
		var me *models.Error
		if err := telemetry.New(db).RecordViolations(ctx, n1, wire.ViolationBatch{Violations: []wire.Violation{v}}, storetest.AgentAt0); !errors.As(err, &me) || me.Code != models.EINVALID {
			t.Fatalf("258-byte name: %v, want EINVALID", err)
		}
		v.User = strings.Repeat("€", 85)
		if err := telemetry.New(db).RecordViolations(ctx, n1, wire.ViolationBatch{Violations: []wire.Violation{v}}, storetest.AgentAt0); err != nil {
			t.Fatal(err)
		}
		var names []string
		if err := db.Gorm.Table("agent_violations").Pluck("user_name", &names).Error; err != nil {
			t.Fatal(err)
		}
		if want := strings.Repeat("€", 85); len(names) != 1 || names[0] != want {
			t.Errorf("user names = %q, want [%q]", names, want)
		}
	})
}

// TestAgentViolationsInOneBatch: a batch stores every episode it names
// (one statement), keeps the latest sighting of an episode it names twice
// (row by row), and stores nothing when one names another node's booking.
func TestAgentViolationsInOneBatch(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := storetest.Fixture(t, db, 1)
		n1, _ := storetest.Enrolled(t, db, "gpu22", 1, 2)
		var batch []wire.Violation
		for i := range 3 {
			batch = append(batch, wire.Violation{ID: "n1:unbooked:" + string(rune('a'+i)), Kind: wire.ViolationUnbooked, GPUUUID: storetest.RealUUID(1, i%2),
				User: "ada", UID: 1001, PID: 42 + i, MemoryMiB: int64(100 * i), FirstSeen: storetest.AgentAt0, LastSeen: storetest.AgentAt0, Action: wire.ActionWarned, Container: "0123456789abcdef"})
		}
		if err := telemetry.New(db).RecordViolations(ctx, n1, wire.ViolationBatch{Violations: batch}, storetest.AgentAt0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		later := batch[0]
		later.LastSeen, later.Action, later.MemoryMiB = storetest.AgentAt0.Add(6*time.Minute), wire.ActionSIGKILL, 300
		older := batch[0]
		if err := telemetry.New(db).RecordViolations(ctx, n1, wire.ViolationBatch{Violations: []wire.Violation{later, older}}, storetest.AgentAt0.Add(7*time.Minute)); err != nil {
			t.Fatal(err)
		}
		got, err := telemetry.New(db).Violations(ctx, models.ViolationFilter{UserID: u.ID})
		if err != nil || len(got) != 3 {
			t.Fatalf("violations = %+v, %v", got, err)
		}
		byKey := map[string]models.Violation{}
		for _, g := range got {
			byKey[g.AgentKey] = g
		}
		for i, v := range batch {
			g, want := byKey[v.ID], v
			if i == 0 {
				want = later
			}
			if g.Action != want.Action || !g.LastSeen.Equal(want.LastSeen) || !g.FirstSeen.Equal(storetest.AgentAt0) || g.MemoryMiB != want.MemoryMiB ||
				g.UserName != "ada" || g.UserID != u.ID || g.PID != want.PID || g.UID != 1001 || g.GPUIndex != i%2 || g.Container != want.Container {
				t.Errorf("violation %d = %+v, want %+v", i, g, want)
			}
		}
		bad := batch[1]
		bad.ID, bad.Kind, bad.BookingID = "x", wire.ViolationOverstay, 999
		err = telemetry.New(db).RecordViolations(ctx, n1, wire.ViolationBatch{Violations: []wire.Violation{{ID: "y", Kind: wire.ViolationMemoryNoProcess,
			GPUUUID: storetest.RealUUID(1, 0), FirstSeen: storetest.AgentAt0, LastSeen: storetest.AgentAt0, Action: wire.ActionNone}, bad}}, storetest.AgentAt0)
		if models.ErrorCode(err) != models.EFORBIDDEN || !strings.Contains(err.Error(), "999") {
			t.Errorf("a booking not of this node: %v, want forbidden naming 999", err)
		}
		if got, _ := telemetry.New(db).Violations(ctx, models.ViolationFilter{}); len(got) != 3 {
			t.Errorf("after a refused batch: %d violations, want 3", len(got))
		}
	})
}

// TestRecordIdleGroupsByBooking: RecordIdle returns each booking's un-warned
// reports of the batch once, the newest in full; reports already warned
// are not returned again.
func TestRecordIdleGroupsByBooking(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := storetest.Fixture(t, db, 1)
		n1, _ := storetest.Enrolled(t, db, "gpu41", 1, 2)
		node, _ := db.Node(ctx, n1)
		var bs []*models.Booking
		for i := range 2 {
			b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[i].ID},
				StartsAt: storetest.AgentAt0, EndsAt: storetest.AgentAt0.Add(2 * time.Hour)}, models.DefaultBookingLimits, storetest.AgentAt0, models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			bs = append(bs, b)
		}
		rep := func(id string, b int, minute int) wire.IdleReport {
			return wire.IdleReport{ID: id, BookingID: bs[b].ID, User: "ada", GPUUUIDs: []string{storetest.RealUUID(1, b)},
				IdleSince: storetest.AgentAt0, ReportedAt: storetest.AgentAt0.Add(time.Duration(minute) * time.Minute)}
		}
		batch := wire.IdleBatch{Reports: []wire.IdleReport{rep("a1", 0, 30), rep("a2", 0, 31), rep("b1", 1, 30)}}
		got, err := telemetry.New(db).RecordIdle(ctx, n1, batch, storetest.AgentAt0.Add(31*time.Minute))
		if err != nil || len(got) != 2 {
			t.Fatalf("first batch: %+v, %v", got, err)
		}
		if got[0].Report.BookingID != bs[0].ID || got[0].Report.AgentKey != "a2" || len(got[0].IDs) != 2 ||
			got[1].Report.BookingID != bs[1].ID || len(got[1].IDs) != 1 || got[1].Report.UserID != u.ID {
			t.Errorf("groups = %+v", got)
		}
		if err := telemetry.New(db).MarkIdleReports(ctx, got[0].IDs, true, false, storetest.AgentAt0.Add(31*time.Minute)); err != nil {
			t.Fatal(err)
		}
		batch.Reports = append(batch.Reports, rep("a3", 0, 32))
		got, err = telemetry.New(db).RecordIdle(ctx, n1, batch, storetest.AgentAt0.Add(32*time.Minute))
		if err != nil || len(got) != 2 || got[0].Report.AgentKey != "a3" || len(got[0].IDs) != 1 || got[1].Report.AgentKey != "b1" {
			t.Errorf("after booking 1's warning: %+v, %v", got, err)
		}
	})
}

// TestRecordIdleKeyTwiceInOneBatch: a batch that names one report twice
// (its idle set grew between two sightings) is stored row by row in order,
// and keeps the latest sighting, whatever order the rows come in.
func TestRecordIdleKeyTwiceInOneBatch(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, n1, b := twoGPUBooking(t, db, "gpu42")
		rep := func(minute int, gpus ...int) wire.IdleReport {
			r := wire.IdleReport{ID: "k1", BookingID: b.ID, User: "ada", IdleSince: storetest.AgentAt0, ReportedAt: storetest.AgentAt0.Add(time.Duration(minute) * time.Minute)}
			for _, g := range gpus {
				r.GPUUUIDs = append(r.GPUUUIDs, storetest.RealUUID(1, g))
			}
			return r
		}
		batch := wire.IdleBatch{Reports: []wire.IdleReport{rep(30, 0), rep(31, 0, 1), rep(29, 1)}}
		if _, err := telemetry.New(db).RecordIdle(ctx, n1, batch, storetest.AgentAt0.Add(32*time.Minute)); err != nil {
			t.Fatal(err)
		}
		got, err := telemetry.New(db).IdleReports(ctx, models.IdleFilter{UserID: u.ID})
		if err != nil || len(got) != 1 {
			t.Fatalf("idle reports = %+v, %v", got, err)
		}
		g := got[0]
		if want := []string{storetest.RealUUID(1, 0), storetest.RealUUID(1, 1)}; g.AgentKey != "k1" || g.BookingID != b.ID || !slices.Equal(g.GPUUUIDs, want) ||
			!g.ReportedAt.Equal(storetest.AgentAt0.Add(31*time.Minute)) || !g.IdleSince.Equal(storetest.AgentAt0) {
			t.Errorf("report = %+v, want key k1, GPUs %v, reported at minute 31", g, want)
		}
	})
}

// twoGPUBooking enrols node host (agent 1, two GPUs) and books both GPUs
// for the fixture's user from storetest.AgentAt0 for two hours: the user, the node, the
// booking.
func twoGPUBooking(t *testing.T, db *store.DB, host string) (*models.User, int64, *models.Booking) {
	t.Helper()
	u, _ := storetest.Fixture(t, db, 1)
	n1, _ := storetest.Enrolled(t, db, host, 1, 2)
	node, _ := db.Node(ctx, n1)
	b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[0].ID, node.GPUs[1].ID},
		StartsAt: storetest.AgentAt0, EndsAt: storetest.AgentAt0.Add(2 * time.Hour)}, models.DefaultBookingLimits, storetest.AgentAt0, models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	return u, n1, b
}
