package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// p99Limit is the service level of an agent request (the issue's), the
// default of -p99.
const p99Limit = 250 * time.Millisecond

// step is what one level of the ramp measured over its window.
type step struct {
	gpus, nodes      int
	window           time.Duration
	lat              map[string][]time.Duration
	errors           map[string]int
	lastError        map[string]string
	made, taken      int64 // usage records spooled and taken in the window
	lag              time.Duration
	portal, pg, self time.Duration // CPU in the window
	pgKnown          bool
	held             bool
	why              string
}

// cpuNow reads every CPU figure at one moment.
func (r *ramp) cpuNow(ctx context.Context) (portal, pg, self time.Duration, pgKnown bool) {
	for _, rep := range r.f.replicas {
		d, _ := procCPU(rep.Cmd.Process.Pid)
		portal += d
	}
	pg, pgKnown = r.pg.total(ctx)
	return portal, pg, selfCPU(), pgKnown
}

type ramp struct {
	f        *fleet
	pg       *pgCPU
	o        *options
	out      io.Writer
	lagLimit time.Duration
	crowd    *crowd // nil: -crowd 0
}

// measure runs gpus' worth of nodes: it starts or stops nodes, lets the
// new ones start over the warm-up, then measures a window of o.step.
func (r *ramp) measure(ctx context.Context, gpus int) (step, error) {
	n := gpus / nodeGPUs
	if err := r.f.enrol(ctx, n, r.o.enrolWorkers); err != nil {
		return step{}, err
	}
	if r.o.align {
		r.o.alignClock(time.Now().Add(r.o.warmup + time.Second))
	}
	r.f.run(ctx, n, r.o.warmup)
	if err := sleep(ctx, r.o.warmup); err != nil {
		return step{}, err
	}
	// What a level that broke left unsent is sent before this one counts.
	for deadline := time.Now().Add(3 * time.Minute); r.f.lag() > r.lagLimit && time.Now().Before(deadline); {
		if err := sleep(ctx, time.Second); err != nil {
			return step{}, err
		}
	}
	r.f.rec.take()
	s := step{gpus: n * nodeGPUs, nodes: n}
	made0, taken0 := r.f.tally.made.Load(), r.f.tally.taken.Load()
	p0, g0, s0, _ := r.cpuNow(ctx)
	start := time.Now()
	gathered := make(chan struct{})
	crowdCtx, stopCrowd := context.WithCancel(ctx)
	defer stopCrowd()
	go func() {
		defer close(gathered)
		if r.crowd != nil {
			r.crowd.during(crowdCtx)
		}
	}()
	for end := start.Add(r.o.step); time.Now().Before(end); {
		if err := sleep(ctx, min(5*time.Second, time.Until(end))); err != nil {
			return step{}, err
		}
		s.lag = max(s.lag, r.f.lag())
	}
	stopCrowd()
	<-gathered
	s.window = time.Since(start)
	p1, g1, s1, known := r.cpuNow(ctx)
	s.portal, s.pg, s.self, s.pgKnown = p1-p0, g1-g0, s1-s0, known
	s.made, s.taken = r.f.tally.made.Load()-made0, r.f.tally.taken.Load()-taken0
	s.lat, s.errors, s.lastError = r.f.rec.take()
	s.judge(r.o.p99, r.lagLimit)
	return s, nil
}

// judge decides whether the step held the service levels: every agent
// request kind's p99 within p99, no failure of any request, and
// ingest measured and keeping up (no usage minute waiting longer than
// lagLimit).
func (s *step) judge(p99, lagLimit time.Duration) {
	var why []string
	for _, k := range sortedKinds(s.lat) {
		if p := quantile(s.lat[k], 0.99); !strings.HasPrefix(k, "page") && p > p99 {
			why = append(why, fmt.Sprintf("%s p99 %.0f ms", k, ms(p)))
		}
		if s.errors[k] > 0 {
			why = append(why, fmt.Sprintf("%d %s errors (%s)", s.errors[k], k, s.lastError[k]))
		}
	}
	if s.lag > lagLimit {
		why = append(why, fmt.Sprintf("ingest %.0f s behind", s.lag.Seconds()))
	}
	// A window that saw no usage delivery measured no ingest at all: it
	// holds nothing (a -step-seconds shorter than the agents' minute).
	if len(s.lat["usage"]) == 0 {
		why = append(why, "no usage batch delivered in the window: ingest not measured (use -step-seconds ≥ 60)")
	}
	s.held, s.why = len(why) == 0, strings.Join(why, "; ")
}

func sortedKinds[T any](m map[string]T) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// perK is a CPU time over the window as a share of one core per 1,000 GPUs.
func (s step) perK(d time.Duration) float64 {
	return 100 * d.Seconds() / s.window.Seconds() / (float64(s.gpus) / 1000)
}

func (s step) agentCalls() (n int, worst time.Duration) {
	for k, l := range s.lat {
		if !strings.HasPrefix(k, "page") {
			n += len(l)
			worst = max(worst, quantile(l, 0.99))
		}
	}
	return n, worst
}

const stepHeader = "| GPUs | nodes | agent req/s | worst agent p99 ms | errors | usage records/min made / taken | max ingest lag s | portal CPU %/1k GPUs | PostgreSQL CPU %/1k GPUs | fleetbench CPU % | held |\n|---|---|---|---|---|---|---|---|---|---|---|\n"

func (s step) row() string {
	n, worst := s.agentCalls()
	errs := 0
	for _, e := range s.errors {
		errs += e
	}
	pg := "–"
	if s.pgKnown {
		pg = fmt.Sprintf("%.1f", s.perK(s.pg))
	}
	held := "yes"
	if !s.held {
		held = "no: " + s.why
	}
	mins := s.window.Minutes()
	return fmt.Sprintf("| %d | %d | %.0f | %.0f | %d | %.0f / %.0f | %.0f | %.1f | %s | %.0f | %s |\n", s.gpus, s.nodes, float64(n)/s.window.Seconds(),
		ms(worst), errs, float64(s.made)/mins, float64(s.taken)/mins, s.lag.Seconds(), s.perK(s.portal), pg,
		100*s.self.Seconds()/s.window.Seconds(), held)
}

// kinds is the per-kind table of a step.
func (s step) kinds() string {
	var b strings.Builder
	b.WriteString("| request | count | p50 ms | p99 ms | errors |\n|---|---|---|---|---|\n")
	for _, k := range sortedKinds(s.lat) {
		l := s.lat[k]
		fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %d |\n", k, len(l), ms(quantile(l, 0.5)), ms(quantile(l, 0.99)), s.errors[k])
	}
	return b.String()
}

// usageBytes is the size of the usage minute tables, every partition and
// index included, and the GPU-minutes in them.
func usageBytes(ctx context.Context, db *sql.DB) (bytes, rows int64, err error) {
	err = db.QueryRowContext(ctx, `SELECT coalesce(sum(pg_total_relation_size(t.relid)), 0),
		(SELECT count(*) FROM gpu_usage_minutes)
		FROM unnest(ARRAY['gpu_usage_minutes', 'gpu_user_usage_minutes']) AS n, pg_partition_tree(n::regclass) AS t`).Scan(&bytes, &rows)
	return bytes, rows, err
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
