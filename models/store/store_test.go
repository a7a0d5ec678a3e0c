package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

var ctx = context.Background()

// fixture makes a user and a node with n GPUs.
// fixture makes the user Ada and the node gpu01 with n GPUs (storetest).
var fixture = storetest.Fixture

func TestMigrations(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			db := storetest.OpenEmpty(t, d)
			pending, err := db.Pending(ctx)
			if err != nil || pending == 0 {
				t.Fatalf("pending on empty db = %d, %v; want > 0", pending, err)
			}
			all, err := db.MigrateUp(ctx)
			if err != nil || len(all) != pending {
				t.Fatalf("up = %v, %v; want %d versions", all, err, pending)
			}
			newest := all[len(all)-1]
			if v, err := db.MigrateDownOne(ctx); err != nil || v != newest {
				t.Fatalf("down-one = %d, %v; want %d", v, err, newest)
			}
			applied, err := db.MigrateUp(ctx)
			if err != nil || len(applied) != 1 || applied[0] != newest {
				t.Fatalf("up again = %v, %v; want [%d]", applied, err, newest)
			}
			if pending, err := db.Pending(ctx); err != nil || pending != 0 {
				t.Fatalf("pending after up = %d, %v", pending, err)
			}
			fixture(t, db, 2) // the schema works after the round trip
		})
	}
}

func TestUsers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1)
		got, err := db.UserByEmail(ctx, " ADA@example.org ")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != u.ID || got.Email != "ada@example.org" || got.Name != "Ada" || got.IsAdmin {
			t.Errorf("got %+v", got)
		}
		dup := &models.User{Email: "ada@example.org", Name: "Other"}
		if err := db.CreateUser(ctx, dup, models.CLIActor); models.ErrorCode(err) != models.ECONFLICT {
			t.Errorf("duplicate email: got %v, want conflict", err)
		}
		if _, err := db.User(ctx, 999); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("missing user: got %v, want not_found", err)
		}
		bad := &models.User{Email: "not-an-email", Name: ""}
		err = db.CreateUser(ctx, bad, models.CLIActor)
		if e := models.AsError(err); e.Code != models.EINVALID || e.Fields["email"].Key == "" || e.Fields["name"].Key == "" {
			t.Errorf("bad user: got %v", err)
		}
		if n, _ := db.CountUsers(ctx); n != 1 {
			t.Errorf("count = %d, want 1 (nothing written for bad input)", n)
		}
		if err := db.SetAdmin(ctx, u.ID, true, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.User(ctx, u.ID); !got.IsAdmin {
			t.Error("SetAdmin did not stick")
		}
	})
}

func TestTeams(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1)
		team := &models.Team{Name: "Vision"}
		if err := db.CreateTeam(ctx, team, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		m := &models.Membership{TeamID: team.ID, UserID: u.ID, Role: models.RoleMember}
		if err := db.SetMembership(ctx, m, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		m.Role = models.RoleLead
		if err := db.SetMembership(ctx, m, models.CLIActor); err != nil {
			t.Fatalf("change role: %v", err)
		}
		ms, err := db.Members(ctx, team.ID)
		if err != nil || len(ms) != 1 {
			t.Fatalf("members = %v, %v", ms, err)
		}
		want := models.Membership{TeamID: team.ID, UserID: u.ID, Role: models.RoleLead, Source: models.SourceManual, TeamName: "Vision", UserName: "Ada", UserEmail: "ada@example.org"}
		got := ms[0]
		got.CreatedAt = time.Time{}
		if got != want {
			t.Errorf("got %+v, want %+v", got, want)
		}
		if err := db.RemoveMembership(ctx, team.ID, u.ID, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if err := db.RemoveMembership(ctx, team.ID, u.ID, models.CLIActor); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("second remove: %v", err)
		}
	})
}

func TestNodes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, node := fixture(t, db, 8)
		nodes, err := db.Nodes(ctx)
		if err != nil || len(nodes) != 1 || len(nodes[0].GPUs) != 8 {
			t.Fatalf("nodes = %+v, %v", nodes, err)
		}
		g := nodes[0].GPUs[3]
		if g.Index != 3 || g.NodeName != "gpu01" || g.Model != "NVIDIA A100-SXM4-80GB" || g.MemoryMiB != 81920 || !g.InService {
			t.Errorf("gpu 3 = %+v", g)
		}
		if err := db.SetGPUService(ctx, g.ID, false, "", models.CLIActor); models.ErrorCode(err) != models.EINVALID {
			t.Errorf("out of service without reason: %v", err)
		}
		if err := db.SetGPUService(ctx, g.ID, false, "fan broken", models.CLIActor); err != nil {
			t.Fatal(err)
		}
		got, _ := db.GPU(ctx, g.ID)
		if got.InService || got.OutOfServiceReason != "fan broken" {
			t.Errorf("after out of service: %+v", got)
		}
		if err := db.RenameNode(ctx, node.ID, "bad name!", models.CLIActor); models.ErrorCode(err) != models.EINVALID {
			t.Errorf("bad rename: %v", err)
		}
		dup := &models.Node{Name: "gpu01"}
		gpus, _ := models.NewNodeGPUs("gpu01b", 1, "X", 1)
		if err := db.CreateNode(ctx, dup, gpus, models.CLIActor); models.ErrorCode(err) != models.ECONFLICT {
			t.Errorf("duplicate node: %v", err)
		}
	})
}

