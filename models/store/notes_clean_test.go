package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestMigrationCleansStoredNotes: notes imported before the text rule held
// (ESC, BEL, U+0085, DEL, a lone CR) are cleaned by migration 00026 as the
// rule cleans a new note: line feeds and tabs stay, CR LF is a line feed.
func TestMigrationCleansStoredNotes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := &models.User{Email: "ann@example.org", Name: "Ann"}
		if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		gpus, _ := models.NewNodeGPUs("n1", 1, "NVIDIA A100-SXM4-80GB", 81920)
		node := &models.Node{Name: "n1"}
		if err := db.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		n, err := db.Node(ctx, node.ID)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Date(2031, 3, 10, 10, 0, 0, 0, time.UTC)
		b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{n.GPUs[0].ID}, StartsAt: start, EndsAt: start.Add(time.Hour)},
			models.DefaultBookingLimits, start.Add(-time.Hour), models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		for {
			st, err := db.MigrationStatus(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(st, func(m store.MigrationState) bool { return m.Version == 26 && m.Applied }) {
				break
			}
			if _, err := db.MigrateDownOne(ctx); err != nil {
				t.Fatal(err)
			}
		}
		raw := "run\x1b]0;Logged in as Admin\x07 ok\u0085next\r\nline\ttab\x7fend\rx"
		if _, err := db.SQL.ExecContext(ctx, "UPDATE bookings SET note = "+placeholder(db, 1)+" WHERE id = "+placeholder(db, 2), raw, b.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.MigrateUp(ctx); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.SQL.QueryRowContext(ctx, "SELECT note FROM bookings WHERE id = "+placeholder(db, 1), b.ID).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := "run]0;Logged in as Admin oknext\nline\ttabendx"; got != want {
			t.Errorf("note after 00026 = %q, want %q", got, want)
		}
		if clean, msg := models.DefaultBookingLimits.NoteText().Clean(got); msg != nil || clean != got {
			t.Errorf("the cleaned note %q does not pass the note rule (%v)", got, msg)
		}
	})
}

// placeholder is the dialect's i-th bind parameter.
func placeholder(db *store.DB, i int) string {
	if db.Dialect == store.Postgres {
		return "$" + string(rune('0'+i))
	}
	return "?"
}
