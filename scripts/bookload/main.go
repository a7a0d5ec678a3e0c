// Command bookload measures booking creation through gpubook's HTTP API on a
// fresh SQLite or PostgreSQL database, at several client counts, and beside
// it the same database's raw rate for one transaction inserting one row
// (pgbench with a one-line script for PostgreSQL, a Go loop for SQLite), so
// that the two figures come from the same machine in the same run.
//
// Two more figures bound what any implementation could reach there: a bare
// net/http server that decodes the body and answers 201 with no middleware
// and no database (ceiling.go), and the SQL floor, the inserts no correct
// booking can skip, driven with no HTTP and no gpubook code (floor.go).
// A booking costs at least both, so "bound" is 1/(1/bare + 1/floor). On
// PostgreSQL a third, the checked floor (checked.go), replays gpubook's own
// statements, the policy read and its lock included, with pgbench. The
// HTTP floor (httpfloor.go) serves the SQL floor's work over HTTP, where
// the bound only adds the two up.
//
//	go run ./scripts/bookload -db sqlite,postgres -clients 1,8,64 -n 2000
//
// It only ever talks to 127.0.0.1: the server it starts and the local
// PostgreSQL, where it creates a scratch database and drops it afterwards.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/alexedwards/scs/postgresstore"
	"github.com/alexedwards/scs/sqlite3store"
	"github.com/alexedwards/scs/v2"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/web"
)

type options struct {
	dialects []string
	clients  []int
	n        int
	maxTime  time.Duration
	pgAdmin  string
	gpus     int
	quota    bool
	now      bool
}