func TestBookingOverlapUnderConcurrency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, node := fixture(t, db, 2)
		now := time.Now()
		start := now.Add(time.Hour).Truncate(time.Minute)
		const n = 50
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Every request overlaps every other: they all cover start+30m..start+60m.
				s := start.Add(time.Duration(i%5) * time.Minute)
				_, errs[i] = db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[0].ID},
					StartsAt: s, EndsAt: s.Add(time.Hour)}, models.DefaultBookingLimits, now, models.CLIActor)
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch code := models.ErrorCode(err); code {
			case "":
				ok++
			case models.ECONFLICT:
				if len(models.AsError(err).Conflicts) == 0 {
					t.Errorf("conflict without the bookings in the way: %v", err)
				}
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}
		if ok != 1 {
			t.Errorf("successful bookings = %d, want exactly 1", ok)
		}
		all, _ := db.Bookings(ctx, models.BookingFilter{From: now, To: now.Add(48 * time.Hour)})
		if len(all) != 1 {
			t.Errorf("bookings in db = %d, want 1", len(all))
		}
	})
}

func TestBookingRules(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, node := fixture(t, db, 2)
		now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
		g0, g1 := node.GPUs[0].ID, node.GPUs[1].ID
		create := func(gpus []int64, s, e time.Time) (*models.Booking, error) {
			return db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: gpus, StartsAt: s, EndsAt: e, Note: "train"},
				models.DefaultBookingLimits, now, models.CLIActor)
		}
		b, err := create([]int64{g1, g0}, now.Add(time.Hour), now.Add(3*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(b.GPUIDs) != 2 || b.GPUIDs[0] != g0 || b.NodeName != "gpu01" || b.UserName != "Ada" || b.Note != "train" || b.Kind != models.KindStandard {
			t.Errorf("booking = %+v", b)
		}
		if _, err := create([]int64{g0}, now.Add(3*time.Hour), now.Add(4*time.Hour)); err != nil {
			t.Errorf("touching booking refused: %v", err)
		}
		_, err = create([]int64{g1}, now.Add(2*time.Hour), now.Add(5*time.Hour))
		e := models.AsError(err)
		if e.Code != models.ECONFLICT || len(e.Conflicts) != 1 || e.Conflicts[0].BookingID != b.ID || e.Conflicts[0].UserName != "Ada" || e.Conflicts[0].GPUIndex != 1 {
			t.Errorf("overlap: got %v %+v", err, e.Conflicts)
		}
		if _, err := create([]int64{g0, 999}, now.Add(10*time.Hour), now.Add(11*time.Hour)); models.ErrorCode(err) != models.EINVALID {
			t.Errorf("unknown gpu: got %v", err)
		}
		got, _ := db.Bookings(ctx, models.BookingFilter{GPUID: g1, From: now, To: now.Add(24 * time.Hour)})
		if len(got) != 1 || got[0].ID != b.ID {
			t.Errorf("by gpu: %+v", got)
		}
	})
}

func TestTimeZoneRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, node := fixture(t, db, 1)
		shanghai := time.FixedZone("+08:00", 8*3600)
		now := time.Now()
		start := now.In(shanghai).Add(2 * time.Hour).Truncate(time.Hour)
		b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[0].ID}, StartsAt: start, EndsAt: start.Add(time.Hour)},
			models.DefaultBookingLimits, now, models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := db.Booking(ctx, b.ID)
		if !got.StartsAt.Equal(start) || !got.EndsAt.Equal(start.Add(time.Hour)) {
			t.Errorf("round trip: got %v–%v, want %v", got.StartsAt, got.EndsAt, start)
		}
		// An overlapping request written in another offset is still seen as overlapping.
		berlin := time.FixedZone("+01:00", 3600)
		_, err = db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[0].ID},
			StartsAt: start.Add(30 * time.Minute).In(berlin), EndsAt: start.Add(90 * time.Minute).In(berlin)},
			models.DefaultBookingLimits, now, models.CLIActor)
		if models.ErrorCode(err) != models.ECONFLICT {
			t.Errorf("overlap in another zone: %v", err)
		}
	})
}

