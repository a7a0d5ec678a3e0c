package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/alexedwards/scs/postgresstore"
	"github.com/alexedwards/scs/sqlite3store"
	"github.com/alexedwards/scs/v2"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/views/i18n"
	"github.com/gpubook/gpubook/web"
)

// The usage pages as a browser gets them: through the wired router (the
// session, the store, the rendering), at the page's now, signed in as
// user 1, the lead of team 1, made an admin for the cluster page.
const (
	pageRuns    = 30 // requests of each page alone
	viewers     = 8  // concurrent viewers
	viewerRuns  = 8  // requests of each viewer
	benchViewer = "u1@bench.example"
)

// usagePages are the pages timed: "My usage", a team's, the cluster's.
var usagePages = []struct{ name, path string }{
	{"my usage", "/usage"},
	{"team", "/usage/team/1"},
	{"cluster", "/admin/usage"},
}

// latency is one page's p50 and p99 over its requests, and the medians
// of its first view after a roll, with the rolled part read by the view
// (cold) or by store.WarmUsagePages before it (warm, and the warm's time).
type latency struct {
	name                  string
	alone, together       [2]time.Duration // p50, p99
	n, nTogether          int
	cold, warm, warmedFor time.Duration
}

func (l latency) String() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond)) }
	return fmt.Sprintf("%-9s alone p50 %s / p99 %s ms (%d); %d viewers p50 %s / p99 %s ms (%d); after a roll %s ms, warmed %s ms (warm %s ms)", l.name,
		ms(l.alone[0]), ms(l.alone[1]), l.n, viewers, ms(l.together[0]), ms(l.together[1]), l.nTogether, ms(l.cold), ms(l.warm), ms(l.warmedFor))
}

// rollRuns is how many times the first view after a roll is timed, each way.
const rollRuns = 5

// afterRoll times the first view of path after a roll, rollRuns times
// each way: the view reading the rolled part, and the view after
// WarmUsagePages read it. A roll is stood in for by moving the rolled
// hours' generation, which is what a roll does to a replica's kept part;
// the hours stay as they are.
func afterRoll(ctx context.Context, db *store.DB, cfg web.Config, b *browser, l *latency, path string) error {
	var cold, warm, warmedFor []time.Duration
	bump := func() error {
		return db.Gorm.WithContext(ctx).Exec("UPDATE usage_rollup_state SET generation = generation + 1 WHERE id = 1").Error
	}
	for range rollRuns {
		if err := bump(); err != nil {
			return err
		}
		ds, err := b.times(path, 1)
		if err != nil {
			return err
		}
		cold = append(cold, ds...)
		if err := bump(); err != nil {
			return err
		}
		t0 := time.Now()
		if err := db.WarmUsagePages(ctx, cfg.Now(), cfg.Location, cfg.Reports); err != nil {
			return err
		}
		warmedFor = append(warmedFor, time.Since(t0))
		if ds, err = b.times(path, 1); err != nil {
			return err
		}
		warm = append(warm, ds...)
	}
	l.cold, l.warm, l.warmedFor = percentiles(cold)[0], percentiles(warm)[0], percentiles(warmedFor)[0]
	return nil
}

// timePages times every usage page of the week in progress at now, alone
// and with viewers concurrent viewers of the same page.
func timePages(ctx context.Context, db *store.DB, now time.Time) ([]latency, error) {
	if err := db.Gorm.WithContext(ctx).Exec("UPDATE users SET is_admin = TRUE WHERE email = ?", benchViewer).Error; err != nil {
		return nil, err
	}
	// The pool as serve has it (measure pins one connection).
	if db.Dialect == store.Postgres {
		db.SetMaxConns(store.DefaultMaxConns)
		defer db.SQL.SetMaxOpenConns(1)
	}
	b, cfg, err := pageServer(db, now)
	if err != nil {
		return nil, err
	}
	var out []latency
	for _, p := range usagePages {
		l := latency{name: p.name}
		if _, err := b.get(p.path); err != nil { // warm: the first run pays for caches
			return nil, err
		}
		alone, err := b.times(p.path, pageRuns)
		if err != nil {
			return nil, err
		}
		together, err := concurrently(b, p.path)
		if err != nil {
			return nil, err
		}
		l.alone, l.together, l.n, l.nTogether = percentiles(alone), percentiles(together), len(alone), len(together)
		if err := afterRoll(ctx, db, cfg, b, &l, p.path); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// pageServer is the wired router on db at a fixed now, and a browser
// signed in to it as benchViewer.
func pageServer(db *store.DB, now time.Time) (*browser, web.Config, error) {
	cfg := web.Config{Listen: "127.0.0.1:0", DevLogin: true, Location: time.UTC, Now: func() time.Time { return now },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), I18n: i18n.MustLoad()}
	srv, err := web.New(cfg, telemetry.NewWhole(db), sessionStore(db))
	if err != nil {
		return nil, cfg, err
	}
	b, err := signIn(srv.Echo)
	return b, cfg, err
}

// startRuns is how many times the first view after a start is timed, each
// way.
const startRuns = 3

// afterStart times the first view of My usage on a replica just started
// (a new store handle on dbURL: nothing kept), startRuns times each way:
// the view computing the week itself, and the view after the replica's
// first warm (store.WarmUsagePages, which serve runs at start and every
// 30 s). It prints the medians and the warm's.
func afterStart(ctx context.Context, dbURL string, now time.Time) error {
	var cold, warm, warmedFor []time.Duration
	for range startRuns {
		for _, warmed := range []bool{false, true} {
			db, err := store.Open(ctx, dbURL)
			if err != nil {
				return err
			}
			b, cfg, err := pageServer(db, now)
			if err == nil && warmed {
				t0 := time.Now()
				err = db.WarmUsagePages(ctx, cfg.Now(), cfg.Location, cfg.Reports)
				warmedFor = append(warmedFor, time.Since(t0))
			}
			var ds []time.Duration
			if err == nil {
				ds, err = b.times("/usage", 1)
			}
			db.Close()
			if err != nil {
				return err
			}
			if warmed {
				warm = append(warm, ds...)
			} else {
				cold = append(cold, ds...)
			}
		}
	}
	ms := func(ds []time.Duration) string {
		return fmt.Sprintf("%.0f", float64(percentiles(ds)[0])/float64(time.Millisecond))
	}
	fmt.Printf("first view after a start (my usage, median of %d): %s ms; after the first warm %s ms (the warm %s ms)\n",
		startRuns, ms(cold), ms(warm), ms(warmedFor))
	return nil
}

// concurrently runs viewers browsers of one session, each requesting path
// viewerRuns times, all at once.
func concurrently(b *browser, path string) ([]time.Duration, error) {
	var (
		mu    sync.Mutex
		all   []time.Duration
		first error
		wg    sync.WaitGroup
	)
	for range viewers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ds, err := b.times(path, viewerRuns)
			mu.Lock()
			defer mu.Unlock()
			all = append(all, ds...)
			if err != nil && first == nil {
				first = err
			}
		}()
	}
	wg.Wait()
	return all, first
}

