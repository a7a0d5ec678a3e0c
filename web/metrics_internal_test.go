package web

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestStateCollectorDatabaseDown: a scrape whose database read fails still
// answers, with gpubook_metrics_database_up 0 and no stale counts.
func TestStateCollectorDatabaseDown(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	db.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(&stateCollector{store: db, now: time.Now, log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(fams) != 1 || fams[0].GetName() != "gpubook_metrics_database_up" || fams[0].GetMetric()[0].GetGauge().GetValue() != 0 {
		t.Errorf("families %v; want only gpubook_metrics_database_up 0", fams)
	}
}

// TestJobCollector: a job that never ran has zero times and no last-run
// outcome; one that failed says so, keeping its last success.
func TestJobCollector(t *testing.T) {
	t.Parallel()
	ok := time.Unix(1_780_000_000, 0)
	states := []jobs.RunState{
		{Name: "fresh", Counts: map[string]int64{jobs.OutcomeSkipped: 3}},
		{Name: "broken", LastRun: ok.Add(time.Hour), LastDuration: 2 * time.Second, LastSuccess: ok,
			Counts: map[string]int64{jobs.OutcomeOK: 1, jobs.OutcomeFailed: 1}},
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&jobCollector{states: func() []jobs.RunState { return states }})
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += "," + l.GetValue()
			}
			if m.GetCounter() != nil {
				got[key] = m.GetCounter().GetValue()
			} else {
				got[key] = m.GetGauge().GetValue()
			}
		}
	}
	// Label values in the order of the label names: outcome before task.
	want := map[string]float64{
		"gpubook_job_last_run_timestamp_seconds,fresh": 0, "gpubook_job_last_success_timestamp_seconds,fresh": 0,
		"gpubook_job_runs_total,skipped,fresh": 3, "gpubook_job_runs_total,ok,fresh": 0, "gpubook_job_runs_total,failed,fresh": 0,
		"gpubook_job_last_run_timestamp_seconds,broken": float64(ok.Unix() + 3600), "gpubook_job_last_success_timestamp_seconds,broken": float64(ok.Unix()),
		"gpubook_job_last_run_success,broken": 0, "gpubook_job_last_run_duration_seconds,broken": 2,
		"gpubook_job_runs_total,ok,broken": 1, "gpubook_job_runs_total,failed,broken": 1, "gpubook_job_runs_total,skipped,broken": 0,
	}
	if len(got) != len(want) {
		t.Errorf("got %d series, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}
