package web

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/jobs"
)

var (
	descDBUp = prometheus.NewDesc("gpubook_metrics_database_up",
		"1 when this scrape read the counts from the database, 0 when it failed or timed out (the counts are then missing).", nil, nil)
	descBookings = prometheus.NewDesc("gpubook_bookings",
		"Bookings by phase now: upcoming, active, past (ended or released) and cancelled.", []string{"phase"}, nil)
	descRequests = prometheus.NewDesc("gpubook_priority_requests",
		"Priority requests by status.", []string{"status"}, nil)
	descAgents = prometheus.NewDesc("gpubook_agents",
		"Enrolled node agents by state: online (called within 2 minutes) or offline.", []string{"state"}, nil)
	descOutbox = prometheus.NewDesc("gpubook_outbox_messages",
		"Emails in the outbox by status.", []string{"status"}, nil)
	descOutboxAge = prometheus.NewDesc("gpubook_outbox_oldest_pending_age_seconds",
		"Age of the oldest pending email (0 when none is pending).", nil, nil)
)

// stateCollector reads the portal's state from the database at scrape
// time, within metricsScrapeTimeout, so that every replica reports the
// same shared numbers without keeping them in memory.
type stateCollector struct {
	store models.PortalCountsStore
	now   models.Clock
	log   *slog.Logger
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDBUp, descBookings, descRequests, descAgents, descOutbox, descOutboxAge} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), metricsScrapeTimeout)
	defer cancel()
	now := c.now()
	counts, err := c.store.PortalCounts(ctx, now)
	var outbox models.OutboxStats
	if err == nil {
		outbox, err = c.store.OutboxStats(ctx)
	}
	if err != nil {
		c.log.Error("metrics: read the portal's counts", "err", err)
		ch <- prometheus.MustNewConstMetric(descDBUp, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(descDBUp, prometheus.GaugeValue, 1)
	gauge := func(d *prometheus.Desc, v int64, label ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), label...)
	}
	for _, p := range models.BookingPhases {
		gauge(descBookings, counts.Bookings[p], string(p))
	}
	for _, s := range models.RequestStatuses {
		gauge(descRequests, counts.Requests[s], s)
	}
	gauge(descAgents, counts.AgentsOnline, "online")
	gauge(descAgents, counts.AgentsOffline, "offline")
	for _, s := range models.OutboxStatuses {
		gauge(descOutbox, outbox.Counts[s], s)
	}
	age := 0.0
	if outbox.OldestPending != nil {
		age = max(now.Sub(*outbox.OldestPending).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(descOutboxAge, prometheus.GaugeValue, age)
}

// The job series label the job "task": Prometheus sets "job" on every
// series to the scrape config's job_name, and a target's own "job" label
// would be renamed exported_job, so that {job="usage-retention"} matched
// nothing.
var (
	descJobLastRun = prometheus.NewDesc("gpubook_job_last_run_timestamp_seconds",
		"Unix time this process last ran the job (0: not yet; with several replicas take the max).", []string{"task"}, nil)
	descJobLastSuccess = prometheus.NewDesc("gpubook_job_last_success_timestamp_seconds",
		"Unix time of this process's last successful run of the job (0: none yet).", []string{"task"}, nil)
	descJobLastOK = prometheus.NewDesc("gpubook_job_last_run_success",
		"1 when this process's last run of the job succeeded, 0 when it failed (absent before the first run).", []string{"task"}, nil)
	descJobDuration = prometheus.NewDesc("gpubook_job_last_run_duration_seconds",
		"How long this process's last run of the job took.", []string{"task"}, nil)
	descJobRuns = prometheus.NewDesc("gpubook_job_runs_total",
		"Ticks of the job in this process by outcome: ok, failed, or skipped (another replica's turn, or nothing due).", []string{"task", "outcome"}, nil)
)

// jobCollector exports the job runner's RunStates; the runner itself
// knows nothing of Prometheus.
type jobCollector struct {
	states func() []jobs.RunState
}

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descJobLastRun, descJobLastSuccess, descJobLastOK, descJobDuration, descJobRuns} {
		ch <- d
	}
}

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.states() {
		ch <- prometheus.MustNewConstMetric(descJobLastRun, prometheus.GaugeValue, unixSeconds(s.LastRun), s.Name)
		ch <- prometheus.MustNewConstMetric(descJobLastSuccess, prometheus.GaugeValue, unixSeconds(s.LastSuccess), s.Name)
		if !s.LastRun.IsZero() {
			ok := 0.0
			if s.LastOK {
				ok = 1
			}
			ch <- prometheus.MustNewConstMetric(descJobLastOK, prometheus.GaugeValue, ok, s.Name)
			ch <- prometheus.MustNewConstMetric(descJobDuration, prometheus.GaugeValue, s.LastDuration.Seconds(), s.Name)
		}
		for _, o := range []string{jobs.OutcomeOK, jobs.OutcomeFailed, jobs.OutcomeSkipped} {
			ch <- prometheus.MustNewConstMetric(descJobRuns, prometheus.CounterValue, float64(s.Counts[o]), s.Name, o)
		}
	}
}

// unixSeconds is t as a Prometheus timestamp value, 0 for the zero time.
func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMilli()) / 1000
}
