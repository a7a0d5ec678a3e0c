package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/alexedwards/scs/postgresstore"
	"github.com/alexedwards/scs/sqlite3store"
	"github.com/alexedwards/scs/v2"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/web"
)

// portal is a gpubook server in a child process on 127.0.0.1, on a fresh
// database with one node of gpus GPUs and one user who has a token and a
// signed-in browser session.
type portal struct {
	url    string
	dbURL  string
	token  string
	userID int64
	nodeID int64
	gpuID  int64        // the GPU "book now" takes
	status *http.Client // carries the session cookie
	stop   []func()
}

// startPortal makes the database, fills it and starts the server.
func startPortal(ctx context.Context, dialect, pgAdmin, dir string, gpus int) (*portal, error) {
	p := &portal{}
	dbURL, err := scratchDB(ctx, dialect, pgAdmin, dir, &p.stop)
	if err != nil {
		return nil, err
	}
	p.dbURL = dbURL
	if err := p.fill(ctx, dbURL, gpus); err != nil {
		p.close()
		return nil, err
	}
	addr, err := child(ctx, &p.stop, "serve", dbURL)
	if err != nil {
		p.close()
		return nil, err
	}
	p.url = "http://" + addr
	if err := p.signIn(ctx); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// fill migrates the database and adds the user, the token and the node.
func (p *portal) fill(ctx context.Context, dbURL string, gpus int) error {
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.MigrateUp(ctx); err != nil {
		return err
	}
	u := &models.User{Email: "bench@example.org", Name: "Bench", IsAdmin: true}
	if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
		return err
	}
	p.userID = u.ID
	if _, p.token, err = db.CreateToken(ctx, u.ID, "peerbench", time.Now(), models.CLIActor); err != nil {
		return err
	}
	gs, err := models.NewNodeGPUs("node01", gpus, "NVIDIA A100-SXM4-80GB", 81920)
	if err != nil {
		return err
	}
	node := &models.Node{Name: "node01"}
	if err := db.CreateNode(ctx, node, gs, models.CLIActor); err != nil {
		return err
	}
	all, err := db.GPUs(ctx)
	if err != nil || len(all) == 0 {
		return fmt.Errorf("no GPUs after enrolment: %w", err)
	}
	p.gpuID, p.nodeID = all[0].ID, node.ID
	return nil
}

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// signIn signs the user in through the development sign-in, as a browser
// does: the form, then its POST with the form's CSRF token.
func (p *portal) signIn(ctx context.Context) error {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return err
	}
	p.status = &http.Client{Jar: jar, Timeout: 30 * time.Second}
	page, err := get(ctx, p.status, p.url+"/login", nil)
	if err != nil {
		return err
	}
	m := csrfField.FindSubmatch(page)
	if m == nil {
		return errors.New("sign-in form without a CSRF token")
	}
	form := url.Values{"email": {"bench@example.org"}, "name": {"Bench"}, "_csrf": {string(m[1])}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/login/dev", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := p.status.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if _, err := get(ctx, p.status, p.url+"/status", nil); err != nil {
		return fmt.Errorf("sign-in: %w", err)
	}
	return nil
}

func (p *portal) close() { stopAll(p.stop) }

// serve is the child process: gpubook's wired server on the database at
// dbURL, on a free loopback port that it prints on its first line. It is
// the server `gpubook serve` runs (same router, middleware, pool and
// session store) without the background jobs, with the development sign-in
// on and the per-token API rate limit raised so that the load is not
// answered 429.
func serve(ctx context.Context, dbURL string) error {
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxConns(25)
	var sessions scs.Store = sqlite3store.NewWithCleanupInterval(db.SQL, 0)
	if db.Dialect == store.Postgres {
		sessions = postgresstore.NewWithCleanupInterval(db.SQL, 0)
	}
	cfg := web.Config{Listen: "127.0.0.1:0", Location: time.UTC, DevLogin: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), APIRate: web.Rate{PerMinute: 1e9, Burst: 1 << 20}}
	s, err := web.New(cfg, telemetry.NewWhole(db), sessions)
	if err != nil {
		return err
	}
	if prof := os.Getenv("PEERBENCH_CPUPROFILE"); prof != "" { // set by -cpuprofile
		f, err := os.Create(prof + "." + db.Dialect)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	return listenAndServe(ctx, s.Echo)
}

// child starts this program again with args (a server: serve or
// floor-serve) and returns the address it printed on its first line.
func child(ctx context.Context, stops *[]func(), args ...string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := start(cmd, stops); err != nil {
		return "", err
	}
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("%s child: %w", args[0], err)
	}
	return strings.TrimSpace(addr), nil
}

// listenAndServe serves h on a free loopback port, which it prints on its
// first line, until ctx ends.
func listenAndServe(ctx context.Context, h http.Handler) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); hs.Close() }()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// scratchDB makes a fresh database: a SQLite file under dir, or a new
// PostgreSQL database on the local server, dropped at the end.
func scratchDB(ctx context.Context, dialect, pgAdmin, dir string, stops *[]func()) (string, error) {
	switch dialect {
	case store.SQLite:
		return "sqlite:" + filepath.Join(dir, dialect+".db"), nil
	case store.Postgres:
		u, drop, err := storetest.ScratchPostgres(ctx, pgAdmin, "peerbench")
		if err != nil {
			return "", err
		}
		*stops = append(*stops, func() {
			if err := drop(); err != nil {
				fmt.Fprintln(os.Stderr, "peerbench:", err)
			}
		})
		return u, nil
	}
	return "", fmt.Errorf("unknown database %q", dialect)
}
