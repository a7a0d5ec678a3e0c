package web_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// BenchmarkBookNowRelease is peerbench's kept-alive pair in one process:
// POST /api/v1/bookings (one GPU, from now, one hour) and POST
// /api/v1/bookings/{id}/release with a bearer token, over loopback HTTP on
// one kept-alive connection to the wired server, on a fresh database file
// (SQLite) or database (PostgreSQL). It reports the process's CPU time per
// pair (server and client together, as on peerbench's machine), on
// PostgreSQL the server's CPU time per pair too, the SQL statements and
// transactions per pair as the store's database/sql pool saw them (on
// PostgreSQL none now: the booking, release and token look-up run on the
// driver's own connection; TestBookNowReleaseStatements counts their round
// trips), the goroutines started per pair (two: net/http's background read
// of each request; database/sql's watchers of transactions and result sets
// made five more before SQLite's transactions moved to the writer's own
// connection), and allocations. Profile it with -cpuprofile:
//
//	go test -run '^$' -bench BenchmarkBookNowRelease -benchtime 2000x -benchmem ./web/
//	go test -run '^$' -bench 'BookNowRelease/sqlite' -benchtime 3000x -cpuprofile /tmp/pair.prof ./web/ && go tool pprof -top web.test /tmp/pair.prof
func BenchmarkBookNowRelease(b *testing.B) {
	for _, d := range []string{store.SQLite, store.Postgres} {
		b.Run(d, func(b *testing.B) { benchBookNowRelease(b, d) })
	}
}

// pairFixture is a wired server over loopback HTTP on a fresh database,
// with one user, their token and a node of 8 GPUs; pair books the first
// GPU now for an hour and releases it, on one kept-alive connection, and
// returns both answers.
type pairFixture struct {
	env   *webtest.Env
	count *stmtCounter
	gpu   models.GPU
	pair  func() (booked, released string)
}

func newPairFixture(tb testing.TB, dialect string) *pairFixture {
	return newPairFixtureOn(tb, storetest.Open(tb, dialect))
}

