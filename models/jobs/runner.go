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

	JobLease    time.Duration // lease of Register and RegisterPeriodic jobs (5 min)
	PeriodCheck time.Duration // how often periodic jobs look for a due period (1 min)
}

// Runner owns the scheduler and the jobs on it.
type Runner struct {
	cfg   Config
	sched gocron.Scheduler
	log   *slog.Logger
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
	c.JobLease = or(c.JobLease, 5*time.Minute)
	c.PeriodCheck = or(c.PeriodCheck, time.Minute)
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
	return r.add(name, gocron.DurationJob(every), fn)
}

func (r *Runner) add(name string, def gocron.JobDefinition, fn func(context.Context) error) error {
	_, err := r.sched.NewJob(def, gocron.NewTask(func(ctx context.Context) {
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			r.log.Error("job failed", "job", name, "err", err)
		}
	}), gocron.WithName(name), gocron.WithSingletonMode(gocron.LimitModeReschedule),
		gocron.WithStartAt(gocron.WithStartImmediately()))
	if err != nil {
		return fmt.Errorf("jobs: add %s: %w", name, err)
	}
	return nil
}

// Register schedules fn under the job's lease, so that at most one process
// runs it at a time; a process that finds the lease taken skips that turn.
// For "exactly once per week" use RegisterPeriodic instead: with several
// processes, each one's schedule ticks.
func (r *Runner) Register(name string, schedule gocron.JobDefinition, fn func(ctx context.Context) error) error {
	return r.add(name, schedule, func(ctx context.Context) error {
		return r.withLease(ctx, name, fn)
	})
}

// RegisterPeriodic runs fn once per period across all processes. Every
// PeriodCheck (and at start-up, which catches up a period missed while
// the server was down) it asks periodFunc for the period due now ("" for
// none) and runs fn if this process wins ClaimPeriod. fn must be
// idempotent: if the process dies mid-run, another one runs the period
// again after the lease expires (the outbox's dedup keys make mail so).
func (r *Runner) RegisterPeriodic(name string, periodFunc func(now time.Time) string, fn func(ctx context.Context, period string) error) error {
	return r.add(name, gocron.DurationJob(r.cfg.PeriodCheck), func(ctx context.Context) error {
		return r.runPeriod(ctx, name, periodFunc(r.cfg.Clock.Now()), fn)
	})
}
