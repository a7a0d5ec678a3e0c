package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/scripts/internal/sqlfloor"
)

// The HTTP floor is the SQL floor served over HTTP: a net/http server in
// this process whose handler looks the bearer token up, reads the JSON
// body and does the floor's database work (sqlfloor.Handler: on
// PostgreSQL the token's statement and one statement for the booking's
// three inserts; the release the same), driven by the same client code
// as gpubook. "bound" adds a bare request's time to the floor's as if the
// two did not meet; here they do, in one Go process, as in any server
// that answers over HTTP from a database. It reads no policy and locks
// no row, so gpubook, which must, costs more than it. Its bookings lie
// two years on (floorStart), as the SQL floor's, and are deleted after
// each level.

const httpFloorNote = "http floor"

// httpFloor is the floor's server on 127.0.0.1, booking as the load's
// first user on its node.
type httpFloor struct {
	url  string
	srv  *http.Server
	note string // the note of its bookings, which each level deletes
}

func newHTTPFloor(db *store.DB, t *target) (*httpFloor, error) {
	return serveFloor(sqlfloor.Handler(db, t.users[0], t.nodeID, httpFloorNote), httpFloorNote)
}

// serveFloor serves h on a free port of 127.0.0.1; its bookings carry note.
func serveFloor(h http.Handler, note string) (*httpFloor, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return &httpFloor{url: "http://" + ln.Addr().String(), srv: srv, note: note}, nil
}

func (f *httpFloor) close() { f.srv.Close() }

// bookings books ahead on the floor's server at clients clients for d,
// booking k taking cell k of the (GPU, hour) grid from floorStart, then
// deletes what it booked (the floors run one after another, so their
// cells never meet).
func (f *httpFloor) bookings(ctx context.Context, db *store.DB, t *target, clients int, d time.Duration) (result, error) {
	hc := loadClient(clients)
	start := t.floorStart()
	res := drive(clients, 0, d, func(k int) error {
		g := t.gpuIDs[k%len(t.gpuIDs)]
		s := start.Add(time.Duration(k/len(t.gpuIDs)) * time.Hour)
		body := fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"%s","note":"load %d"}`, g, s.Format(time.RFC3339),
			s.Add(time.Hour).Format(time.RFC3339), k)
		return post(ctx, hc, f.url, t.tokens[k%len(t.tokens)], body)
	})
	return res, deleteFloorRows(ctx, db, f.note)
}

// pairs books now and releases on the floor's server, client c on GPU c
// as gpubook's pairs do, then deletes what it booked.
func (f *httpFloor) pairs(ctx context.Context, db *store.DB, t *target, clients int, d time.Duration) (result, error) {
	hc := loadClient(clients)
	res := driveEach(clients, d, func(c int) error {
		return bookNowRelease(ctx, hc, f.url, t.tokens[c%len(t.tokens)], t.gpuIDs[c])
	})
	return res, deleteFloorRows(ctx, db, f.note)
}

// The checked HTTP floor (PostgreSQL) is the checked floor served over
// HTTP: the token's look-up, then gpubook's own statements in two round
// trips — BEGIN with the policy read that locks the user's and the GPUs'
// rows, the insert with COMMIT (checked_sql.go, each round trip one pgx
// pipeline, where gpubook waits for each statement) — as the token's
// user, with the policy's rows read and dropped: no policy is judged, no
// gpubook code runs. What gpubook adds above it is its own web and Go
// cost.

const checkedHTTPNote = "checked http floor"

// newCheckedHTTPFloor starts the checked HTTP floor's server on db.
func newCheckedHTTPFloor(db *store.DB, t *target) (*httpFloor, error) {
	return serveFloor(checkedHandler(db, t), checkedHTTPNote)
}

// checkedHandler answers POST /api/v1/bookings with 201 {"id":…} after the
// checked floor's statements for the body's GPUs and range, as the user of
// the bearer token (one of t's): 401 for another token.
func checkedHandler(db *store.DB, t *target) http.Handler {
	users := map[string]int64{}
	for i, tok := range t.tokens {
		users[models.HashToken(tok)] = t.users[i]
	}
	floor := sqlfloor.New(db)
	policy, insert := checkedPolicySQL, checkedInsertSQL
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/bookings", func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		hash := models.HashToken(token)
		uid, ok := users[hash]
		if !ok {
			http.Error(w, "token: not one of the load's", http.StatusUnauthorized)
			return
		}
		if err := floor.Token(ctx, hash); err != nil {
			sqlfloor.TokenFailed(w, err)
			return
		}
		req, err := sqlfloor.DecodeBooking(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		from, to, now := req.StartsAt, req.EndsAt, time.Now().UTC()
		var id int64
		err = onPgx(ctx, db, func(c *pgx.Conn) error {
			first := &pgx.Batch{}
			first.Queue("BEGIN")
			first.Queue(policy, uid, uid, uid, uid, req.GPUIDs)
			second := &pgx.Batch{}
			second.Queue(insert, uid, t.nodeID, from, to, checkedHTTPNote, now, now, // the booking
				from, to, req.GPUIDs, // its GPU rows
				now, uid, "load", models.AuditBookingCreate, "booking", checkedHTTPNote, "127.0.0.1", // its audit event
				req.GPUIDs, from, from) // the usage probe, over an empty range
			second.Queue("COMMIT")
			err := runBatch(ctx, c, first, nil)
			if err == nil {
				err = runBatch(ctx, c, second, func(rows pgx.Rows) error {
					var stored bool
					return rows.Scan(&id, &stored)
				})
			}
			return err
		})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":%d}`, id)
	})
	return mux
}

// onPgx runs fn on the pgx connection under one of db's pooled
// connections, and rolls back a transaction fn left open or failed, so
// that the pool never takes back a connection inside one.
func onPgx(ctx context.Context, db *store.DB, fn func(*pgx.Conn) error) error {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		err := fn(c)
		if c.PgConn().TxStatus() != 'I' && !c.IsClosed() {
			if _, rerr := c.Exec(ctx, "ROLLBACK"); rerr != nil {
				err = errors.Join(err, fmt.Errorf("rollback: %w", rerr))
			}
		}
		return err
	})
}

// runBatch sends b in one round trip and reads every statement's answer,
// each row of a statement that has rows with scan (nil: dropped).
func runBatch(ctx context.Context, c *pgx.Conn, b *pgx.Batch, scan func(pgx.Rows) error) error {
	br := c.SendBatch(ctx, b)
	var err error
	for range b.Len() {
		rows, qerr := br.Query()
		for qerr == nil && rows.Next() {
			if scan != nil {
				qerr = scan(rows)
			}
		}
		if rows != nil {
			rows.Close()
			if qerr == nil {
				qerr = rows.Err()
			}
		}
		err = errors.Join(err, qerr)
	}
	return errors.Join(err, br.Close())
}
