package main

import (
	"context"
	"time"

	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/store"
)

// registerPolicyJobs runs the clock-driven parts of the policies and
// priority requests every minute:
// pending priority requests whose start passed expire (pages also expire
// them when they read), booking reminders go out, and watchers of a GPU
// that freed are told. Each is idempotent, so a run repeated by another
// replica or after a crash sends nothing twice.
func (c *cli) registerPolicyJobs(cfg Config, db *store.DB, runner *jobs.Runner) error {
	mail := c.mailViews(cfg)
	const every = time.Minute
	if err := runner.Register("request-expiry", every, func(ctx context.Context) error {
		_, err := db.ExpireRequests(ctx, c.now())
		return err
	}); err != nil {
		return err
	}
	if err := runner.Register("booking-reminders", every, func(ctx context.Context) error {
		_, err := db.SendReminders(ctx, c.now(), mail.Notice)
		return err
	}); err != nil {
		return err
	}
	return runner.Register("gpu-watches", every, func(ctx context.Context) error {
		_, err := db.NotifyFreed(ctx, c.now(), mail.Notice)
		return err
	})
}
