package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestCheckedFloorBooksAsGpubookDoes: the checked floor's script, made of
// gpubook's own statements, books for real when pgbench runs it — every
// transaction pgbench counts leaves one booking of the client's own GPU
// for the client's own user, its GPU row (blocking, same hour) and its
// audit event — and its cleanup leaves nothing behind. A floor that
// skipped the work would fail here.
func TestCheckedFloorBooksAsGpubookDoes(t *testing.T) {
	if _, err := exec.LookPath("pgbench"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("pgbench is required under CI=true (it comes with PostgreSQL's server package)")
		}
		t.Skip("no pgbench")
	}
	ctx := context.Background()
	url := storetest.MigratedURL(t, store.Postgres)
	db := storetest.OpenURL(t, url)
	tg, err := newTarget(ctx, db, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.close()
	const clients = 2
	res, err := runPgbench(ctx, url, checkedScript(tg), clients, time.Second, "-M", "prepared", "-D", "k=0")
	if err != nil {
		t.Fatal(err)
	}
	if res.count == 0 {
		t.Fatal("pgbench counted no transaction")
	}
	var bookings, gpuRows, audits, strangers int
	q := func(dst *int, sql string, args ...any) {
		t.Helper()
		if err := db.SQL.QueryRowContext(ctx, sql, args...).Scan(dst); err != nil {
			t.Fatal(err)
		}
	}
	q(&bookings, `SELECT count(*) FROM bookings WHERE note = $1 AND status = 'confirmed' AND ends_at = starts_at + interval '1 hour'`, checkedNote)
	q(&gpuRows, `SELECT count(*) FROM booking_gpus g JOIN bookings b ON b.id = g.booking_id
		WHERE b.note = $1 AND g.blocking AND g.starts_at = b.starts_at AND g.ends_at = b.ends_at`, checkedNote)
	q(&audits, `SELECT count(*) FROM audit_events a JOIN bookings b ON a.target_id = CAST(b.id AS text)
		WHERE a.details = $1 AND a.action = $2 AND a.actor_id = b.user_id AND b.note = $1`, checkedNote, models.AuditBookingCreate)
	// Client c books GPU c as user c: nothing else.
	q(&strangers, `SELECT count(*) FROM bookings b JOIN booking_gpus g ON g.booking_id = b.id
		WHERE b.note = $1 AND NOT (g.gpu_id - $2 = b.user_id - $3 AND g.gpu_id - $2 BETWEEN 0 AND $4)`,
		checkedNote, tg.gpuIDs[0], tg.users[0], clients-1)
	if bookings != res.count || gpuRows != res.count || audits != res.count || strangers != 0 {
		t.Errorf("after %d transactions: %d bookings, %d GPU rows, %d audit events, %d on another client's GPU or user",
			res.count, bookings, gpuRows, audits, strangers)
	}
	if err := deleteFloorRows(ctx, db, checkedNote); err != nil {
		t.Fatal(err)
	}
	q(&bookings, `SELECT count(*) FROM bookings WHERE note = $1`, checkedNote)
	q(&audits, `SELECT count(*) FROM audit_events WHERE details = $1`, checkedNote)
	if bookings != 0 || audits != 0 {
		t.Errorf("after the cleanup: %d bookings, %d audit events left", bookings, audits)
	}
}

// TestBindParams: every $n becomes its argument ($10 is not $1 then 0),
// and a statement whose parameters do not match the arguments given is
// refused, so that the checked floor cannot silently replay a statement
// gpubook no longer sends.
func TestBindParams(t *testing.T) {
	if got := bindParams("SELECT $1, $10, $2, $1", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"); got != "SELECT a, j, b, a" {
		t.Errorf("bindParams = %q", got)
	}
	for name, args := range map[string][]string{"too few": {"a"}, "too many": {"a", "b", "c"}} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "checked floor") {
					t.Errorf("recovered %v, want a checked floor panic", r)
				}
			}()
			bindParams("SELECT $1, $2", args...)
		})
	}
}
