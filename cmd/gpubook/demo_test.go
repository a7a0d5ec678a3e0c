package main

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
)

func TestDemoPlan(t *testing.T) {
	t.Parallel()
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	tests := []struct {
		name string
		seed uint64
		now  time.Time
		loc  *time.Location
	}{
		{"morning in Shanghai", 1, time.Date(2026, 12, 2, 1, 17, 0, 0, time.UTC), shanghai},
		{"late evening UTC", 7, time.Date(2026, 3, 29, 23, 59, 0, 0, time.UTC), time.UTC},
		{"another seed", 42, time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC), shanghai},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := demoPlan(tt.seed, tt.now, tt.loc)
			if again := demoPlan(tt.seed, tt.now, tt.loc); !reflect.DeepEqual(d, again) {
				t.Error("same seed and now gave a different plan")
			}
			checkDemoPeople(t, d)
			checkDemoBookings(t, d, tt.now, tt.loc)
		})
	}
	a, b := demoPlan(1, tests[0].now, shanghai), demoPlan(2, tests[0].now, shanghai)
	if reflect.DeepEqual(a.Bookings, b.Bookings) {
		t.Error("different seeds gave the same bookings")
	}
}

func checkDemoPeople(t *testing.T, d demoData) {
	t.Helper()
	gpus := 0
	for _, n := range d.Nodes {
		gpus += n.GPUs
	}
	if len(d.Nodes) != 3 || gpus != 24 || len(d.OutOfService) != 1 || d.OutOfService[0].Reason == "" {
		t.Errorf("nodes = %d with %d GPUs, out of service %v; want 3, 24, one with a reason", len(d.Nodes), gpus, d.OutOfService)
	}
	if len(d.Users) != 12 || len(d.Teams) != 3 {
		t.Fatalf("users, teams = %d, %d; want 12, 3", len(d.Users), len(d.Teams))
	}
	leads, members, admins, zh, tz := map[string]int{}, map[string]int{}, 0, 0, 0
	for _, u := range d.Users {
		if err := (&models.User{Email: u.Email, Name: u.Name, Language: u.Language, TimeZone: u.TimeZone}).Validate(); err != nil {
			t.Errorf("user %s invalid: %v", u.Email, err)
		}
		members[u.Team]++
		if u.Lead {
			leads[u.Team]++
		}
		if u.Admin {
			admins++
			if u.Email != "admin@example.org" {
				t.Errorf("admin is %s", u.Email)
			}
		}
		if u.Language == "zh-CN" {
			zh++
		}
		if u.TimeZone != "" {
			tz++
		}
	}
	for _, team := range d.Teams {
		if leads[team] != 1 || members[team] < 3 {
			t.Errorf("team %s: %d leads, %d members; want 1 lead, ≥3 members", team, leads[team], members[team])
		}
	}
	if admins != 1 || zh < 3 || zh > 9 || tz < 3 {
		t.Errorf("admins %d, zh-CN users %d, with time zone %d; want 1, a mix, some", admins, zh, tz)
	}
}

func checkDemoBookings(t *testing.T, d demoData, now time.Time, loc *time.Location) {
	t.Helper()
	users := map[string]bool{}
	for _, u := range d.Users {
		users[u.Email] = true
	}
	local := now.In(loc)
	from := demoBookingsFrom(now, loc)
	to := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, 4)
	phases := map[models.BookingPhase]int{}
	for i, b := range d.Bookings {
		length := b.End.Sub(b.Start)
		if len(b.GPUs) < 1 || len(b.GPUs) > 4 || !users[b.UserEmail] || b.Note == "" ||
			length < 2*time.Hour || length > 48*time.Hour || b.Start.Before(from) || !b.Start.Before(to) {
			t.Errorf("booking %d = %+v out of bounds", i, b)
		}
		for _, g := range b.GPUs {
			if b.Node == "gpu-l40s-01" && g == 7 {
				t.Errorf("booking %d uses the out-of-service GPU", i)
			}
		}
		for j := i + 1; j < len(d.Bookings); j++ {
			o := d.Bookings[j]
			if o.Node == b.Node && sharesGPU(b.GPUs, o.GPUs) && models.Overlaps(b.Start, b.End, o.Start, o.End) {
				t.Errorf("bookings %d and %d overlap: %+v, %+v", i, j, b, o)
			}
		}
		phases[(&models.Booking{Status: models.StatusConfirmed, StartsAt: b.Start, EndsAt: b.End}).Phase(now)]++
	}
	if len(d.Bookings) <= 20 || phases[models.PhasePast] == 0 || phases[models.PhaseActive] == 0 || phases[models.PhaseUpcoming] == 0 {
		t.Errorf("%d bookings, phases %v; want > 20 with past, active and upcoming", len(d.Bookings), phases)
	}
}

func sharesGPU(a, b []int) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

