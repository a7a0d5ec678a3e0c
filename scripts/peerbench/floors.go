package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/scripts/internal/sqlfloor"
)

// The floors: what a row's operation costs with gpubook taken out of it.
// The kept-alive pair's floor is the same two HTTP calls answered by a
// server in a process of its own that does nothing but their database
// work (sqlfloor.Handler: Go's net/http, the bearer token's look-up, the JSON
// body read, and sqlfloor's writes — gpubook's, on the store's pool, on
// PostgreSQL each transaction in one statement — no gpubook code), on the
// portal's own database, on another GPU
// of its node; the database work alone, in the client's process (sqlFloor),
// is printed under the table. The shell pair's floor is the same two curl
// processes against a server that answers at once without doing anything
// (startBareAPI). A floor above canhazgpu's time says the target cannot be
// met by any implementation that answers over HTTP on that database, or
// with curl, on this machine.

// floorNote is the note of the floors' bookings and their audit events.
const floorNote = "peerbench floor"

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
		NodeID: p.nodeID, GPU: gpus[1].ID, Note: floorNote}}, nil
}

func (f *sqlFloor) pair(ctx context.Context) func() error {
	return func() error { return f.conn.BookNowAndRelease(ctx, f.p) }
}

func (f *sqlFloor) close() { f.db.Close() }

// startHTTPFloor starts the floor server (`peerbench floor-serve`, in a
// child process: floorServe) on p's database for p's user and node, stopped
// with the portal, and returns its URL; it books the GPU a call names.
func startHTTPFloor(ctx context.Context, p *portal) (string, error) {
	addr, err := child(ctx, &p.stop, "floor-serve", p.dbURL, strconv.FormatInt(p.userID, 10), strconv.FormatInt(p.nodeID, 10))
	if err != nil {
		return "", err
	}
	return "http://" + addr, nil
}

// floorServe is the floor server's process: args are the database's URL,
// the user's and the node's ids. It answers POST /api/v1/bookings (the
// token's user, then sqlfloor's booking of the body's first GPU over its
// range) with 201 {"id":…} and POST /api/v1/bookings/{id}/release (the
// token's user, then sqlfloor's release) with 200 {}.
func floorServe(ctx context.Context, args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("floor-serve DB-URL USER-ID NODE-ID")
	}
	db, err := store.Open(ctx, args[0])
	if err != nil {
		return err
	}
	defer db.Close()
	user, err1 := strconv.ParseInt(args[1], 10, 64)
	node, err2 := strconv.ParseInt(args[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	return listenAndServe(ctx, sqlfloor.Handler(db, user, node, floorNote))
}

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
