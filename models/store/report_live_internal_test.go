package store

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

// TestLiveWeeksShareOneComputation: views that ask for the same week in
// progress while it is computed get that computation's week; one that
// asks after it ended computes afresh; a joiner that goes away stops
// waiting without failing the others.
func TestLiveWeeksShareOneComputation(t *testing.T) {
	var l liveWeeks
	key := testWeekKey
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
		d, _ := l.share(ctx, key, false, compute)
		leader <- d
	}()
	<-started
	joined := make(chan *models.WeekData)
	go func() {
		d, _ := l.share(ctx, key, false, func(context.Context) (*models.WeekData, error) { t.Error("the joiner computed"); return nil, nil })
		joined <- d
	}()
	for l.joinersOf(key) == 0 {
		runtime.Gosched()
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.share(gone, key, false, compute); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled joiner got %v, want context.Canceled", err)
	}
	other := liveKey{start: 1, end: 2, rules: models.ReportRules{BusyUtilPct: 50}}
	if d, err := l.share(ctx, other, false, compute); err != nil || d == nil {
		t.Errorf("other rules: %v, %v; want their own week", d, err)
	}
	close(release)
	a, b := <-leader, <-joined
	if a == nil || a != b {
		t.Errorf("leader got %p, joiner %p: want the same week", a, b)
	}
	if d, _ := l.share(ctx, key, false, compute); d == a {
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

// fakeClock is a clock the test moves, read by the computations' goroutines.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// TestLiveWeeksKeepADearWeek: a week in progress that took long to
// compute answers the views of the next keepMost, renewed in the
// background by the first view past five times its cost; a cheap one, a
// failed one or a small cluster's answers none after it ended.
func TestLiveWeeksKeepADearWeek(t *testing.T) {
	clock, l := keptWeeks()
	key := testWeekKey
	var runs atomic.Int32
	costing := func(cost time.Duration, err error) func(context.Context) (*models.WeekData, error) {
		return func(context.Context) (*models.WeekData, error) {
			runs.Add(1)
			clock.add(cost)
			return &models.WeekData{}, err
		}
	}
	ctx := context.Background()
	cheap, _ := l.share(ctx, key, true, costing(100*time.Millisecond, nil))
	if again, _ := l.share(ctx, key, true, costing(100*time.Millisecond, nil)); again == cheap {
		t.Error("a cheap week was kept")
	}
	dear, _ := l.share(ctx, key, true, costing(2*time.Second, nil)) // kept a minute, renewed after 10 s
	clock.add(9 * time.Second)
	before := runs.Load()
	if again, _ := l.share(ctx, key, true, costing(2*time.Second, nil)); again != dear || runs.Load() != before {
		t.Error("a view 9 s after a 2 s computation computed again; want the kept week")
	}
	clock.add(12 * time.Second)
	if again, _ := l.share(ctx, key, true, costing(10*time.Second, nil)); again != dear {
		t.Error("a view 21 s after a 2 s computation waited for a new one; want the kept week, renewed in the background")
	}
	later := waitRenewed(t, l, key, dear)
	clock.add(61 * time.Second)
	if again, _ := l.share(ctx, key, true, costing(time.Millisecond, nil)); again == later {
		t.Error("a week was kept past keepMost")
	}
	l.share(ctx, key, true, costing(time.Second, errors.New("down")))
	small, _ := l.share(ctx, key, false, costing(5*time.Second, nil))
	if again, _ := l.share(ctx, key, true, costing(time.Millisecond, nil)); again == small {
		t.Error("a dear week of a small cluster was kept")
	}
}

// TestLiveWeeksRenewInBackground: a view of a kept week past half its
// time gets it at once and starts one renewal; the views during the
// renewal get the kept week; the renewed week answers after it.
func TestLiveWeeksRenewInBackground(t *testing.T) {
	clock, l := keptWeeks()
	key := testWeekKey
	ctx := context.Background()
	var runs atomic.Int32
	release := make(chan struct{})
	compute := func(context.Context) (*models.WeekData, error) {
		if runs.Add(1) > 1 {
			<-release
		}
		clock.add(2 * time.Second)
		return &models.WeekData{}, nil
	}
	kept, _ := l.share(ctx, key, true, compute) // kept 20 s, renewed after 10
	clock.add(11 * time.Second)
	for i := 0; i < 3; i++ { // the renewal is held: none of these may wait for it
		if d, _ := l.share(ctx, key, true, compute); d != kept {
			t.Fatalf("view %d during the renewal got %p, want the kept week %p", i, d, kept)
		}
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for l.keptWeek(key) == kept && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	renewed, _ := l.share(ctx, key, true, compute)
	if renewed == kept || renewed == nil {
		t.Error("after the renewal a view got the old week")
	}
	if got := runs.Load(); got != 2 {
		t.Errorf("%d computations, want 2 (the first, one renewal)", got)
	}
}

// waitRenewed waits for the renewal of key's kept week old and returns
// the renewed one.
func waitRenewed(t *testing.T, l *liveWeeks, key liveKey, old *models.WeekData) *models.WeekData {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.keptWeek(key) == old && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	d := l.keptWeek(key)
	if d == old || d == nil {
		t.Fatalf("kept week %p not renewed (now %p)", old, d)
	}
	return d
}

// TestLiveWeeksRenewDueForTheWarmJob: the warm job renews a kept week
// only when its renewal is due, in its own goroutine, so that a view
// after a quiet spell finds a fresh one and waits for nothing; a cheap
// or never-kept week it leaves alone, and after a failed renewal the kept
// week answers still.
func TestLiveWeeksRenewDueForTheWarmJob(t *testing.T) {
	clock, l := keptWeeks()
	key := testWeekKey
	ctx := context.Background()
	var runs atomic.Int32
	costing := func(cost time.Duration, err error) func(context.Context) (*models.WeekData, error) {
		return func(context.Context) (*models.WeekData, error) {
			runs.Add(1)
			clock.add(cost)
			return &models.WeekData{}, err
		}
	}
	if did, _ := l.renewDue(ctx, key, costing(time.Second, nil)); did || runs.Load() != 0 {
		t.Error("renewed a week never computed")
	}
	kept, _ := l.share(ctx, key, true, costing(2*time.Second, nil)) // renewal due after 10 s
	clock.add(5 * time.Second)
	if did, _ := l.renewDue(ctx, key, costing(time.Second, nil)); did || runs.Load() != 1 {
		t.Error("renewed a kept week 5 s after a 2 s computation; want it left until 10 s")
	}
	clock.add(6 * time.Second)
	if did, err := l.renewDue(ctx, key, costing(time.Second, errors.New("down"))); !did || err == nil {
		t.Errorf("a due renewal that failed: did %v, err %v; want true and the error", did, err)
	}
	if d := l.keptWeek(key); d != kept {
		t.Error("after a failed renewal the kept week is gone")
	}
	clock.add(50 * time.Second) // 69 s after the first ended: it answers no view now
	if did, err := l.renewDue(ctx, key, costing(2*time.Second, nil)); !did || err != nil {
		t.Errorf("a due renewal: did %v, err %v; want true, nil", did, err)
	}
	before := runs.Load()
	renewed, _ := l.share(ctx, key, true, costing(time.Hour, nil))
	if renewed == kept || runs.Load() != before {
		t.Error("the view after the warm job's renewal computed or got the old week; want the renewed one at once")
	}
	clock.add(11 * time.Second)
	if did, _ := l.renewDue(ctx, key, costing(time.Millisecond, nil)); !did {
		t.Error("a due renewal did not run")
	}
	if did, _ := l.renewDue(ctx, key, costing(time.Millisecond, nil)); did {
		t.Error("renewed a week that became cheap and was not kept")
	}
}

func (l *liveWeeks) keptWeek(key liveKey) *models.WeekData {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.calls[key]; ok {
		select {
		case <-c.done:
			return c.d
		default:
		}
	}
	return nil
}

// TestLiveWeeksKeepAWeekOfAFleet: at a large cluster a week that cost
// 100 ms, cheap alone but dear when each view pays it on a loaded
// machine, is kept with the default thresholds; one of 10 ms is not.
func TestLiveWeeksKeepAWeekOfAFleet(t *testing.T) {
	clock := newFakeClock()
	l := newLiveWeeks()
	l.now = clock.now
	key := testWeekKey
	ctx := context.Background()
	costing := func(cost time.Duration) func(context.Context) (*models.WeekData, error) {
		return func(context.Context) (*models.WeekData, error) { clock.add(cost); return &models.WeekData{}, nil }
	}
	d, _ := l.share(ctx, key, true, costing(100*time.Millisecond))
	clock.add(200 * time.Millisecond)
	if again, _ := l.share(ctx, key, true, costing(100*time.Millisecond)); again != d {
		t.Error("a 100 ms week of a large cluster was not kept")
	}
	other := liveKey{start: 3, end: 4, rules: models.DefaultReportRules}
	d, _ = l.share(ctx, other, true, costing(10*time.Millisecond))
	if again, _ := l.share(ctx, other, true, costing(10*time.Millisecond)); again == d {
		t.Error("a 10 ms week was kept")
	}
}

// testWeekKey is the week the tests of liveWeeks compute.
var testWeekKey = liveKey{start: 1, end: 2, rules: models.DefaultReportRules}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)}
}

// keptWeeks is a liveWeeks on a fake clock that keeps a week of 250 ms or
// more for a minute.
func keptWeeks() (*fakeClock, *liveWeeks) {
	clock := newFakeClock()
	return clock, &liveWeeks{keepAbove: 250 * time.Millisecond, keepMost: time.Minute, now: clock.now}
}
