package telemetry_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

// TestIngestUsageUnixNames: the user rows of a batch name their gpubook
// user by the local part of the email, a name two users share names
// nobody, and a LIKE wildcard in a name matches only itself.
func TestIngestUsageUnixNames(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		want := map[string]int64{}
		for _, e := range []string{"ada@example.org", "bob@a.org", "bob@b.org", "axb@example.org", "a_b@example.org"} {
			u := &models.User{Email: e, Name: e}
			if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			want[models.UnixName(e)] = u.ID
		}
		want["bob"], want["ghost"] = 0, 0
		n, _ := storetest.Enrolled(t, db, "gpu11", 1, 1)
		r := wire.UsageRecord{GPUUUID: storetest.RealUUID(1, 0), Minute: storetest.AgentAt0, MemTotalMiB: 81920, Samples: 6}
		for i, name := range []string{"ada", "bob", "a_b", "axb", "ghost"} {
			r.Users = append(r.Users, wire.UserUsage{User: name, UID: 1001 + i, MemoryMiB: 100, Processes: 1})
		}
		b := wire.UsageBatch{Node: "x", BatchID: "b", Records: []wire.UsageRecord{r}}
		if _, err := telemetry.New(db).IngestUsage(ctx, n, b, 400*24*time.Hour, storetest.AgentAt0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		var rows []struct {
			UserName string `gorm:"column:user_name"`
			UserID   *int64 `gorm:"column:user_id"`
		}
		if err := db.Gorm.Table("gpu_user_usage_minutes").Select("user_name, user_id").Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		if len(rows) != 5 {
			t.Fatalf("user rows = %d, want 5", len(rows))
		}
		for _, row := range rows {
			var got int64
			if row.UserID != nil {
				got = *row.UserID
			}
			if got != want[row.UserName] {
				t.Errorf("%s: user id = %d, want %d", row.UserName, got, want[row.UserName])
			}
		}
	})
}

// TestIngestUsageInChunks: a batch larger than one chunk of rows is stored
// whole and stamped as RestampUsage would stamp it, its minutes compare
// with bound times, and a resend stores nothing twice.
func TestIngestUsageInChunks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ada, _ := storetest.Fixture(t, db, 1)
		n, _ := storetest.Enrolled(t, db, "gpu12", 2, 8)
		node, err := db.Node(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		bk, err := db.CreateBooking(ctx, models.NewBooking{UserID: ada.ID, GPUIDs: []int64{node.GPUs[0].ID}, StartsAt: storetest.AgentAt0, EndsAt: storetest.AgentAt0.Add(time.Hour)},
			models.DefaultBookingLimits, storetest.AgentAt0.Add(-time.Hour), models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		b := wire.UsageBatch{Node: "gpu12", BatchID: "b"}
		for m := range 120 {
			for g := range 8 {
				r := wire.UsageRecord{GPUUUID: storetest.RealUUID(2, g), Minute: storetest.AgentAt0.Add(time.Duration(m) * time.Minute), MemTotalMiB: 81920, Samples: 6}
				for u := range 12 {
					name := "ada"
					if u > 0 {
						name = fmt.Sprintf("u%02d", u)
					}
					r.Users = append(r.Users, wire.UserUsage{User: name, UID: 1000 + u, MemoryMiB: int64(100 * (u + 1)), Processes: 1})
				}
				b.Records = append(b.Records, r)
			}
		}
		count := func(q string, args ...any) int64 {
			var c int64
			if err := db.Gorm.Raw(q, args...).Scan(&c).Error; err != nil {
				t.Fatal(err)
			}
			return c
		}
		stamps := func() [5]int64 {
			return [5]int64{
				count("SELECT COUNT(*) FROM gpu_usage_minutes WHERE minute >= ? AND minute < ?", storetest.AgentAt0, storetest.AgentAt0.Add(2*time.Hour)),
				count("SELECT COUNT(*) FROM gpu_user_usage_minutes WHERE minute >= ? AND minute < ?", storetest.AgentAt0, storetest.AgentAt0.Add(2*time.Hour)),
				count("SELECT COUNT(*) FROM gpu_usage_minutes WHERE booking_id = ? AND booker_mem_mib = 100 AND top_mem_mib = 1200", bk.ID),
				count("SELECT COUNT(*) FROM gpu_user_usage_minutes WHERE booked AND user_id = ?", ada.ID),
				count("SELECT COUNT(*) FROM gpu_usage_minutes WHERE util_avg_pct IS NULL AND unix_minute * 60 >= ?", storetest.AgentAt0.Unix()),
			}
		}
		res, err := telemetry.New(db).IngestUsage(ctx, n, b, 400*24*time.Hour, storetest.AgentAt0.Add(3*time.Hour))
		if err != nil || res.Inserted != 960 || res.Duplicates != 0 {
			t.Fatalf("first: %+v, %v", res, err)
		}
		want := [5]int64{960, 11520, 60, 60, 960}
		if got := stamps(); got != want {
			t.Errorf("stored, stamped = %v, want %v", got, want)
		}
		if err := db.RestampUsage(ctx, storetest.AgentAt0, storetest.AgentAt0.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got := stamps(); got != want {
			t.Errorf("restamped = %v, want %v", got, want)
		}
		res, err = telemetry.New(db).IngestUsage(ctx, n, b, 400*24*time.Hour, storetest.AgentAt0.Add(3*time.Hour))
		if err != nil || res.Inserted != 0 || res.Duplicates != 960 {
			t.Fatalf("resend: %+v, %v", res, err)
		}
		if got := stamps(); got != want {
			t.Errorf("after the resend = %v, want %v", got, want)
		}
	})
}

