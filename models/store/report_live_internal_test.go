package store

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/gpubook/gpubook/models"
)

// TestLiveWeeksShareOneComputation: views that ask for the same week in
// progress while it is computed get that computation's week; one that
// asks after it ended computes afresh; a joiner that goes away stops
// waiting without failing the others.
func TestLiveWeeksShareOneComputation(t *testing.T) {
	var l liveWeeks
	key := liveKey{start: 1, end: 2, rules: models.DefaultReportRules}
	var runs atomic.Int32
	release, started := make(chan struct{}), make(chan struct{})
	compute := func(ctx context.Context) (*models.WeekData, error) {
		if runs.Add(1) == 1 {
			close(started)
			<-release
		}
		return &models.WeekData{}, nil
	}
	ctx := context.Background()
	leader := make(chan *models.WeekData)
	go func() {
		d, _ := l.share(ctx, key, compute)
		leader <- d
	}()
	<-started
	joined := make(chan *models.WeekData)
	go func() {
		d, _ := l.share(ctx, key, func(context.Context) (*models.WeekData, error) { t.Error("the joiner computed"); return nil, nil })
		joined <- d
	}()
	for l.joinersOf(key) == 0 {
		runtime.Gosched()
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.share(gone, key, compute); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled joiner got %v, want context.Canceled", err)
	}
	other := liveKey{start: 1, end: 2, rules: models.ReportRules{BusyUtilPct: 50}}
	if d, err := l.share(ctx, other, compute); err != nil || d == nil {
		t.Errorf("other rules: %v, %v; want their own week", d, err)
	}
	close(release)
	a, b := <-leader, <-joined
	if a == nil || a != b {
		t.Errorf("leader got %p, joiner %p: want the same week", a, b)
	}
	if d, _ := l.share(ctx, key, compute); d == a {
		t.Error("a view after the computation ended got its week, want a new one")
	}
	if got := runs.Load(); got != 3 {
		t.Errorf("%d computations, want 3 (the leader's, other rules', the later view's)", got)
	}
}

func (l *liveWeeks) joinersOf(key liveKey) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.calls[key]; ok {
		return c.joiners
	}
	return 0
}
