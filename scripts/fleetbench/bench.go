package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// bench sets up the portal and ramps the fleet; it returns the largest
// level held (nil when none did).
func bench(ctx context.Context, o *options, out io.Writer) (*step, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	cad := o.cad
	if cad == nil {
		c, err := agentCadence(root)
		if err != nil {
			return nil, err
		}
		cad = &c
	}
	if o.warmup == 0 {
		o.warmup = cad.heartbeat
	}
	dir, err := os.MkdirTemp("", "fleetbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin, err := buildServer(ctx, root, dir)
	if err != nil {
		return nil, err
	}
	dbURL, drop, err := storetest.ScratchPostgres(ctx, o.pgAdmin, "fleetbench")
	if err != nil {
		return nil, err
	}
	defer drop()
	var replicas []*replica
	defer func() {
		for _, r := range replicas {
			r.stop()
		}
	}()
	for range o.replicas { // the first migrates the database
		r, err := startReplica(ctx, bin, dbURL)
		if err != nil {
			return nil, err
		}
		replicas = append(replicas, r)
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return ramped(ctx, o, *cad, db, replicas, dbURL, out)
}

// ramped runs the fleet, the browsers and the ramp on a started portal.
func ramped(ctx context.Context, o *options, cad cadence, db *store.DB, replicas []*replica, dbURL string, out io.Writer) (*step, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f, err := newFleet(ctx, db, replicas, cad, max(o.people, o.users), o.now)
	if err != nil {
		return nil, err
	}
	defer f.run(ctx, 0, 0)
	if o.slow != "" {
		w, err := os.Create(o.slow)
		if err != nil {
			return nil, err
		}
		defer w.Close()
		f.rec.slow, f.rec.slowOver = w, o.p99
	}
	admin, err := sql.Open("pgx", o.pgAdmin)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	u, _ := url.Parse(dbURL)
	pg := newPGCPU(admin, strings.TrimPrefix(u.Path, "/"))
	go pg.run(ctx)
	for i := range o.users {
		b := f.newBrowser(i, o.think)
		b.noUsage = o.quietUsage
		go b.run(ctx)
	}
	r := &ramp{f: f, pg: pg, o: o, out: out, lagLimit: cad.sample + cad.spread + cad.deliver + 10*time.Second}
	if o.crowd > 0 {
		if r.crowd = f.newCrowd(o.crowd, o.think); !r.crowd.signIn(ctx) {
			return nil, ctx.Err()
		}
	}
	quiet := ""
	if o.quietUsage {
		quiet = ", who load no usage page"
	}
	fmt.Fprintf(out, "fleetbench: %d replica(s), %d browser users (think %s%s), %d usage viewers at once every %s, agent intervals: sample %s, sync %s, deliver %s (usage spread over %s), heartbeat %s; each level %s after a %s warm-up\n\n",
		o.replicas, o.users, o.think, quiet, o.crowd, crowdEvery, cad.sample, cad.sync, cad.deliver, cad.spread, cad.heartbeat, o.step, o.warmup)
	fmt.Fprint(out, stepHeader)
	best, err := r.climb(ctx)
	if err != nil {
		return nil, err
	}
	return best, report(ctx, db.SQL, best, o, out)
}

// climb doubles the fleet until a level breaks or -max-gpus held, then
// bisects between the largest held and the smallest broken.
func (r *ramp) climb(ctx context.Context) (*step, error) {
	var best *step
	good, bad := 0, 0
	n := roundNodes(min(r.o.startGPUs, r.o.maxGPUs))
	for {
		s, err := r.measure(ctx, n)
		if err != nil {
			return nil, err
		}
		fmt.Fprint(r.out, s.row())
		if r.o.kinds {
			fmt.Fprintf(r.out, "\n%s\n%s", s.kinds(), stepHeader)
		}
		if s.held {
			good, best = n, &s
		} else {
			bad = n
		}
		if bad == 0 {
			if n >= r.o.maxGPUs {
				return best, nil
			}
			n = roundNodes(min(2*n, r.o.maxGPUs))
			continue
		}
		if bad-good <= max(nodeGPUs, int(r.o.precision*float64(bad))) {
			return best, nil
		}
		n = roundNodes((good + bad) / 2)
	}
}

func roundNodes(gpus int) int { return max(nodeGPUs, gpus/nodeGPUs*nodeGPUs) }

// report prints the largest level held with its latencies, CPU and the
// bytes stored per GPU-day over the whole run.
func report(ctx context.Context, db *sql.DB, best *step, o *options, out io.Writer) error {
	bytes, rows, err := usageBytes(ctx, db)
	if err != nil {
		return err
	}
	if best == nil {
		fmt.Fprintf(out, "\nno level held, not even %d GPUs\n", roundNodes(o.startGPUs))
		return nil
	}
	fmt.Fprintf(out, "\nlargest fleet held: %d GPUs (%d nodes) on %d replica(s) with %d browser users, for %.0f s\n\n%s\n",
		best.gpus, best.nodes, o.replicas, o.users, best.window.Seconds(), best.kinds())
	pg := "unknown (the backends' /proc entries could not be read)"
	if best.pgKnown {
		pg = fmt.Sprintf("%.1f %% of a core", best.perK(best.pg))
	}
	fmt.Fprintf(out, "CPU per 1,000 GPUs: portal %.1f %% of a core, PostgreSQL backends %s (fleetbench itself: %.0f %% of a core in all)\n",
		best.perK(best.portal), pg, 100*best.self.Seconds()/best.window.Seconds())
	if rows > 0 {
		fmt.Fprintf(out, "bytes stored per GPU-day: %.0f (usage minute tables with their indexes: %d bytes for %d GPU-minutes)\n",
			float64(bytes)/(float64(rows)/1440), bytes, rows)
	}
	return nil
}