// newPairFixtureOn is newPairFixture on a database the caller opened.
func newPairFixtureOn(tb testing.TB, db *store.DB) *pairFixture {
	env := webtest.NewOn(tb, db, func(c *web.Config) { c.APIRate = web.Rate{PerMinute: 1e9, Burst: 1 << 20} })
	ctx := context.Background()
	u := env.AddUser("bench@example.org", "Bench", false)
	gs, err := models.NewNodeGPUs("node01", 8, "NVIDIA A100-SXM4-80GB", 81920)
	if err != nil {
		tb.Fatal(err)
	}
	node := &models.Node{Name: "node01"}
	if err := env.DB.CreateNode(ctx, node, gs, models.CLIActor); err != nil {
		tb.Fatal(err)
	}
	all, err := env.DB.GPUs(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	f := &pairFixture{env: env, gpu: all[0]}
	token := env.Token(u)
	srv := httptest.NewServer(env.Server.Echo)
	tb.Cleanup(srv.Close)
	hc := srv.Client()
	f.count = countStatements(env.DB)
	f.pair = func() (string, string) {
		now := time.Now().UTC().Truncate(time.Second)
		body := fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"%s"}`, f.gpu.ID, now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
		id, booked := benchCall(tb, hc, srv.URL+"/api/v1/bookings", token, body, http.StatusCreated)
		_, released := benchCall(tb, hc, fmt.Sprintf("%s/api/v1/bookings/%d/release", srv.URL, id), token, "", http.StatusOK)
		return booked, released
	}
	return f
}

func benchBookNowRelease(b *testing.B, dialect string) {
	f := newPairFixture(b, dialect)
	for range 20 { // warm: connections, compiled statements
		f.pair()
	}
	f.count.reset()
	server := pgServerCPU(b, f.env.DB)
	server0, cpu0, g0 := server(), cpuTime(), goroutinesCreated()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f.pair()
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/n, "cpu-µs/pair")
	if dialect == store.Postgres {
		b.ReportMetric(float64((server()-server0).Microseconds())/n, "pg-cpu-µs/pair")
	}
	b.ReportMetric(float64(f.count.statements.Load())/n, "stmts/pair")
	b.ReportMetric(float64(f.count.txs.Load())/n, "txs/pair")
	b.ReportMetric(float64(goroutinesCreated()-g0)/n, "goroutines/pair")
}

// TestBookNowReleaseStatements: booking one GPU now and releasing it
// through the API takes two transactions and at most 10 statements on
// SQLite (16 before the hot path left GORM and the answers stopped
// reading the GPUs again), and 11 round trips to PostgreSQL, token
// look-ups included (19 before the hot path left GORM): two look-ups;
// BEGIN, the policy read, the insert, COMMIT; BEGIN, the GPUs' lock, the
// read, the writes, COMMIT. Both answers name the GPU's UUID.
// PostgreSQL's round trips are counted on the wire, by a proxy in front
// of it.
func TestBookNowReleaseStatements(t *testing.T) {
	t.Run(store.SQLite, func(t *testing.T) {
		f := newPairFixture(t, store.SQLite)
		f.pair() // compiles what SQLite keeps compiled
		f.count.reset()
		booked, released := f.pair()
		if got, want := f.count.statements.Load(), int64(10); got > want {
			t.Errorf("statements per pair = %d, want at most %d", got, want)
		}
		if got := f.count.txs.Load(); got != 2 {
			t.Errorf("transactions per pair = %d, want 2", got)
		}
		checkPairAnswers(t, f, booked, released)
	})
	t.Run(store.Postgres, func(t *testing.T) {
		dbURL := storetest.MigratedURL(t, store.Postgres)
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		proxy := newRoundTripProxy(t, u.Host)
		f := newPairFixtureOn(t, storetest.OpenURL(t, proxy.via(t, dbURL)))
		f.pair() // prepares what pgx keeps prepared on the connection
		// The fewest of three pairs: a connection idle for over a second
		// is pinged when the pool hands it out, a trip of its own.
		least := int64(1 << 30)
		for range 3 {
			proxy.trips.Store(0)
			booked, released := f.pair()
			least = min(least, proxy.trips.Load())
			checkPairAnswers(t, f, booked, released)
		}
		t.Logf("round trips per pair: %d", least)
		if want := int64(11); least > want {
			t.Errorf("round trips per pair = %d, want at most %d", least, want)
		}
	})
}

// checkPairAnswers: both answers name the GPU's UUID.
func checkPairAnswers(t *testing.T, f *pairFixture, booked, released string) {
	t.Helper()
	for _, answer := range []string{booked, released} {
		if !strings.Contains(answer, `"gpu_uuids":["`+f.gpu.UUID+`"]`) {
			t.Errorf("answer without the GPU's UUID %s: %s", f.gpu.UUID, answer)
		}
	}
}

// benchCall sends one API call and returns the answer's id and body.
func benchCall(tb testing.TB, hc *http.Client, url, token, body string, want int) (int64, string) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := hc.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != want {
		tb.Fatalf("POST %s: %d %s %v", url, res.StatusCode, raw, err)
	}
	// The id is the first field of the answer: {"id":N,...}.
	var id int64
	if _, err := fmt.Sscanf(string(raw), `{"id":%d`, &id); err != nil {
		tb.Fatalf("answer without an id first: %s", raw)
	}
	return id, string(raw)
}

// pgServerCPU returns a function that reads the CPU time (user + system)
// of the PostgreSQL server processes serving db's database (0 on SQLite,
// or where /proc does not say): their process titles name the database.
// It counts what the server spends on the pair, which cpuTime does not,
// and not what other work on the same server spends.
func pgServerCPU(tb testing.TB, db *store.DB) func() time.Duration {
	if db.Dialect != store.Postgres {
		return func() time.Duration { return 0 }
	}
	var name string
	if err := db.SQL.QueryRow("SELECT current_database()").Scan(&name); err != nil {
		tb.Fatal(err)
	}
	return func() time.Duration {
		var ticks int64
		cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, c := range cmdlines {
			title, err := os.ReadFile(c)
			if err != nil || !bytes.HasPrefix(title, []byte("postgres: ")) || !bytes.Contains(title, []byte(" "+name+" ")) {
				continue
			}
			stat, err := os.ReadFile(filepath.Join(filepath.Dir(c), "stat"))
			if err != nil {
				continue
			}
			// Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
			f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			if len(f) > 12 {
				u, _ := strconv.ParseInt(f[11], 10, 64)
				s, _ := strconv.ParseInt(f[12], 10, 64)
				ticks += u + s
			}
		}
		return time.Duration(ticks) * (time.Second / 100) // USER_HZ is 100 on Linux
	}
}

// goroutinesCreated is how many goroutines the process has started: each
// is a hand-off that may wake another thread.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// stmtCounter counts the statements and transactions the store's
// connection pool runs, GORM's and the store's raw ones alike.
type stmtCounter struct{ statements, txs atomic.Int64 }

func (c *stmtCounter) reset() { c.statements.Store(0); c.txs.Store(0) }

// countStatements puts a counting pool in front of db's: every statement
// the store runs goes through db.Gorm's pool or a transaction it began.
func countStatements(db *store.DB) *stmtCounter {
	c := &stmtCounter{}
	p := &countingPool{inner: db.Gorm.ConnPool, c: c}
	db.Gorm.ConnPool, db.Gorm.Statement.ConnPool = p, p
	return c
}

type countingPool struct {
	inner gorm.ConnPool
	c     *stmtCounter
}

func (p *countingPool) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return p.inner.PrepareContext(ctx, q)
}

func (p *countingPool) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	p.c.statements.Add(1)
	return p.inner.ExecContext(ctx, q, args...)
}

func (p *countingPool) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	p.c.statements.Add(1)
	return p.inner.QueryContext(ctx, q, args...)
}

func (p *countingPool) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	p.c.statements.Add(1)
	return p.inner.QueryRowContext(ctx, q, args...)
}

// BeginTx begins on the inner pool (the SQLite writer's turn, or *sql.DB)
// and counts inside the transaction too.
func (p *countingPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	p.c.txs.Add(1)
	var tx gorm.ConnPool
	var err error
	switch in := p.inner.(type) {
	case gorm.ConnPoolBeginner:
		tx, err = in.BeginTx(ctx, opts)
	case gorm.TxBeginner:
		tx, err = in.BeginTx(ctx, opts)
	default:
		return nil, fmt.Errorf("pool %T cannot begin", p.inner)
	}
	if err != nil {
		return nil, err
	}
	return &countingTx{countingPool: countingPool{inner: tx, c: p.c}}, nil
}

// GetDBConn gives GORM's DB() the pool underneath.
func (p *countingPool) GetDBConn() (*sql.DB, error) {
	if g, ok := p.inner.(interface{ GetDBConn() (*sql.DB, error) }); ok {
		return g.GetDBConn()
	}
	if d, ok := p.inner.(*sql.DB); ok {
		return d, nil
	}
	return nil, fmt.Errorf("pool %T has no *sql.DB", p.inner)
}

type countingTx struct{ countingPool }

func (t *countingTx) Commit() error   { return t.inner.(gorm.TxCommitter).Commit() }
func (t *countingTx) Rollback() error { return t.inner.(gorm.TxCommitter).Rollback() }
