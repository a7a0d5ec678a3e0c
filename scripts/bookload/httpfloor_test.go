package main

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

// TestHTTPFloorsBookForReal: both HTTP floors answer the load's client
// and do their database work for real, so that neither is a server that
// skips it. Each booking the plain floor answers leaves a booking, its
// blocking GPU row and its audit event; each the checked floor answers
// leaves the same for the token's own user, after gpubook's locking policy
// read. Both refuse a token no user has (401) and a second booking of a
// cell already booked (the overlap guard runs: 500), and their cleanup
// leaves nothing behind. The plain floor on both databases, the checked
// one on PostgreSQL, where it exists.
func TestHTTPFloorsBookForReal(t *testing.T) {
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, dialect)
			tg, err := newTarget(ctx, db, 4)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.close()
			plain, err := newHTTPFloor(db, tg)
			if err != nil {
				t.Fatal(err)
			}
			defer plain.close()
			floors := []*httpFloor{plain}
			if dialect == store.Postgres {
				checked, err := newCheckedHTTPFloor(db, tg)
				if err != nil {
					t.Fatal(err)
				}
				defer checked.close()
				floors = append(floors, checked)
			}
			for _, f := range floors {
				t.Run(f.note, func(t *testing.T) { testHTTPFloor(t, db, tg, f) })
			}
		})
	}
}

func testHTTPFloor(t *testing.T, db *store.DB, tg *target, f *httpFloor) {
	ctx := context.Background()
	hc := loadClient(1)
	bodyFor := func(k int) string { // hour k from the floors' start, on the first GPU
		s := tg.floorStart().Add(time.Duration(k) * time.Hour)
		return fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"%s"}`, tg.gpuIDs[0], s.Format(time.RFC3339),
			s.Add(time.Hour).Format(time.RFC3339))
	}
	for k := range 3 {
		if err := post(ctx, hc, f.url, tg.tokens[k+1], bodyFor(k)); err != nil {
			t.Fatalf("booking %d: %v", k, err)
		}
	}
	count := func(sql string, args ...any) int {
		t.Helper()
		var n int
		if err := db.Gorm.Raw(sql, args...).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	booked := count(`SELECT count(*) FROM bookings b JOIN booking_gpus g ON g.booking_id = b.id
		WHERE b.note = ? AND b.status = 'confirmed' AND g.blocking AND g.gpu_id = ? AND g.starts_at = b.starts_at`, f.note, tg.gpuIDs[0])
	audits := count(`SELECT count(*) FROM audit_events a JOIN bookings b ON a.target_id = CAST(b.id AS text)
		WHERE a.details = ? AND a.action = ? AND a.actor_id = b.user_id AND b.note = ?`, f.note, models.AuditBookingCreate, f.note)
	if booked != 3 || audits != 3 {
		t.Errorf("after 3 bookings: %d booked with a blocking GPU row, %d audit events; want 3 and 3", booked, audits)
	}
	if f.note == checkedHTTPNote {
		if own := count(`SELECT count(*) FROM bookings WHERE note = ? AND user_id IN (?, ?, ?)`, f.note,
			tg.users[1], tg.users[2], tg.users[3]); own != 3 {
			t.Errorf("%d of 3 bookings are their token's user's", own)
		}
	}
	if err := post(ctx, hc, f.url, tg.tokens[0], bodyFor(1)); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("booking a cell already booked: %v, want the overlap guard's refusal (500)", err)
	}
	if err := post(ctx, hc, f.url, "not-a-token", bodyFor(5)); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("booking with a wrong token: %v, want a 401", err)
	}
	if err := deleteFloorRows(ctx, db, f.note); err != nil {
		t.Fatal(err)
	}
	if left := count(`SELECT count(*) FROM bookings WHERE note = ?`, f.note) + count(`SELECT count(*) FROM audit_events WHERE details = ?`, f.note); left != 0 {
		t.Errorf("after the cleanup: %d rows left", left)
	}
}
