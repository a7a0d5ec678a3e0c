package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// importFixture: two nodes of 8 GPUs, three users, one existing booking on
// n0 GPU 0 at 2026-03-02 10:00–11:00 UTC.
func importFixture(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	for _, e := range []string{"a@example.org", "b@example.org", "c@example.org"} {
		if err := db.CreateUser(ctx, &models.User{Email: e, Name: e}, models.CLIActor); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"n0", "n1"} {
		gpus, _ := models.NewNodeGPUs(n, 8, "A100", 81920)
		if err := db.CreateNode(ctx, &models.Node{Name: n}, gpus, models.CLIActor); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	exec := func(q string, args ...any) {
		if err := db.Gorm.Exec(q, args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO bookings (user_id, node_id, starts_at, ends_at, created_at, updated_at) VALUES ((SELECT MIN(id) FROM users), (SELECT id FROM nodes WHERE name = 'n0'), ?, ?, ?, ?)`,
		at, at.Add(time.Hour), at, at)
	exec(`INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at) VALUES ((SELECT MIN(id) FROM bookings),
		(SELECT g.id FROM gpus g JOIN nodes n ON n.id = g.node_id WHERE n.name = 'n0' AND g.idx = 0), ?, ?)`, at, at.Add(time.Hour))
}

// importFile is 10,000 bookings of an hour, a GPU each, from 2026-03-01
// (partly past, partly future of the import's clock), with bad rows in it:
// the map says which line holds which reason.
func importFile() (string, map[int]string) {
	var b strings.Builder
	b.WriteString("email,node,gpus,start,end,note\n")
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	bad := map[int]string{}
	line := 1
	for i := 0; i < 10000; i++ {
		line++
		start := base.Add(time.Duration(i/16) * time.Hour)
		row := fmt.Sprintf("%s,n%d,%d,%s,%s,from the sheet\n", []string{"a", "b", "c"}[i%3]+"@example.org", i%2, (i/2)%8,
			start.Format(time.RFC3339), start.Add(time.Hour).Format("2006-01-02 15:04"))
		switch i {
		case 100:
			row, bad[line] = "nobody@example.org,n0,0,2026-03-01 06:00,2026-03-01 07:00,\n", "import.unknown_user"
		case 200:
			row, bad[line] = "a@example.org,n0,0,yesterday,2026-03-01 07:00,\n", "import.bad_time"
		case 300:
			row, bad[line] = "a@example.org,n0,0;9,2026-03-01 06:00,2026-03-01 07:00,\n", "import.unknown_gpu"
		case 400:
			row, bad[line] = "a@example.org,n0,0,2026-03-01 02:30,2026-03-01 03:30,\n", "import.overlap_file"
		case 500:
			row, bad[line] = "a@example.org,n9,0,2026-03-01 06:00,2026-03-01 07:00,\n", "import.unknown_node"
		case 600:
			row, bad[line] = "a@example.org,n0,1,2026-03-01 07:00,2026-03-01 06:00,\n", "import.end_before_start"
		case 700:
			row, bad[line] = "a@example.org,n0\n", "import.bad_columns"
		}
		b.WriteString(row)
	}
	// The rows for n0 GPU 0 on 2026-03-02 10:00 UTC clash with the booking.
	bad[2+2*8*34] = "import.overlap_existing"
	return b.String(), bad
}

func countRows(t *testing.T, db *store.DB, table string) (n int64) {
	t.Helper()
	if err := db.Gorm.Table(table).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestImportBookings: a 10,000-row file with bad rows names each bad row;
// all or nothing writes nothing; --skip-bad writes exactly the good rows,
// with one audit event, on both databases.
func TestImportBookings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		importFixture(t, db)
		file, bad := importFile()
		rows, parseBad, err := models.ParseImportCSV(strings.NewReader(file), time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)
		res, err := db.ImportBookings(ctx, rows, parseBad, false, now, models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int]string{}
		for _, r := range res.Rejects {
			got[r.Line] = r.Reason.Key
		}
		if fmt.Sprint(got) != fmt.Sprint(bad) {
			t.Errorf("rejects\n got %v\nwant %v", got, bad)
		}
		if res.Written || res.Imported != 0 || res.Rows != 10000 || countRows(t, db, "bookings") != 1 || countRows(t, db, "booking_gpus") != 1 {
			t.Fatalf("all or nothing wrote something: %+v", res)
		}
		res, err = db.ImportBookings(ctx, rows, parseBad, true, now, models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		good := 10000 - len(bad)
		if !res.Written || res.Imported != good || len(res.Rejects) != len(bad) {
			t.Fatalf("skip bad: %+v", res)
		}
		if n := countRows(t, db, "bookings"); n != int64(1+good) {
			t.Errorf("%d bookings, want %d", n, 1+good)
		}
		if n := countRows(t, db, "booking_gpus"); n != int64(1+good) {
			t.Errorf("%d booking GPUs, want %d", n, 1+good)
		}
		ev, err := db.AuditEvents(ctx, models.AuditFilter{Action: models.AuditBookingImport})
		if err != nil || len(ev) != 1 || !strings.Contains(ev[0].Details, fmt.Sprintf(`"imported":%d`, good)) ||
			!strings.Contains(ev[0].Details, fmt.Sprintf(`"rejected":%d`, len(bad))) {
			t.Errorf("audit: %+v %v", ev, err)
		}
		again, err := db.ImportBookings(ctx, rows[:5], nil, false, now, models.CLIActor)
		if err != nil || again.Written || len(again.Rejects) != 5 || again.Rejects[0].Reason.Key != "import.overlap_existing" {
			t.Errorf("importing the same rows twice: %+v %v", again, err)
		}
	})
}
