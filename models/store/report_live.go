package store

import (
	"context"
	"sync"
	"time"

	"github.com/gpubook/gpubook/models"
)

// liveWeeks shares one computation of a week in progress among the page
// views that ask for it while it runs. Every usage page (my usage, a
// team's, the cluster's) reads the whole week for every user, so eight
// people opening theirs at once made eight identical computations fight
// for the same cores: 8 viewers at 512 GPUs took seconds each. A view
// that arrives while one runs waits for it and gets its week, as of the
// moment that one began (the time it has been running, at most, before
// its own request).
//
// A cheap week is not kept once it is done, so a small lab's views never
// read a week older than the computation they joined. A dear one is: at a
// large lab the week in progress reads every GPU's minutes since the last
// rolled hour (16,000 GPUs: a million rows, seconds), and fifty people
// clicking made it run back to back. At a cluster of liveKeepGPUs or more,
// a computation that took at least keepAbove is handed to the views that
// come within keepMost (a minute: usage arrives by the minute) after it
// ended; the page says the time it is as of. A view past five times its
// cost (half of ten times, at most half of keepMost) renews it in the
// background (share) and gets the kept week meanwhile, so the renewals
// take a sixth of the time or less whatever the views' rate (a week that
// costs over 6 s is renewed each half minute), and a view waits only when
// none came for keepMost: at 50,000 GPUs under fleetbench a week kept for
// ten times its cost alone left views to compute it (p99 2.2 s; 23 ms
// served a minute, docs/performance.md). Each replica's warm job keeps the
// week the pages open on too (WarmUsagePages), so that the first view
// after a start or a quiet spell does not wait either. The cluster's size, not the cost
// alone, decides, so that a small lab on a loaded machine still sees its
// own booking at once.
type liveWeeks struct {
	mu    sync.Mutex
	calls map[liveKey]*liveCall
	// keepAbove and keepMost are liveKeepAbove and liveKeepMost but in
	// tests; now is time.Now but in tests.
	keepAbove, keepMost time.Duration
	now                 func() time.Time
	// keepGPUs is liveKeepGPUs but in tests; computed counts the
	// computations run, under mu, for the tests of the warm job.
	keepGPUs int
	computed int64
}

// What a week in progress must cost to be kept, and the longest it is.
// At 50,000 GPUs under fleetbench a week that cost just under 250 ms
// was not kept, so the next views computed it again, at 265–324 ms
// (p99 325 ms); a view computes only a week that costs under 50 ms.
const (
	liveKeepGPUs  = 1000
	liveKeepAbove = 50 * time.Millisecond
	liveKeepMost  = time.Minute
	liveKeepTimes = 10
)

func newLiveWeeks() *liveWeeks {
	return &liveWeeks{keepAbove: liveKeepAbove, keepMost: liveKeepMost, now: time.Now, keepGPUs: liveKeepGPUs}
}

// liveKey is what makes two computations the same: the week (its bounds
// carry the cluster's zone) and the rules.
type liveKey struct {
	start, end int64
	rules      models.ReportRules
}

// liveCall is one computation; d and err are set before done closes.
type liveCall struct {
	done    chan struct{}
	d       *models.WeekData
	err     error
	joiners int // under liveWeeks.mu
	// A kept one's end (keepMost after it ended), when its renewal is
	// due, and whether it runs; under liveWeeks.mu.
	until, renew time.Time
	renewing     bool
}

func (l *liveWeeks) clock() time.Time {
	if l.now == nil {
		return time.Now()
	}
	return l.now()
}

// fresh tells whether c can answer a view now: it runs, or it is kept.
func (l *liveWeeks) fresh(c *liveCall) bool {
	select {
	case <-c.done:
		return l.clock().Before(c.until)
	default:
		return true
	}
}

