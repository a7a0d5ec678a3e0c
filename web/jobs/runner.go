// Package jobs runs gpubook's background work inside the server process:
// the outbox worker that sends mail, hourly maintenance, and whatever the
// features register (weekly reports, reminders, expiry). Jobs coordinate
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
	mathrand "math/rand/v2"
	"os"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
)

// Store is what the jobs need from the database.
type Store interface {
	models.OutboxStore
	models.LeaseStore
}

// Sender delivers one outbox message; web/mailer implements it. A failure
// should be a *models.DeliveryError saying whether to retry.
type Sender interface {
	Send(ctx context.Context, m models.OutboxMessage) error
}

// Config holds the runner's dependencies and tuning; zero values take the defaults.
type Config struct {
	Store  Store
	Sender Sender // nil: SMTP is not configured and mail waits in the outbox
	Clock  clockwork.Clock
	Logger *slog.Logger
	Owner  string // who holds leases: NewOwner() when empty

	Policy      models.OutboxPolicy // retries; DefaultOutboxPolicy when zero
	OutboxEvery time.Duration       // how often the worker looks for mail (10 s)
	Batch       int                 // messages claimed per round (50)
	SendLease   time.Duration       // how long a claimed batch is ours (10 min)
	JobLease    time.Duration       // lease of Register and RegisterPeriodic jobs (5 min)
	PeriodCheck time.Duration       // how often periodic jobs look for a due period (1 min)
	KeepSent    time.Duration       // sent mail older than this is deleted (30 days)
	Jitter      func() float64      // in [0, 1), spreads retries; math/rand when nil
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
	if c.Policy.MaxAttempts == 0 {
		c.Policy = models.DefaultOutboxPolicy
	}
	c.OutboxEvery = or(c.OutboxEvery, 10*time.Second)
	c.SendLease = or(c.SendLease, 10*time.Minute)
	c.JobLease = or(c.JobLease, 5*time.Minute)
	c.PeriodCheck = or(c.PeriodCheck, time.Minute)
	c.KeepSent = or(c.KeepSent, 30*24*time.Hour)
	if c.Batch <= 0 {
		c.Batch = 50
	}
	if c.Jitter == nil {
		c.Jitter = mathrand.Float64
	}
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

// New builds the runner with the outbox worker and the maintenance job
// registered; Run starts them.
func New(cfg Config) (*Runner, error) {
	if cfg.Store == nil {
		return nil, errors.New("jobs: no store")
	}
	cfg.defaults()
	s, err := gocron.NewScheduler(gocron.WithClock(cfg.Clock), gocron.WithStopTimeout(30*time.Second))
	if err != nil {
		return nil, fmt.Errorf("jobs: scheduler: %w", err)
	}
	r := &Runner{cfg: cfg, sched: s, log: cfg.Logger.With("owner", cfg.Owner)}
	if cfg.Sender == nil {
		r.log.Warn("SMTP not configured; mail waits in the outbox")
	} else if err := r.add("outbox", gocron.DurationJob(cfg.OutboxEvery), r.deliverJob); err != nil {
		return nil, err
	}
	if err := r.Register("outbox-cleanup", gocron.DurationJob(time.Hour), r.cleanup); err != nil {
		return nil, err
	}
	return r, nil
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

// add schedules fn without a lease: it runs in every process (the outbox
// worker is safe that way because claims are disjoint).
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