func TestDemoCommand(t *testing.T) {
	t.Parallel()
	eachMigrated(t, func(t *testing.T, url string) {
		// One day of agent records, not seven: the same path at a seventh of the time.
		out := mustGpubook(t, url, "demo", "--usage-days", "1")
		if !strings.Contains(out, "added 12 users, 3 teams, 3 nodes, 31 GPUs and ") || !strings.Contains(out, "added 43200 GPU-minutes of agent records (the last 1 day(s))") || !strings.Contains(out, "/login and pick any user; admin@example.org is an admin") {
			t.Errorf("demo printed:\n%s", out)
		}
		db := storetest.OpenURL(t, url)
		checkDemoDatabase(t, db, 12)
		if _, _, err := gpubook(t, url, "demo"); err == nil || !strings.Contains(err.Error(), "already has 12 user(s)") || !strings.Contains(err.Error(), "--force") {
			t.Errorf("demo on a used database: %v", err)
		}
	})
}

func checkDemoDatabase(t *testing.T, db *store.DB, wantUsers int64) {
	t.Helper()
	if n, _ := db.CountUsers(ctx); n != wantUsers {
		t.Errorf("users = %d, want %d", n, wantUsers)
	}
	gpus, err := db.GPUs(ctx)
	if err != nil || len(gpus) != 24+7 {
		t.Fatalf("GPUs = %d, %v; want 24 and 7 MIG instances", len(gpus), err)
	}
	out, slices := 0, 0
	for _, g := range gpus {
		if !g.InService {
			out++
		}
		if g.IsMIGInstance() && g.MIGProfile == "1g.10gb" && g.NodeName == "gpu-a100-01" && g.UUID == wire.SimulatedMIGUUID(g.NodeName, 7, g.MIGGI) {
			slices++
		}
	}
	if slices != 7 {
		t.Errorf("gpu-a100-01 has %d 1g.10gb slices with the simulation's UUIDs, want 7", slices)
	}
	if nodes, _ := db.Nodes(ctx); len(nodes) != 3 || out != 1 {
		t.Errorf("nodes = %d, out of service = %d; want 3, 1", len(nodes), out)
	}
	teams, _ := db.Teams(ctx)
	if len(teams) != 3 {
		t.Errorf("teams = %d, want 3", len(teams))
	}
	for _, team := range teams {
		ms, _ := db.Members(ctx, team.ID)
		leads := 0
		for _, m := range ms {
			if m.Role == models.RoleLead {
				leads++
			}
		}
		if len(ms) < 3 || leads != 1 {
			t.Errorf("team %s: %d members, %d leads; want ≥3 with one lead", team.Name, len(ms), leads)
		}
	}
	now := time.Now()
	bookings, err := db.Bookings(ctx, models.BookingFilter{From: now.AddDate(0, 0, -8), To: now.AddDate(0, 0, 8)})
	if err != nil {
		t.Fatal(err)
	}
	active := 0
	for _, b := range bookings {
		if b.Phase(now) == models.PhaseActive {
			active++
		}
	}
	if len(bookings) <= 20 || active == 0 {
		t.Errorf("bookings = %d, active now = %d; want > 20 and ≥ 1", len(bookings), active)
	}
}

// --force adds the demo beside existing data and skips what already exists.
func TestDemoForce(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.SQLite)
	mustGpubook(t, url, "user", "add", "--email", "ada@example.org", "--name", "Ada")
	mustGpubook(t, url, "user", "add", "--email", "wang.lei@example.org", "--name", "王磊 (existing)")
	if out, _, err := gpubook(t, url, "demo"); err == nil || out != "" {
		t.Fatalf("demo without --force: out %q, err %v", out, err)
	}
	if n := countUsers(t, url); n != 2 {
		t.Fatalf("refused demo wrote users: %d", n)
	}
	out := mustGpubook(t, url, "demo", "--force", "--usage-days", "0")
	if !strings.Contains(out, "added 11 users, 3 teams, 3 nodes") || !strings.Contains(out, "skipped") {
		t.Errorf("demo --force printed:\n%s", out)
	}
	db := storetest.OpenURL(t, url)
	checkDemoDatabase(t, db, 13)
	if u, err := db.UserByEmail(ctx, "wang.lei@example.org"); err != nil || u.Name != "王磊 (existing)" {
		t.Errorf("existing user changed: %+v, %v", u, err)
	}
	// A second run finds everything there and still succeeds.
	if out := mustGpubook(t, url, "demo", "--force", "--usage-days", "0"); !strings.Contains(out, "added 0 users, 0 teams, 0 nodes, 0 GPUs") {
		t.Errorf("second demo --force:\n%s", out)
	}
}

// --usage-days outside 0..7 is refused before the database is even opened.
func TestDemoUsageDaysBounds(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.SQLite)
	path := strings.TrimPrefix(url, "sqlite:")
	for _, days := range []string{"-1", "8"} {
		_, _, err := gpubook(t, url, "demo", "--usage-days", days)
		if err == nil || !strings.Contains(err.Error(), "--usage-days must be between 0 and 7") {
			t.Errorf("--usage-days %s: %v", days, err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused demo touched the database: %v", err)
	}
}
