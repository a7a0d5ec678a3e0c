package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/scripts/internal/sqlfloor"
)

// TestFloorServerDoesThePairsWork: the kept-alive pair's floor server
// answers the client peerbench times gpubook with, and does the pair's
// database work for real — each pair leaves a booking released in its
// first second and two audit events — and refuses a wrong token, so that
// the floor is not a server that skips the work. A second booking of a
// GPU it holds is refused (the overlap guard runs), and so is the release
// of a booking that does not exist. On both databases: on PostgreSQL each
// transaction is one statement of its own (sqlfloor).
func TestFloorServerDoesThePairsWork(t *testing.T) {
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) { testFloorServer(t, dialect) })
	}
}

func testFloorServer(t *testing.T, dialect string) {
	ctx := context.Background()
	url := storetest.MigratedURL(t, dialect)
	p := &portal{}
	if err := p.fill(ctx, url, 2); err != nil {
		t.Fatal(err)
	}
	db := storetest.OpenURL(t, url)
	gpus, err := db.GPUs(ctx)
	if err != nil || len(gpus) != 2 {
		t.Fatalf("GPUs = %v, %v", gpus, err)
	}
	srv := httptest.NewServer(sqlfloor.Handler(db, p.userID, p.nodeID, floorNote))
	defer srv.Close()
	pair := bookRelease(ctx, srv.Client(), srv.URL, p.token, gpus[1].ID)
	for range 3 {
		if err := pair(); err != nil {
			t.Fatal(err)
		}
	}
	var cancelled, audits int
	if err := db.Gorm.Raw(`SELECT count(*) FROM bookings b JOIN booking_gpus g ON g.booking_id = b.id
		WHERE b.note = ? AND b.status = 'cancelled' AND NOT g.blocking AND g.gpu_id = ?`, floorNote, gpus[1].ID).Scan(&cancelled).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Gorm.Raw(`SELECT count(*) FROM audit_events WHERE details = ? AND target_type = 'booking'
		AND target_id IN (SELECT CAST(id AS text) FROM bookings WHERE note = ?)`, floorNote, floorNote).Scan(&audits).Error; err != nil {
		t.Fatal(err)
	}
	if cancelled != 3 || audits != 6 {
		t.Errorf("after 3 pairs: %d bookings released in their first second, %d audit events; want 3 and 6", cancelled, audits)
	}
	if _, err := call(ctx, srv.Client(), http.MethodPost, srv.URL+"/api/v1/bookings", p.token, bookNowBody(gpus[0].ID), http.StatusCreated); err != nil {
		t.Fatal(err)
	}
	_, err = call(ctx, srv.Client(), http.MethodPost, srv.URL+"/api/v1/bookings", p.token, bookNowBody(gpus[0].ID), http.StatusCreated)
	if err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("booking a GPU the floor holds: %v, want the overlap guard's refusal", err)
	}
	_, err = call(ctx, srv.Client(), http.MethodPost, srv.URL+"/api/v1/bookings/999999/release", p.token, "", http.StatusOK)
	if err == nil {
		t.Error("releasing a booking that does not exist: no error")
	}
	_, err = call(ctx, srv.Client(), http.MethodPost, srv.URL+"/api/v1/bookings", "not-a-token", bookNowBody(gpus[1].ID), http.StatusCreated)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("booking with a wrong token: %v, want a 401", err)
	}
	_, err = call(ctx, srv.Client(), http.MethodPost, srv.URL+"/api/v1/bookings", p.token, `{"gpu_ids":`, http.StatusCreated)
	if err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("booking with a broken body: %v, want a 400", err)
	}
	_, err = call(ctx, srv.Client(), http.MethodPost, srv.URL+"/api/v1/bookings", p.token, `{"gpu_ids":[]}`, http.StatusCreated)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "gpu_ids and a range") {
		t.Errorf("booking without GPUs or range: %v, want a 400 that says what is missing", err)
	}
	db.Close() // the store gone: its answer is the server's fault, not the token's
	_, err = call(ctx, srv.Client(), http.MethodPost, srv.URL+"/api/v1/bookings", p.token, bookNowBody(gpus[1].ID), http.StatusCreated)
	if err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("booking on a closed store: %v, want a 500", err)
	}
}