// percentiles is p50 and p99 (nearest rank) of ds.
func percentiles(ds []time.Duration) [2]time.Duration {
	if len(ds) == 0 {
		return [2]time.Duration{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return [2]time.Duration{rank(0.50), rank(0.99)}
}

// sessionStore is serve's session store for db's dialect.
func sessionStore(db *store.DB) scs.Store {
	if db.Dialect == store.Postgres {
		return postgresstore.NewWithCleanupInterval(db.SQL, 0)
	}
	return sqlite3store.NewWithCleanupInterval(db.SQL, 0)
}

// browser sends requests through the router with a signed-in session.
type browser struct {
	h       http.Handler
	cookies map[string]*http.Cookie // set while signing in, then only read
}

var csrfMeta = regexp.MustCompile(`name="csrf-token" content="([^"]+)"`)

// signIn signs in as benchViewer through the development sign-in.
func signIn(h http.Handler) (*browser, error) {
	b := &browser{h: h, cookies: map[string]*http.Cookie{}}
	m := csrfMeta.FindStringSubmatch(b.do(httptest.NewRequest(http.MethodGet, "/login", nil)).Body.String())
	if m == nil {
		return nil, fmt.Errorf("reportbench: sign-in page without a CSRF token")
	}
	form := url.Values{"email": {benchViewer}, "_csrf": {m[1]}}
	req := httptest.NewRequest(http.MethodPost, "/login/dev", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if rec := b.do(req); rec.Code != http.StatusSeeOther {
		return nil, fmt.Errorf("reportbench: sign in: status %d", rec.Code)
	}
	return b, nil
}

func (b *browser) do(req *http.Request) *httptest.ResponseRecorder {
	for _, c := range b.cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	b.h.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		b.cookies[c.Name] = c
	}
	return rec
}

// get fetches path and fails unless it is a 200.
func (b *browser) get(path string) (string, error) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for _, c := range b.cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	b.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return "", fmt.Errorf("reportbench: GET %s: status %d", path, rec.Code)
	}
	return rec.Body.String(), nil
}

// times is the duration of each of n requests of path, one after another.
func (b *browser) times(path string, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if _, err := b.get(path); err != nil {
			return out, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

// rollAndPages brings a fresh fill where production has it, as measure
// does but without timing the views from the minutes alone (minutes on
// SQLite at 512 GPUs × 4 weeks): the roll job catching up, the weekly send
// freezing the weeks before w; then it times the usage pages of w in
// progress, past after pageAsOf.
func rollAndPages(ctx context.Context, db *store.DB, dbURL string, w models.Week, past time.Duration) error {
	t0 := time.Now()
	if _, err := db.RollUsage(ctx, pageAsOf(w), time.Unix(0, 0), models.DefaultReportRules.BusyUtilPct); err != nil {
		return err
	}
	fmt.Printf("rolled in %v\n", time.Since(t0).Round(time.Millisecond))
	t1 := time.Now()
	for k := models.TrendWeeks - 1; k >= 1; k-- {
		if _, err := db.ReportWeekAt(ctx, w.Prev(k), w.Start, models.DefaultReportRules, true); err != nil {
			return err
		}
	}
	fmt.Printf("froze the %d weeks before in %v\n", models.TrendWeeks-1, time.Since(t1).Round(time.Millisecond))
	return pagesAndStart(ctx, db, dbURL, pageAsOf(w).Add(past))
}

// pagesAndStart times every usage page at now, then the first view after
// a start.
func pagesAndStart(ctx context.Context, db *store.DB, dbURL string, now time.Time) error {
	ls, err := timePages(ctx, db, now)
	for _, l := range ls {
		fmt.Println(l)
	}
	if err != nil {
		return err
	}
	return afterStart(ctx, dbURL, now)
}