// TestIngestUsageContainer: the container of a user's minute is stored and
// read back for the live status page; a user outside containers has none,
// as for an older agent's record, which has no container field; a
// container id with a control character refuses the batch.
func TestIngestUsageContainer(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		n, _ := storetest.Enrolled(t, db, "gpu17", 1, 1)
		id := "4f2a9c1be0d3" + "0123456789abcdef0123456789abcdef0123456789abcdef0123"
		r := wire.UsageRecord{GPUUUID: storetest.RealUUID(1, 0), Minute: storetest.AgentAt0, MemTotalMiB: 81920, Samples: 6, Users: []wire.UserUsage{
			{User: "root", UID: 0, MemoryMiB: 900, Processes: 2, Container: id},
			{User: "ada", UID: 1001, MemoryMiB: 100, Processes: 1}}}
		b := wire.UsageBatch{Node: "x", BatchID: "b", Records: []wire.UsageRecord{r}}
		if _, err := telemetry.New(db).IngestUsage(ctx, n, b, 400*24*time.Hour, storetest.AgentAt0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		in, err := telemetry.New(db).LiveInputs(ctx, storetest.AgentAt0.Add(time.Minute), models.LiveScope{All: true})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, u := range in.Users {
			got[u.UserName] = u.Container
		}
		if len(got) != 2 || got["root"] != id || got["ada"] != "" {
			t.Errorf("containers = %q, want root's %q and none for ada", got, id)
		}
		bad := b
		bad.BatchID, bad.Records = "c", []wire.UsageRecord{r}
		bad.Records[0].Minute = storetest.AgentAt0.Add(time.Minute)
		bad.Records[0].Users = []wire.UserUsage{{User: "eve", UID: 1005, Container: "abc\n12345678901"}}
		if _, err := telemetry.New(db).IngestUsage(ctx, n, bad, 400*24*time.Hour, storetest.AgentAt0.Add(2*time.Minute)); models.ErrorCode(err) != models.EINVALID {
			t.Errorf("container with a newline: err = %v, want EINVALID", err)
		}
		var count int64
		if err := db.Gorm.Table("gpu_user_usage_minutes").Where("user_name = ?", "eve").Count(&count).Error; err != nil || count != 0 {
			t.Errorf("refused batch wrote %d rows (%v)", count, err)
		}
	})
}

