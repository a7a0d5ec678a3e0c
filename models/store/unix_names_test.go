package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

// TestSetUnixLogin: an admin sets a login with extra names; another user
// cannot take any of them (primary or extra); every change is audited once;
// clearing goes back to the assumed name.
func TestSetUnixLogin(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		zs := &models.User{Email: "zhangsan@lab.edu.cn", Name: "Zhang San"}
		bob := &models.User{Email: "bob@lab.edu.cn", Name: "Bob"}
		for _, u := range []*models.User{zs, bob} {
			if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
				t.Fatal(err)
			}
		}
		set := models.UnixIdentity{Name: "zs2023", Extra: []string{"zhangsan_old", "shared1", "zs2023"}, Source: models.UnixSourceAdmin}
		if err := db.SetUnixLogin(ctx, zs.ID, set, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		got, err := db.UnixIdentity(ctx, zs.ID)
		if err != nil || got.Name != "zs2023" || got.Source != models.UnixSourceAdmin || !slices.Equal(got.Extra, []string{"shared1", "zhangsan_old"}) {
			t.Fatalf("identity = %+v, %v", got, err)
		}
		u, _ := db.User(ctx, zs.ID)
		if u.UnixLogin() != "zs2023" || u.UnixAssumed() {
			t.Errorf("login = %q assumed %v", u.UnixLogin(), u.UnixAssumed())
		}
		// The same again changes nothing and adds no audit entry.
		if err := db.SetUnixLogin(ctx, zs.ID, set, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		var audits int64
		db.Gorm.Table("audit_events").Where("action = ?", models.AuditUserUnix).Count(&audits)
		if audits != 1 {
			t.Errorf("audit entries = %d, want 1", audits)
		}
		for _, x := range []models.UnixIdentity{
			{Name: "zs2023", Source: models.UnixSourceAdmin},
			{Name: "bob", Extra: []string{"shared1"}, Source: models.UnixSourceAdmin},
			{Name: "zhangsan_old", Source: models.UnixSourceSSO},
		} {
			err := db.SetUnixLogin(ctx, bob.ID, x, models.CLIActor)
			if models.ErrorCode(err) != models.ECONFLICT {
				t.Errorf("bob takes %+v: %v, want ECONFLICT", x, err)
			}
		}
		if err := db.SetUnixLogin(ctx, bob.ID, models.UnixIdentity{Name: "bad name", Source: models.UnixSourceAdmin}, models.CLIActor); models.ErrorCode(err) != models.EINVALID {
			t.Errorf("invalid name: %v, want EINVALID", err)
		}
		if err := db.SetUnixLogin(ctx, zs.ID, models.UnixIdentity{}, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		u, _ = db.User(ctx, zs.ID)
		if u.UnixLogin() != "zhangsan" || !u.UnixAssumed() {
			t.Errorf("cleared: login = %q assumed %v", u.UnixLogin(), u.UnixAssumed())
		}
		// Freed names may now be taken.
		if err := db.SetUnixLogin(ctx, bob.ID, models.UnixIdentity{Name: "zs2023", Source: models.UnixSourceAdmin}, models.CLIActor); err != nil {
			t.Errorf("freed name: %v", err)
		}
	})
}

// TestUnixLoginsReachScheduleAndUsage: the schedule names each booking by
// its owner's login (never an email); usage under a primary or an extra
// name is charged to its owner; a user whose assumed name another user owns
// explicitly gets neither that user's usage nor a booking on their login.
func TestUnixLoginsReachScheduleAndUsage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		n1, _ := enrolled(t, db, "gpu31", 1, 3)
		node, err := db.Node(ctx, n1)
		if err != nil {
			t.Fatal(err)
		}
		addUser := func(e string) *models.User {
			u := &models.User{Email: e, Name: e}
			if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			return u
		}
		zs, sw := addUser("zhangsan@lab.edu.cn"), addUser("s.wang@corp.com")
		if err := db.SetUnixLogin(ctx, zs.ID, models.UnixIdentity{Name: "zs2023", Extra: []string{"zsold"}, Source: models.UnixSourceAdmin}, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if err := db.SetUnixLogin(ctx, sw.ID, models.UnixIdentity{Name: "wangs", Source: models.UnixSourceSSO}, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		// Made after s.wang owns "wangs": had it come first, the claim
		// would have been refused (TestSetUnixLoginRefusesAssumed).
		imposter := addUser("wangs@other.org")
		now := at0.Add(-time.Hour)
		for i, u := range []*models.User{zs, sw, imposter} {
			if _, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[i].ID}, StartsAt: at0, EndsAt: at0.Add(time.Hour)},
				models.DefaultBookingLimits, now, models.CLIActor); err != nil {
				t.Fatal(err)
			}
		}
		s, _, err := db.AgentSchedule(ctx, n1, at0)
		if err != nil {
			t.Fatal(err)
		}
		var logins []string
		for _, b := range s.Bookings {
			logins = append(logins, b.User)
			if b.Email != "" {
				t.Errorf("booking %d carries email %q", b.ID, b.Email)
			}
		}
		slices.Sort(logins)
		if !slices.Equal(logins, []string{"wangs", "zs2023"}) {
			t.Errorf("schedule logins = %v, want [wangs zs2023] (wangs@other.org's assumed name is s.wang's)", logins)
		}

		r := wire.UsageRecord{GPUUUID: realUUID(1, 0), Minute: at0, MemTotalMiB: 81920, Samples: 6}
		for i, name := range []string{"zs2023", "zsold", "wangs", "zhangsan"} {
			r.Users = append(r.Users, wire.UserUsage{User: name, UID: 2001 + i, MemoryMiB: 100, Processes: 1})
		}
		b := wire.UsageBatch{Node: "x", BatchID: "u1", Records: []wire.UsageRecord{r}}
		if _, err := telemetry.New(db).IngestUsage(ctx, n1, b, 400*24*time.Hour, at0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"zs2023": zs.ID, "zsold": zs.ID, "wangs": sw.ID, "zhangsan": 0}
		var rows []struct {
			UserName string `gorm:"column:user_name"`
			UserID   *int64 `gorm:"column:user_id"`
		}
		if err := db.Gorm.Table("gpu_user_usage_minutes").Select("user_name, user_id").Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(want) {
			t.Fatalf("rows = %d, want %d", len(rows), len(want))
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