// share runs compute for key unless one runs already, whose result it
// then waits for, or one is kept. compute runs without the caller's
// cancellation, so that a leader who goes away does not fail those who
// joined it; a joiner stops waiting when its own ctx ends. A view of a
// kept week past half its time renews it in the background: the views
// meanwhile get the kept one, so at a large lab only the first view after
// a start waits for the computation.
func (l *liveWeeks) share(ctx context.Context, key liveKey, keep bool, compute func(context.Context) (*models.WeekData, error)) (*models.WeekData, error) {
	if l == nil {
		return compute(ctx)
	}
	l.mu.Lock()
	if c, ok := l.calls[key]; ok && l.fresh(c) {
		c.joiners++
		if l.due(c) {
			c.renewing = true
			go l.run(ctx, key, &liveCall{done: make(chan struct{})}, c, keep, compute)
		}
		l.mu.Unlock()
		select {
		case <-c.done:
			return c.d, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c := &liveCall{done: make(chan struct{})}
	if l.calls == nil {
		l.calls = map[liveKey]*liveCall{}
	}
	l.calls[key] = c
	l.mu.Unlock()
	l.run(ctx, key, c, nil, keep, compute)
	return c.d, c.err
}

// due tells whether kept week c should be renewed now.
func (l *liveWeeks) due(c *liveCall) bool {
	select {
	case <-c.done:
		return !c.renew.IsZero() && !c.renewing && !l.clock().Before(c.renew)
	default:
		return false
	}
}

// run computes c, the computation of key or the renewal of old, and
// settles it: kept (in old's place), or forgotten.
func (l *liveWeeks) run(ctx context.Context, key liveKey, c, old *liveCall, keep bool, compute func(context.Context) (*models.WeekData, error)) {
	began := l.clock()
	c.d, c.err = compute(context.WithoutCancel(ctx))
	ended := l.clock()
	l.mu.Lock()
	l.computed++
	switch cost := ended.Sub(began); {
	case keep && c.err == nil && l.keepAbove > 0 && cost >= l.keepAbove:
		span := min(liveKeepTimes*cost, l.keepMost)
		c.until, c.renew = ended.Add(l.keepMost), ended.Add(span/2)
		if old == nil || l.calls[key] == old {
			l.calls[key] = c
		}
	case old == nil:
		if l.calls[key] == c {
			delete(l.calls, key)
		}
	case c.err == nil:
		if l.calls[key] == old { // cheap now: the next view computes afresh
			delete(l.calls, key)
		}
	default: // the kept week answers until its end; a later view tries again
		old.renewing = false
	}
	l.mu.Unlock()
	close(c.done)
}

// renewDue renews key's kept week in the caller's goroutine if its
// renewal is due and none runs, and tells whether it did and how the
// renewal failed: the warm job's way to renew it before it ends, with no
// view waiting. A week that is not kept (a cheap one, a small cluster's)
// is left alone; after a failure the kept one answers until its end.
func (l *liveWeeks) renewDue(ctx context.Context, key liveKey, compute func(context.Context) (*models.WeekData, error)) (bool, error) {
	if l == nil {
		return false, nil
	}
	l.mu.Lock()
	c, ok := l.calls[key]
	if !ok || !l.due(c) {
		l.mu.Unlock()
		return false, nil
	}
	c.renewing = true
	l.mu.Unlock()
	r := &liveCall{done: make(chan struct{})}
	l.run(ctx, key, r, c, true, compute)
	return true, r.err
}

// liveWeek is week w in progress as of now, shared with the views that
// ask for it while it is computed (liveWeeks).
func (db *DB) liveWeek(ctx context.Context, w models.Week, now time.Time, rules models.ReportRules) (*models.WeekData, error) {
	key := liveKeyOf(w, rules)
	keep, err := db.keepsLiveWeeks(ctx)
	if err != nil {
		return nil, err
	}
	return db.live.share(ctx, key, keep, db.liveCompute(w, now, rules))
}

func liveKeyOf(w models.Week, rules models.ReportRules) liveKey {
	return liveKey{start: w.Start.Unix(), end: w.End.Unix(), rules: rules}
}

// liveCompute computes week w in progress as of now.
func (db *DB) liveCompute(w models.Week, now time.Time, rules models.ReportRules) func(context.Context) (*models.WeekData, error) {
	return func(ctx context.Context) (*models.WeekData, error) {
		return db.reportWeek(ctx, w, now, rules, true)
	}
}

// keepsLiveWeeks tells whether the cluster is large enough (liveKeepGPUs)
// for its dear weeks in progress to be kept.
func (db *DB) keepsLiveWeeks(ctx context.Context) (bool, error) {
	gpus, err := db.GPUs(ctx)
	if err != nil {
		return false, err
	}
	return db.live != nil && len(gpus) >= db.live.keepGPUs, nil
}
