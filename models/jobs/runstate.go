package jobs

import (
	"errors"
	"sort"
	"sync"
	"time"
)

// errNotOurTurn ends a tick in which this process does not run the job:
// another replica holds its lease, or no period is due. It is neither a
// success nor a failure, and is never logged.
var errNotOurTurn = errors.New("jobs: not this process's turn")

// Outcomes of one tick of a job, as RunState counts them.
const (
	OutcomeOK      = "ok"
	OutcomeFailed  = "failed"
	OutcomeSkipped = "skipped" // another replica's turn, or nothing due
)

// RunState is what this process knows of one job's runs, for monitoring:
// cmd exports it (as Prometheus gauges) without the jobs knowing how.
// Times are on the runner's clock; zero means never.
type RunState struct {
	Name string
	// LastRun is when this process last started a run (ok or failed);
	// LastDuration how long that run took and LastOK whether it succeeded.
	LastRun      time.Time
	LastDuration time.Duration
	LastOK       bool
	// LastSuccess is when the newest successful run started.
	LastSuccess time.Time
	// Counts by outcome since the process started (Outcome* keys).
	Counts map[string]int64
}

// runStates is the runner's record of every registered job.
type runStates struct {
	mu sync.Mutex
	m  map[string]*RunState
}

func (s *runStates) register(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*RunState{}
	}
	s.m[name] = &RunState{Name: name, Counts: map[string]int64{OutcomeOK: 0, OutcomeFailed: 0, OutcomeSkipped: 0}}
}

// record notes one tick that started at start and ended after d with err.
func (s *runStates) record(name string, start time.Time, d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.m[name]
	if st == nil {
		return
	}
	switch {
	case errors.Is(err, errNotOurTurn):
		st.Counts[OutcomeSkipped]++
		return
	case err != nil:
		st.Counts[OutcomeFailed]++
	default:
		st.Counts[OutcomeOK]++
		st.LastSuccess = start
	}
	st.LastRun, st.LastDuration, st.LastOK = start, d, err == nil
}

// RunStates reports every registered job's runs in this process, by name.
// With several replicas each knows only its own runs; a dashboard takes
// the newest LastRun over the replicas.
func (r *Runner) RunStates() []RunState {
	r.states.mu.Lock()
	defer r.states.mu.Unlock()
	out := make([]RunState, 0, len(r.states.m))
	for _, st := range r.states.m {
		c := *st
		c.Counts = make(map[string]int64, len(st.Counts))
		for k, v := range st.Counts {
			c.Counts[k] = v
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
