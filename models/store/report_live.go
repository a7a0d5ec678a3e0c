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
// its own request); nothing is kept once it is done, so no view ever
// reads a week older than the computation it joined.
type liveWeeks struct {
	mu    sync.Mutex
	calls map[liveKey]*liveCall
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
}

// share runs compute for key unless one runs already, whose result it
// then waits for. compute runs without the caller's cancellation, so that
// a leader who goes away does not fail those who joined it; a joiner
// stops waiting when its own ctx ends.
func (l *liveWeeks) share(ctx context.Context, key liveKey, compute func(context.Context) (*models.WeekData, error)) (*models.WeekData, error) {
	if l == nil {
		return compute(ctx)
	}
	l.mu.Lock()
	if c, ok := l.calls[key]; ok {
		c.joiners++
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
	c.d, c.err = compute(context.WithoutCancel(ctx))
	l.mu.Lock()
	delete(l.calls, key)
	l.mu.Unlock()
	close(c.done)
	return c.d, c.err
}

// liveWeek is week w in progress as of now, shared with the views that
// ask for it while it is computed (liveWeeks).
func (db *DB) liveWeek(ctx context.Context, w models.Week, now time.Time, rules models.ReportRules) (*models.WeekData, error) {
	key := liveKey{start: w.Start.Unix(), end: w.End.Unix(), rules: rules}
	return db.live.share(ctx, key, func(ctx context.Context) (*models.WeekData, error) {
		return db.reportWeek(ctx, w, now, rules, true)
	})
}
