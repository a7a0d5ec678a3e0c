package store_test

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
)

// TestIngestUsageUnixNames: the user rows of a batch name their gpubook
// user by the local part of the email, a name two users share names
// nobody, and a LIKE wildcard in a name matches only itself.
func TestIngestUsageUnixNames(t *testing.T) {
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
		n, _ := enrolled(t, db, "gpu11", 1, 1)
		r := wire.UsageRecord{GPUUUID: realUUID(1, 0), Minute: at0, MemTotalMiB: 81920, Samples: 6}
		for i, name := range []string{"ada", "bob", "a_b", "axb", "ghost"} {
			r.Users = append(r.Users, wire.UserUsage{User: name, UID: 1001 + i, MemoryMiB: 100, Processes: 1})
		}
		b := wire.UsageBatch{Node: "x", BatchID: "b", Records: []wire.UsageRecord{r}}
		if _, err := db.IngestUsage(ctx, n, b, 400*24*time.Hour, at0.Add(time.Hour)); err != nil {
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

// TestIngestUsageContainer: the container of a user's minute is stored and
// read back for the live status page; a user outside containers has none,
// as for an older agent's record, which has no container field; a
// container id with a control character refuses the batch.
func TestIngestUsageContainer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		n, _ := enrolled(t, db, "gpu17", 1, 1)
		id := "4f2a9c1be0d3" + "0123456789abcdef0123456789abcdef0123456789abcdef0123"
		r := wire.UsageRecord{GPUUUID: realUUID(1, 0), Minute: at0, MemTotalMiB: 81920, Samples: 6, Users: []wire.UserUsage{
			{User: "root", UID: 0, MemoryMiB: 900, Processes: 2, Container: id},
			{User: "ada", UID: 1001, MemoryMiB: 100, Processes: 1}}}
		b := wire.UsageBatch{Node: "x", BatchID: "b", Records: []wire.UsageRecord{r}}
		if _, err := db.IngestUsage(ctx, n, b, 400*24*time.Hour, at0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		in, err := db.LiveInputs(ctx, at0.Add(time.Minute))
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
		bad.Records[0].Minute = at0.Add(time.Minute)
		bad.Records[0].Users = []wire.UserUsage{{User: "eve", UID: 1005, Container: "abc\n12345678901"}}
		if _, err := db.IngestUsage(ctx, n, bad, 400*24*time.Hour, at0.Add(2*time.Minute)); models.ErrorCode(err) != models.EINVALID {
			t.Errorf("container with a newline: err = %v, want EINVALID", err)
		}
		var count int64
		if err := db.Gorm.Table("gpu_user_usage_minutes").Where("user_name = ?", "eve").Count(&count).Error; err != nil || count != 0 {
			t.Errorf("refused batch wrote %d rows (%v)", count, err)
		}
	})
}
