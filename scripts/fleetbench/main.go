// Command fleetbench finds how many GPUs one gpubook portal replica
// carries. It builds and starts the real server (`gpubook serve`, one or
// more replicas on one scratch PostgreSQL database on 127.0.0.1), enrols
// simulated 8-GPU nodes through the real enrolment, and runs for each
// node the real agent's sampler, aggregator, detector, batching and
// portal client (agent/client) at the agent's default intervals
// (agent/deploy/agent.conf), while browser-like users sign in and load
// the calendar, status and usage pages and book, and a crowd of usage
// viewers loads usage pages all at once every 15 s. It ramps the fleet,
// doubling and then bisecting, until a service level breaks: an agent
// request kind's p99 above 250 ms, any failed request, or ingest falling
// behind (a usage minute still unsent longer than one sample, the usage
// spread and one delivery interval, plus 10 s, after it ended). It prints a row per
// level and the largest fleet held with its latencies, the portal's and
// PostgreSQL's CPU per 1,000 GPUs and the bytes stored per GPU-day.
//
//	go run ./scripts/fleetbench -max-gpus 50000 -users 50 -step-seconds 90
//
// It only ever talks to 127.0.0.1, starts at most -max-gpus/8 nodes and
// runs each level for -step-seconds after a warm-up; it drops its
// database afterwards.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

type options struct {
	maxGPUs, startGPUs, users, people, replicas, enrolWorkers int
	crowd                                                     int  // -crowd: usage viewers at once
	quietUsage                                                bool // -quiet-usage: only the crowd loads usage pages
	step, warmup, think, p99                                  time.Duration
	precision                                                 float64
	pgAdmin                                                   string
	slow                                                      string   // -slow: the file of requests over p99
	cad                                                       *cadence // nil: the agent's defaults
	align                                                     bool     // the test's: a minute ends early in each window
	kinds                                                     bool     // print every level's kinds table
	ahead                                                     atomic.Int64
}

// alignClock sets the nodes' clock ahead so that a minute ends at t.
func (o *options) alignClock(t time.Time) {
	o.ahead.Store(int64(t.Truncate(time.Minute).Add(time.Minute).Sub(t)))
}

func (o *options) now() time.Time { return time.Now().Add(time.Duration(o.ahead.Load())) }

// generatorGC is the load generator's GOGC. Thousands of simulated
// agents keep a heap of 150–300 MB that the default (100) collected every
// few seconds with up to 0.7 s of allocation assists, stalling every
// simulated node at once: at 75,000 GPUs the requests over the service
// level came in bursts that matched those collections, not the portal's
// (GODEBUG=gctrace=1). The portal it starts keeps Go's default.
const generatorGC = 800

func main() {
	debug.SetGCPercent(generatorGC)
	// Interrupted, it still stops its servers and drops its database.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := run(ctx, os.Args, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		stop()
		os.Exit(1)
	}
}

func parse(args []string) (*options, error) {
	fs := flag.NewFlagSet("fleetbench", flag.ContinueOnError)
	o := &options{}
	fs.IntVar(&o.maxGPUs, "max-gpus", 50000, "the largest fleet tried, in GPUs (8 per node)")
	fs.IntVar(&o.startGPUs, "start-gpus", 1000, "the first level, in GPUs")
	fs.IntVar(&o.users, "users", 50, "browser users signed in at once")
	fs.IntVar(&o.people, "people", 2000, "users the portal knows; each node's three users are drawn from them")
	fs.IntVar(&o.crowd, "crowd", 8, "usage viewers who load usage pages all at the same moment every 15 s of each level's window (0: none)")
	fs.BoolVar(&o.quietUsage, "quiet-usage", false, "the browser users load no usage page, only the crowd does: its first gathering is then the first usage view since the portal started")
	fs.IntVar(&o.replicas, "replicas", 1, "portal replicas on the one database; nodes and users spread over them")
	fs.IntVar(&o.enrolWorkers, "enrol-workers", 8, "nodes created and enrolled at once between levels")
	fs.DurationVar(&o.think, "think", 20*time.Second, "a browser user's mean pause between clicks")
	fs.DurationVar(&o.warmup, "warmup", 0, "how long new nodes take to start before a level is measured (0: the agent's heartbeat interval)")
	fs.DurationVar(&o.p99, "p99", p99Limit, "the service level: the most an agent request kind's p99 may take")
	fs.StringVar(&o.slow, "slow", "", "write each request that takes longer than -p99 to `file`: when it ended, its kind and duration (to see whether slow requests come together)")
	fs.BoolVar(&o.kinds, "kinds", false, "print every level's latencies by request kind, not only the largest held's")
	steps := fs.Int("step-seconds", 90, "how long each level is measured")
	fs.Float64Var(&o.precision, "precision", 0.125, "bisect until the fleet held is within this fraction of the one that broke")
	fs.StringVar(&o.pgAdmin, "pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server (127.0.0.1 only)")
	if err := fs.Parse(args[1:]); err != nil {
		return nil, err
	}
	o.step = time.Duration(*steps) * time.Second
	if !strings.Contains(o.pgAdmin, "@127.0.0.1:") {
		return nil, fmt.Errorf("-pg must be on 127.0.0.1")
	}
	if o.maxGPUs < nodeGPUs || o.startGPUs < nodeGPUs || o.replicas < 1 || o.users < 0 || o.crowd < 0 || o.step <= 0 || o.enrolWorkers < 1 {
		return nil, fmt.Errorf("-max-gpus and -start-gpus need one node (%d GPUs), -replicas one, -step-seconds one", nodeGPUs)
	}
	return o, nil
}

// run parses the flags and ramps; it returns the largest fleet held.
func run(ctx context.Context, args []string, out io.Writer) (*step, error) {
	o, err := parse(args)
	if err != nil {
		return nil, err
	}
	return bench(ctx, o, out)
}

// buildServer builds cmd/gpubook into dir.
func buildServer(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "gpubook")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/gpubook")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build the server: %w", err)
	}
	return bin, nil
}