func main() {
	if err := run(context.Background(), os.Args, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bookload:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bookload", flag.ContinueOnError)
	dbs := fs.String("db", "sqlite,postgres", "databases to measure")
	clients := fs.String("clients", "1,8,64", "concurrent client counts")
	n := fs.Int("n", 2000, "bookings per client count (at most 20000)")
	maxTime := fs.Duration("max-time", 30*time.Second, "stop a level after this long")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `file`")
	quota := fs.Bool("quota", false, "set a global weekly GPU-hours limit no request reaches, so that every booking also reads what its user holds")
	now := fs.Bool("now", false, "measure book now + release pairs (each client on a GPU of its own, at most 64 clients) instead of bookings ahead")
	pgAdmin := fs.String("pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server (127.0.0.1 only)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	o := options{dialects: strings.Split(*dbs, ","), n: min(max(*n, 1), 20000), maxTime: *maxTime, pgAdmin: *pgAdmin, gpus: 64, quota: *quota, now: *now}
	for _, s := range strings.Split(*clients, ",") {
		c, err := strconv.Atoi(s)
		if err != nil || c < 1 || c > 256 {
			return fmt.Errorf("bad client count %q", s)
		}
		o.clients = append(o.clients, c)
	}
	if err := loopbackOnly(o.pgAdmin); err != nil {
		return err
	}
	if o.now {
		fmt.Fprintf(out, "| database | clients | gpubook pairs/s | p50 ms | p99 ms | errors | bare HTTP pairs/s | SQL floor pairs/s | bound/s | gpubook/bound | HTTP floor pairs/s | gpubook/HTTP floor |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	} else {
		fmt.Fprintf(out, "| database | clients | gpubook bookings/s | p50 ms | p99 ms | errors | raw 1-row tx/s | raw p50 ms | ratio | bare HTTP req/s | SQL floor/s | bound/s | bound/raw | checked floor/s | checked bound/s | gpubook/checked bound | HTTP floor/s | gpubook/HTTP floor | checked HTTP floor/s | gpubook/checked HTTP floor |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	}
	for _, d := range o.dialects {
		if err := measureDialect(ctx, d, o, out); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	return nil
}

// measureDialect runs every client count on one fresh database of dialect d.
func measureDialect(ctx context.Context, d string, o options, out io.Writer) error {
	dbURL, cleanup, err := scratchDB(ctx, d, o.pgAdmin)
	if err != nil {
		return err
	}
	defer cleanup()
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.MigrateUp(ctx); err != nil {
		return err
	}
	if o.quota {
		big := []models.PolicyLimit{{Rule: models.RuleMaxGPUHours, Value: 1 << 40}}
		if err := db.SaveScopeLimits(ctx, models.ScopeGlobal, 0, big, time.Now(), models.CLIActor); err != nil {
			return err
		}
	}
	target, err := newTarget(ctx, db, o.gpus)
	if err != nil {
		return err
	}
	defer target.close()
	bare, err := newCeiling()
	if err != nil {
		return err
	}
	defer bare.close()
	hf, err := newHTTPFloor(db, target)
	if err != nil {
		return err
	}
	defer hf.close()
	var chf *httpFloor
	if d == store.Postgres && !o.now {
		if chf, err = newCheckedHTTPFloor(db, target); err != nil {
			return err
		}
		defer chf.close()
	}
	if o.now {
		return measureNow(ctx, d, o, db, dbURL, target, bare, hf, out)
	}
	for _, c := range o.clients {
		res := target.load(ctx, c, o.n, o.maxTime)
		raw, err := rawInserts(ctx, d, db, dbURL, c, o.maxTime/3)
		if err != nil {
			return err
		}
		ceil := bare.load(ctx, target, c, o.maxTime/3)
		floor, err := sqlFloor(ctx, d, db, dbURL, target, c, o.maxTime/3)
		if err != nil {
			return err
		}
		httpFloor, err := hf.bookings(ctx, db, target, c, o.maxTime/3)
		if err != nil {
			return err
		}
		// A comparison figure that counts failed calls overstates itself
		// (pgbench's own failures are refused by parsePgbench).
		if err := callsFailed(c, map[string]result{"raw baseline": raw, "bare HTTP": ceil, "SQL floor": floor, "HTTP floor": httpFloor}); err != nil {
			return err
		}
		// The bound: a booking costs at least a bare HTTP request plus the
		// SQL floor, so no implementation books faster than this here.
		bound := 1 / (1/ceil.perSecond() + 1/floor.perSecond())
		checked, checkedHTTP := "– | – | –", "– | –"
		if d == store.Postgres {
			cf, err := pgCheckedFloor(ctx, db, dbURL, target, c, o.maxTime/3)
			if err != nil {
				return err
			}
			cb := 1 / (1/ceil.perSecond() + 1/cf.perSecond())
			checked = fmt.Sprintf("%.0f | %.0f | %.2f", cf.perSecond(), cb, res.perSecond()/cb)
			ch, err := chf.bookings(ctx, db, target, c, o.maxTime/3)
			if err != nil {
				return err
			}
			if err := callsFailed(c, map[string]result{"checked HTTP floor": ch}); err != nil {
				return err
			}
			checkedHTTP = fmt.Sprintf("%.0f | %.2f", ch.perSecond(), res.perSecond()/ch.perSecond())
		}
		fmt.Fprintf(out, "| %s | %d | %.0f | %.1f | %.1f | %d | %.0f | %.1f | %.2f | %.0f | %.0f | %.0f | %.2f | %s | %.0f | %.2f | %s |\n", d, c, res.perSecond(),
			ms(res.quantile(0.5)), ms(res.quantile(0.99)), res.errors, raw.perSecond(), ms(raw.quantile(0.5)), res.perSecond()/raw.perSecond(),
			ceil.perSecond(), floor.perSecond(), bound, bound/raw.perSecond(), checked, httpFloor.perSecond(), res.perSecond()/httpFloor.perSecond(), checkedHTTP)
	}
	return nil
}

// callsFailed refuses the comparison figures of a level at clients
// clients when one of them counted failed calls: it would overstate itself.
func callsFailed(clients int, figures map[string]result) error {
	for name, r := range figures {
		if r.errors > 0 {
			return fmt.Errorf("%d clients: %s: %d of %d calls failed", clients, name, r.errors, len(r.lat))
		}
	}
	return nil
}

// target is a gpubook server on 127.0.0.1 with 64 GPUs on one node and
// loadUsers users, each with a token: requests rotate through them, as many
// people booking do, so that no single user's history grows without bound.
type target struct {
	url    string
	tokens []string
	users  []int64 // users[i] owns tokens[i]
	nodeID int64
	gpuIDs []int64
	next   int // the next free (GPU, hour) cell, so that no request conflicts
	start  time.Time
	srv    *http.Server
}

func newTarget(ctx context.Context, db *store.DB, gpus int) (*target, error) {
	var tokens []string
	var users []int64
	for i := range loadUsers {
		u := &models.User{Email: fmt.Sprintf("load%02d@example.org", i), Name: fmt.Sprintf("Load %02d", i)}
		if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
			return nil, err
		}
		_, plain, err := db.CreateToken(ctx, u.ID, "bookload", time.Now(), models.CLIActor)
		if err != nil {
			return nil, err
		}
		tokens = append(tokens, plain)
		users = append(users, u.ID)
	}
	gs, err := models.NewNodeGPUs("load01", gpus, "NVIDIA A100-SXM4-80GB", 81920)
	if err != nil {
		return nil, err
	}
	node := &models.Node{Name: "load01"}
	if err := db.CreateNode(ctx, node, gs, models.CLIActor); err != nil {
		return nil, err
	}
	var sessions scs.Store = sqlite3store.NewWithCleanupInterval(db.SQL, 0)
	if db.Dialect == store.Postgres {
		sessions = postgresstore.NewWithCleanupInterval(db.SQL, 0)
	}
	cfg := web.Config{Listen: "127.0.0.1:0", Location: time.UTC, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		APIRate: web.Rate{PerMinute: 1e9, Burst: 1 << 20}}
	s, err := web.New(cfg, telemetry.NewWhole(db), sessions)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: s.Echo, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t := &target{url: "http://" + ln.Addr().String(), tokens: tokens, users: users, nodeID: node.ID, srv: hs, start: time.Now().UTC().Truncate(time.Hour).Add(2 * time.Hour)}
	for _, g := range node.GPUs {
		t.gpuIDs = append(t.gpuIDs, g.ID)
	}
	if len(t.gpuIDs) == 0 {
		all, err := db.GPUs(ctx)
		if err != nil {
			return nil, err
		}
		for _, g := range all {
			t.gpuIDs = append(t.gpuIDs, g.ID)
		}
	}
	return t, nil
}

func (t *target) close() { t.srv.Close() }

// loadUsers is how many people the load pretends to be.
const loadUsers = 50

// body returns the k-th booking request: one GPU for one hour, each cell of
// the (GPU, hour) grid used once, so that every request should succeed.
func (t *target) body(k int) string {
	g := t.gpuIDs[k%len(t.gpuIDs)]
	s := t.start.Add(time.Duration(k/len(t.gpuIDs)) * time.Hour)
	return fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"%s","note":"load %d"}`, g, s.Format(time.RFC3339),
		s.Add(time.Hour).Format(time.RFC3339), k)
}

func loopbackOnly(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
		return fmt.Errorf("refusing %s: bookload only targets 127.0.0.1", h)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