func TestDeletionsNeverOrphanBookings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, node := fixture(t, db, 1)
		now := time.Now()
		if _, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[0].ID}, StartsAt: now.Add(time.Hour), EndsAt: now.Add(2 * time.Hour)},
			models.DefaultBookingLimits, now, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"DELETE FROM users WHERE id = ?", "DELETE FROM gpus WHERE node_id = ?", "DELETE FROM nodes WHERE id = ?"} {
			id := u.ID
			if q != "DELETE FROM users WHERE id = ?" {
				id = node.ID
			}
			if err := db.Gorm.Exec(q, id).Error; err == nil {
				t.Errorf("%s succeeded; want foreign-key refusal", q)
			}
		}
	})
}

func TestTokens(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1)
		now := time.Now()
		tok, plain, err := db.CreateToken(ctx, u.ID, "laptop", now, models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		if tok.Hash == plain || tok.Hash != models.HashToken(plain) {
			t.Error("token must be stored hashed")
		}
		got, err := db.UserByToken(ctx, plain, now)
		if err != nil || got.ID != u.ID {
			t.Fatalf("by token: %v %v", got, err)
		}
		gone, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := db.UserByToken(gone, plain, now); models.ErrorCode(err) != models.EINTERNAL {
			t.Errorf("token read failing: %v, want an internal error, not a refused token", err)
		}
		list, _ := db.Tokens(ctx, u.ID)
		if len(list) != 1 || list[0].LastUsedAt == nil || list[0].Name != "laptop" {
			t.Errorf("tokens = %+v", list)
		}
		if err := db.RevokeToken(ctx, tok.ID, now, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if _, err := db.UserByToken(ctx, plain, now); models.ErrorCode(err) != models.EUNAUTHORIZED {
			t.Errorf("revoked token: %v", err)
		}
		if err := db.RevokeToken(ctx, tok.ID, now, models.CLIActor); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("revoke twice: %v", err)
		}
	})
}

func TestAudit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fixture(t, db, 1)
		all, err := db.AuditEvents(ctx, models.AuditFilter{})
		if err != nil || len(all) != 2 {
			t.Fatalf("events = %+v, %v; want user.create and node.create", all, err)
		}
		nodes, _ := db.AuditEvents(ctx, models.AuditFilter{Action: "node."})
		if len(nodes) != 1 || nodes[0].Action != models.AuditNodeCreate || nodes[0].ActorLabel != "cli" || nodes[0].TargetType != "node" {
			t.Errorf("node events = %+v", nodes)
		}
	})
}

func TestParseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url, dialect string
		wantErr      bool
	}{
		{"sqlite:./gpubook.db", store.SQLite, false},
		{"sqlite:///var/lib/gpubook.db", store.SQLite, false},
		{"postgres://u:p@h/db", store.Postgres, false},
		{"postgresql://h/db", store.Postgres, false},
		{"sqlite::memory:", "", true},
		{"sqlite:", "", true},
		{"mysql://h/db", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			d, _, err := store.ParseURL(tt.url)
			if d != tt.dialect || (err != nil) != tt.wantErr {
				t.Errorf("got %q, %v; want %q, err=%v", d, err, tt.dialect, tt.wantErr)
			}
		})
	}
	if _, _, err := store.ParseURL("mysql://user:secret@h/db"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("password leaked or no error: %v", err)
	}
}

func TestAllMemberships(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1)
		b := &models.User{Email: "bo@example.org", Name: "Bo"}
		db.CreateUser(ctx, b, models.CLIActor)
		vision, nlp := &models.Team{Name: "Vision"}, &models.Team{Name: "NLP"}
		db.CreateTeam(ctx, vision, models.CLIActor)
		db.CreateTeam(ctx, nlp, models.CLIActor)
		for _, m := range []models.Membership{{TeamID: vision.ID, UserID: b.ID, Role: models.RoleMember}, {TeamID: vision.ID, UserID: u.ID, Role: models.RoleLead},
			{TeamID: nlp.ID, UserID: b.ID, Role: models.RoleLead}} {
			if err := db.SetMembership(ctx, &m, models.CLIActor); err != nil {
				t.Fatal(err)
			}
		}
		all, err := db.AllMemberships(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range all {
			got = append(got, m.TeamName+"/"+m.UserName+"/"+m.Role)
		}
		want := []string{"NLP/Bo/lead", "Vision/Ada/lead", "Vision/Bo/member"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("got %v, want %v (by team, leads first)", got, want)
		}
	})
}

// TestOpenSQLiteMissingFolder: SQLite's own words for a file in a folder
// that does not exist are "out of memory (14)"; Open names the folder.
func TestOpenSQLiteMissingFolder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "no", "such")
	_, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "gpubook.db"))
	if err == nil || !strings.Contains(err.Error(), "the folder "+dir+" for the SQLite file does not exist") {
		t.Errorf("Open = %v, want the missing folder named", err)
	}
}
