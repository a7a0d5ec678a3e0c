// Command agentload measures what the largest bodies the agent API accepts
// cost the portal in memory. It builds and starts the real server
// (`gpubook serve`) on 127.0.0.1 on a fresh SQLite or PostgreSQL database,
// enrols a 64-GPU node, then posts, from several clients at once, bodies
// just under wire.MaxBody: valid ones (stored) and invalid ones
// (decoded in full, refused at their last item), and a 16 MB body. It
// samples the server's resident memory (VmRSS) throughout and reports the
// peak above idle. Each kind is posted in two rounds of the same size:
// the first is also the second's warm-up, and the second's peak is taken
// above the RSS the first left, so that it leaves out what only a first
// request costs (the heap growing to its working size, the pages of the
// database's cache, a connection's buffers).
//
//	go run ./scripts/agentload -db sqlite,postgres -clients 4 -n 5
//	go run ./scripts/agentload -db sqlite,postgres -clients 1 -n 1 -fresh
//
// With -fresh every kind of body gets a server of its own, so that its
// figure is what those requests cost, not also the garbage the kinds
// before it left for the collector. -sqlite-cache-pages sets SQLite's page
// cache, to tell what of a figure is that cache.
// It only ever talks to 127.0.0.1: the server it starts and the local
// PostgreSQL, where it creates a scratch database and drops it afterwards.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

type options struct {
	clients, n int
	fresh      bool
	cachePages int
	pgAdmin    string
	bin        string
}

func main() {
	if err := run(context.Background(), os.Args, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agentload:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("agentload", flag.ContinueOnError)
	dbs := fs.String("db", "sqlite,postgres", "databases to measure")
	clients := fs.Int("clients", 4, "clients posting at once")
	n := fs.Int("n", 5, "requests per client and kind of body")
	fresh := fs.Bool("fresh", false, "a new server and database for each kind of body, so that no kind's figure holds what the ones before it left on the heap")
	cachePages := fs.Int("sqlite-cache-pages", 0, "SQLite: the database's own page cache size, in pages per connection (PRAGMA default_cache_size); 0 leaves SQLite's default (2 MB)")
	pgAdmin := fs.String("pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server (127.0.0.1 only)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if !strings.Contains(*pgAdmin, "@127.0.0.1:") {
		return fmt.Errorf("-pg must be on 127.0.0.1")
	}
	dir, err := os.MkdirTemp("", "agentload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "gpubook")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/gpubook")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build the server: %w", err)
	}
	o := options{clients: *clients, n: *n, fresh: *fresh, cachePages: *cachePages, pgAdmin: *pgAdmin, bin: bin}
	for _, d := range strings.Split(*dbs, ",") {
		if err := measure(ctx, d, dir, o, out); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	return nil
}

// measure runs every kind of body against one fresh server and database,
// or, with o.fresh, each kind against its own.
func measure(ctx context.Context, dialect, dir string, o options, out io.Writer) error {
	if !o.fresh {
		return measureKinds(ctx, dialect, dir, o, out, nil)
	}
	all, err := buildBodies(0, 0) // the kinds, without bodies
	if err != nil {
		return err
	}
	for k := range all {
		if err := measureKinds(ctx, dialect, dir, o, out, []int{k}); err != nil {
			return err
		}
	}
	return nil
}

// measureKinds starts a server on a new database and posts the kinds of
// body picked (nil: all) in turn.
func measureKinds(ctx context.Context, dialect, dir string, o options, out io.Writer, pick []int) error {
	file, err := os.CreateTemp(dir, "agentload-*.db")
	if err != nil {
		return err
	}
	file.Close()
	dbURL := "sqlite:" + file.Name()
	if dialect == store.SQLite && o.cachePages > 0 {
		if err := setCachePages(file.Name(), o.cachePages); err != nil {
			return err
		}
	}
	if dialect == store.Postgres {
		u, drop, err := storetest.ScratchPostgres(ctx, o.pgAdmin, "agentload")
		if err != nil {
			return err
		}
		defer drop()
		dbURL = u
	}
	srv, err := startServer(ctx, o.bin, dbURL)
	if err != nil {
		return err
	}
	defer srv.stop()
	cred, booking, err := enrolNode(ctx, srv, dbURL)
	if err != nil {
		return err
	}
	round := o.clients * o.n
	kinds, err := buildBodies(2*round, booking)
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // let start-up garbage settle
	idle := srv.rssKiB()
	if pick == nil || pick[0] == 0 {
		fmt.Fprintf(out, "\n%s: %d clients × %d requests per kind and round; server idle RSS %.1f MiB", dialect, o.clients, o.n, mib(idle))
		if o.fresh {
			fmt.Fprint(out, " (the first server's; a new server for each kind)")
		}
		fmt.Fprint(out, "\n\n| body | bytes | answers | wall | first round: peak RSS above idle | second round: peak RSS above the first's |\n|---|---|---|---|---|---|\n")
	}
	for i, k := range kinds {
		if pick != nil && pick[0] != i {
			continue
		}
		first := post(ctx, srv, cred, k.path, k.bodies[:round], o)
		time.Sleep(time.Second)
		// The first round is the second's warm-up: what a request costs
		// once the heap, the database's page cache and the connections it
		// touches exist, which the first request of a kind has to make.
		warm := srv.rssKiB()
		second := post(ctx, srv, cred, k.path, k.bodies[round:], o)
		fmt.Fprintf(out, "| %s | %d | %s | %.1f s | %.1f MiB | %.1f MiB |\n", k.name, len(k.bodies[0]), first.answers+"; "+second.answers,
			(first.wall + second.wall).Seconds(), mib(first.peak-idle), mib(second.peak-warm))
	}
	if pick == nil {
		fmt.Fprintf(out, "\nserver peak RSS over the whole run (VmHWM): %.1f MiB, %.1f MiB above idle\n", mib(srv.hwmKiB()), mib(srv.hwmKiB()-idle))
	}
	return nil
}

// setCachePages writes a page cache size into the header of the SQLite
// file, which every connection the server opens then uses (the server
// sets no cache_size of its own).
func setCachePages(path string, pages int) error {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(fmt.Sprintf("PRAGMA default_cache_size = %d; CREATE TABLE agentload_header (x); DROP TABLE agentload_header", pages))
	return err
}

func mib(kib int64) float64 { return float64(kib) / 1024 }
