package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestTinyFleet runs the whole bench at a tiny scale: 16 nodes spread
// over two replicas of one database with two browser users, the agents' intervals at a second and
// their clock set so that a minute ends early in the window. The level
// must hold, its usage records must reach the database, and every kind
// of agent request and page must have been made, the crowd's usage pages
// at once among them.
func TestTinyFleet(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agentCadence(root); err != nil {
		t.Fatalf("the agent's default intervals: %v", err)
	}
	o, err := parse([]string{"fleetbench", "-max-gpus", "128", "-start-gpus", "128", "-users", "2", "-people", "20", "-replicas", "2",
		"-step-seconds", "8", "-warmup", "2s", "-think", "500ms", "-crowd", "3",
		// The test checks the machinery, not this machine's speed (a
		// loaded CI box may well miss 250 ms): the level is judged on
		// errors and ingest keeping up; the real runs judge latency.
		"-p99", "1m"})
	if err != nil {
		t.Fatal(err)
	}
	o.pgAdmin = storetest.AdminURL()
	o.cad = &cadence{sample: time.Second, sync: time.Second, deliver: time.Second, heartbeat: 2 * time.Second, policy: detect.DefaultPolicy()}
	o.align = true
	var out bytes.Buffer
	best, err := bench(context.Background(), o, &out)
	if errors.Is(err, storetest.ErrNoPostgres) {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())
	if best == nil || best.gpus != 128 || best.nodes != 16 {
		t.Fatalf("largest held = %+v, want 128 GPUs on 16 nodes", best)
	}
	if best.taken == 0 || best.made == 0 {
		t.Errorf("usage records made %d, taken %d: want some of each", best.made, best.taken)
	}
	for _, k := range []string{"schedule", "heartbeat", "usage", "page: calendar", crowdKind, crowdFirstKind} {
		if len(best.lat[k]) == 0 {
			t.Errorf("no %q requests in the window; kinds: %v", k, sortedKinds(best.lat))
		}
	}
	if n := len(best.lat[crowdFirstKind]); n != 3 {
		t.Errorf("the crowd's first gathering made %d requests, want 3 (one per member)", n)
	}
	if !strings.Contains(out.String(), "bytes stored per GPU-day") {
		t.Errorf("no bytes per GPU-day in the report")
	}
}

// TestClaimKeepsBrowsersApart: a GPU and hour is claimed once, whichever
// level's pick asks for it again.
func TestClaimKeepsBrowsersApart(t *testing.T) {
	f := &fleet{}
	h := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	if !f.claim(7, h) || f.claim(7, h) {
		t.Fatal("GPU 7 at 09:00: want the first claim only")
	}
	if !f.claim(7, h.Add(time.Hour)) || !f.claim(8, h) {
		t.Fatal("another hour or another GPU: want claimed")
	}
}
