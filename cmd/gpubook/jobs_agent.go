package main

import (
	"time"

	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/notify"
	"github.com/gpubook/gpubook/models/store"
)

// registerAgentAlerts checks every minute for nodes whose agent went
// silent and mails the admins, once per outage (the outbox deduplicates).
func (c *cli) registerAgentAlerts(cfg Config, db *store.DB, runner *jobs.Runner) error {
	n := &notify.Notifier{Store: db, Mail: c.mailViews(cfg), Policy: cfg.Agent.IdlePolicy, Now: c.now}
	return runner.Register("node-offline-alerts", time.Minute, n.OfflineAlerts)
}