// TestIngestUsageEveryBatchSize: a node's minute, a resend of it, a resend
// whose new user row makes a minute stored before need a restamp, and a
// minute whose user rows outgrow one piece (the user rows' piece is sent
// first, after the minutes gathered before it) are all stored by the one
// path, on both databases. A GPU of another node, or none of the
// cluster's, is refused with nothing written.
func TestIngestUsageEveryBatchSize(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		storetest.Fixture(t, db, 1)
		n1, _ := storetest.Enrolled(t, db, "gpu31", 1, 8)
		n2, _ := storetest.Enrolled(t, db, "gpu32", 2, 1)
		ret, now := 400*24*time.Hour, storetest.AgentAt0.Add(time.Hour)

		minute := storetest.UsageBatch(1, storetest.AgentAt0, 1, 8)
		res, err := telemetry.New(db).IngestUsage(ctx, n1, minute, ret, now)
		if err != nil || res.Inserted != 8 || res.Duplicates != 0 {
			t.Fatalf("a node's minute: %+v, %v; want 8 inserted", res, err)
		}
		if got := [2]int64{storetest.Count(t, db, "gpu_usage_minutes"), storetest.Count(t, db, "gpu_user_usage_minutes")}; got != [2]int64{8, 2} {
			t.Errorf("after a minute: %v rows, want 8 minutes and 2 user rows", got)
		}
		res, err = telemetry.New(db).IngestUsage(ctx, n1, minute, ret, now)
		if err != nil || res.Inserted != 0 || res.Duplicates != 8 {
			t.Errorf("the same minute again: %+v, %v; want 8 duplicates", res, err)
		}

		more := storetest.UsageBatch(1, storetest.AgentAt0, 1, 8)
		more.Records[0].Users = append(more.Records[0].Users, wire.UserUsage{User: "eve", UID: 1003, MemoryMiB: 5000, Processes: 1})
		if res, err := telemetry.New(db).IngestUsage(ctx, n1, more, ret, now); err != nil || res.Inserted != 0 || res.Duplicates != 8 {
			t.Errorf("a resend with a new user row: %+v, %v; want 8 duplicates", res, err)
		}
		var top int64
		if err := db.Gorm.Raw("SELECT top_mem_mib FROM gpu_usage_minutes WHERE minute = ? AND gpu_id = (SELECT id FROM gpus WHERE uuid = ?)",
			storetest.AgentAt0, storetest.RealUUID(1, 0)).Scan(&top).Error; err != nil || top != 5000 {
			t.Errorf("the resent minute's top memory = %d (%v), want eve's 5000: restamped", top, err)
		}

		wide := storetest.UsageBatch(1, storetest.AgentAt0.Add(time.Minute), 1, 1)
		wide.Records[0].Users = nil
		for u := range wire.MaxUsersPerRecord {
			// Backslashes double in the piece's JSON: 64 rows of about 600 bytes.
			wide.Records[0].Users = append(wide.Records[0].Users, wire.UserUsage{User: fmt.Sprintf("%03d%s", u, strings.Repeat(`\`, 250)),
				UID: 2000 + u, MemoryMiB: 10, Processes: 1, Container: strings.Repeat("c", 64)})
		}
		if res, err := telemetry.New(db).IngestUsage(ctx, n1, wide, ret, now); err != nil || res.Inserted != 1 {
			t.Errorf("64 user rows of 600 bytes: %+v, %v; want 1 inserted", res, err)
		}
		if got := [2]int64{storetest.Count(t, db, "gpu_usage_minutes"), storetest.Count(t, db, "gpu_user_usage_minutes")}; got != [2]int64{9, 67} {
			t.Errorf("after the resend and the wide minute: %v rows, want 9 minutes and 2 + 1 + 64 user rows", got)
		}

		if _, err := telemetry.New(db).IngestUsage(ctx, n1, storetest.UsageBatch(2, storetest.AgentAt0, 1, 1), ret, now); models.ErrorCode(err) != models.EFORBIDDEN {
			t.Errorf("node 2's GPU from node 1: %v, want forbidden", err)
		}
		if _, err := telemetry.New(db).IngestUsage(ctx, n2, storetest.UsageBatch(1, storetest.AgentAt0.Add(2*time.Minute), 1, 1), ret, now); models.ErrorCode(err) != models.EFORBIDDEN {
			t.Errorf("node 1's GPU from node 2: %v, want forbidden", err)
		}
		unknown := storetest.UsageBatch(9, storetest.AgentAt0, 1, 1)
		if _, err := telemetry.New(db).IngestUsage(ctx, n1, unknown, ret, now); models.ErrorCode(err) != models.ECONFLICT {
			t.Errorf("a GPU the cluster lacks: %v, want a conflict", err)
		}
		if got := [2]int64{storetest.Count(t, db, "gpu_usage_minutes"), storetest.Count(t, db, "gpu_user_usage_minutes")}; got != [2]int64{9, 67} {
			t.Errorf("after the refusals: %v rows, want 9 and 67 still", got)
		}
	})
}
