package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/scripts/internal/sqlfloor"
)

// The floors: what a row's operation costs with gpubook taken out of it.
// The kept-alive pair's floor is its database work alone (sqlfloor: the
// same statements on the store's pool, no HTTP, no gpubook code), on the
// portal's own database, on another GPU of its node. The shell pair's
// floor is the same two curl processes against a server that answers at
// once without doing anything (startBareAPI). A floor above canhazgpu's
// time says the target cannot be met by any implementation on that
// database, or with curl, on this machine.

// sqlFloor runs the book-now + release floor on the portal's database.
type sqlFloor struct {
	db   *store.DB
	conn sqlfloor.Conn
	p    sqlfloor.Pair
}

func newSQLFloor(ctx context.Context, p *portal) (*sqlFloor, error) {
	db, err := store.Open(ctx, p.dbURL)
	if err != nil {
		return nil, err
	}
	gpus, err := db.GPUs(ctx)
	if err != nil || len(gpus) < 2 {
		db.Close()
		return nil, fmt.Errorf("sql floor: a second GPU: %v", err)
	}
	return &sqlFloor{db: db, conn: sqlfloor.New(db), p: sqlfloor.Pair{TokenHash: models.HashToken(p.token), UserID: p.userID,
		NodeID: p.nodeID, GPU: gpus[1].ID, Note: "peerbench floor"}}, nil
}

func (f *sqlFloor) pair(ctx context.Context) func() error {
	return func() error { return f.conn.BookNowAndRelease(ctx, f.p) }
}

func (f *sqlFloor) close() { f.db.Close() }

// startBareAPI answers a booking with {"id":1} and a release with {}, and
// nothing else: what curl costs against a server that costs nothing.
func startBareAPI() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/bookings", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":1}`))
	})
	mux.HandleFunc("POST /api/v1/bookings/{id}/release", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	})
	return httptest.NewServer(mux)
}
