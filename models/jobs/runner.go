// Package jobs schedules gpubook's background work inside the server
// process: cmd registers what runs when (the outbox worker of models/mail,
// the weekly reports of models/reports, reminders, expiry). Jobs coordinate
// through leases in the database, so several gpubook processes on one
// PostgreSQL share the work without running a period twice.
package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
)

// Store is what the jobs need from the database: leases.
type Store interface {
	models.LeaseStore
}

// Config holds the runner's dependencies and tuning; zero values take the defaults.
type Config struct {
	Store  Store
	Clock  clockwork.Clock
	Logger *slog.Logger
	Owner  string // who holds leases: NewOwner() when empty

	// JobLease is the lease of Register and RegisterPeriodic jobs (1 min),
	// renewed every third of it while a run lasts: a replica that dies
	// holds its jobs for at most this long.
	JobLease time.Duration
	// PeriodCheck is how often periodic jobs look for a due period, and
	// the longest a Register job waits between checks (1 min): a lease
	// that ran out is taken over within it (CheckEvery).
	PeriodCheck time.Duration
	// LockRetry is how soon a Register job that failed on a held lock
	// (models.ErrLockBusy) is due again (RetryAfterLockBusy, 30 s).
	LockRetry time.Duration
	// JobTimeout bounds one run of a Register or RegisterEverywhere job
	// (15 min, longer than the outbox's send lease); PeriodTimeout one run
	// of a periodic job (1 h: a week's reports for a large cluster). A run
	// past it is cancelled and its lease released.
	JobTimeout, PeriodTimeout time.Duration
}

// Runner owns the scheduler and the jobs on it.
type Runner struct {
	cfg    Config
	sched  gocron.Scheduler
	log    *slog.Logger
	states runStates
	due    dueTimes
}

func (c *Config) defaults() {
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Owner == "" {
		c.Owner = NewOwner()
	}
	c.JobLease = or(c.JobLease, time.Minute)
	c.PeriodCheck = or(c.PeriodCheck, time.Minute)
	c.LockRetry = or(c.LockRetry, RetryAfterLockBusy)
	c.JobTimeout = or(c.JobTimeout, 15*time.Minute)
	c.PeriodTimeout = or(c.PeriodTimeout, time.Hour)
}

func or(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// NewOwner names this process for leases: host, pid and a random suffix,
// so that a restarted process on the same host is a different owner.
func NewOwner() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	rand.Read(b)
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b))
}

// New builds the runner; cmd registers the jobs and Run starts them.
func New(cfg Config) (*Runner, error) {
	if cfg.Store == nil {
		return nil, errors.New("jobs: no store")
	}
	cfg.defaults()
	s, err := gocron.NewScheduler(gocron.WithClock(cfg.Clock), gocron.WithStopTimeout(30*time.Second))
	if err != nil {
		return nil, fmt.Errorf("jobs: scheduler: %w", err)
	}
	return &Runner{cfg: cfg, sched: s, log: cfg.Logger.With("owner", cfg.Owner)}, nil
}

// Owner is the name this runner holds leases under.
func (r *Runner) Owner() string { return r.cfg.Owner }

// Run starts the jobs (each runs once at once, which catches up what was
// missed while the server was down) and stops them when ctx ends, waiting
// for running jobs to finish.
func (r *Runner) Run(ctx context.Context) error {
	r.sched.Start()
	r.log.Info("background jobs started", "jobs", len(r.sched.Jobs()))
	<-ctx.Done()
	if err := r.sched.Shutdown(); err != nil {
		return fmt.Errorf("jobs: shutdown: %w", err)
	}
	r.log.Info("background jobs stopped")
	return nil
}

// RegisterEverywhere schedules fn every interval without a lease: it runs
// in every process. Only for work that is safe that way, like the outbox
// worker, whose claims are disjoint.
func (r *Runner) RegisterEverywhere(name string, every time.Duration, fn func(context.Context) error) error {
	return r.add(name, gocron.DurationJob(every), func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, r.cfg.JobTimeout)
		defer cancel()
		return fn(ctx)
	})
}

// add schedules one job and records each tick's outcome for RunStates. A
// run cut short by the runner's shutdown is not recorded as a failure.
func (r *Runner) add(name string, def gocron.JobDefinition, fn func(context.Context) error) error {
	_, err := r.sched.NewJob(def, gocron.NewTask(func(ctx context.Context) {
		start := r.cfg.Clock.Now()
		err := fn(ctx)
		if ctx.Err() != nil {
			return
		}
		r.states.record(name, start, r.cfg.Clock.Since(start), err)
		switch {
		case err == nil, errors.Is(err, errNotOurTurn):
		case errors.Is(err, models.ErrLockBusy):
			// Another transaction held a lock the job does not queue for
			// (a fresh replica's jobs start together: usage-partitions met
			// the warm's read on every first start on PostgreSQL). It
			// runs again soon (NextTry); /metrics counts the failed run.
			r.log.Warn("job found a lock busy; it runs again soon", "job", name, "err", err)
		default:
			r.log.Error("job failed", "job", name, "err", err)
		}
	}), gocron.WithName(name), gocron.WithSingletonMode(gocron.LimitModeReschedule),
		gocron.WithStartAt(gocron.WithStartImmediately()))
	if err != nil {
		return fmt.Errorf("jobs: add %s: %w", name, err)
	}
	r.states.register(name)
	return nil
}

// Register schedules fn every interval under the job's lease, so that at
// most one process runs it at a time and, across all processes, about
// once per interval; a process that finds the lease taken skips that turn.
// Every process checks the job every CheckEvery (1 min at most), so that a
// dead replica's job, or one that failed on a held lock, is not left until
// the next interval. For "exactly once per week" use RegisterPeriodic.
func (r *Runner) Register(name string, every time.Duration, fn func(ctx context.Context) error) error {
	return r.add(name, gocron.DurationJob(CheckEvery(every, r.cfg.PeriodCheck)), func(ctx context.Context) error {
		return r.withLease(ctx, name, every, fn)
	})
}

// RegisterPeriodic runs fn once per period across all processes. Every
// PeriodCheck (and at start-up, which catches up a period missed while
// the server was down) it asks periodFunc for the period due now ("" for
// none; "now" is the database's clock, shared by every replica) and runs
// fn if this process wins ClaimPeriod. fn must be
// idempotent: if the process dies mid-run, another one runs the period
// again after the lease expires (the outbox's dedup keys make mail so).
func (r *Runner) RegisterPeriodic(name string, periodFunc func(now time.Time) string, fn func(ctx context.Context, period string) error) error {
	return r.add(name, gocron.DurationJob(r.cfg.PeriodCheck), func(ctx context.Context) error {
		return r.runPeriod(ctx, name, periodFunc, fn)
	})
}
