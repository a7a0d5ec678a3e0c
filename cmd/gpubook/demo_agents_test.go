package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest/agentbin"
	"github.com/gpubook/gpubook/agent/lock/locktest"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

// TestDemoAgents: `gpubook demo --agents` next to a running portal seeds
// the demo, runs a real gpubook-agent per node on simulated GPUs (each
// reports its heartbeat and its intruder's unbooked use), and on Ctrl-C
// (the context's end) stops every agent process. The MIG slices the demo
// seeded are the ones the simulated agent reports, so its inventory
// retires none of them. As root, --lock makes the
// first node's agent lock its simulated GPUs (its heartbeat says lock v1).
func TestDemoAgents(t *testing.T) {
	t.Parallel()
	bin := agentbin.Build(t, filepath.Join(t.TempDir(), "gpubook-agent"))
	var lockArgs []string
	if os.Geteuid() == 0 {
		locktest.HoldAgentPrefix(t) // a locking agent confines this host's logins
		lockArgs = []string{"--lock", "gpu-a100-01"}
		t.Cleanup(func() { exec.Command(bin, "unlock", "--config", "/nonexistent").Run() })
	}
	url := storetest.URL(t, store.SQLite)
	base, _, _, _ := serveInBackground(t, map[string]string{"GPUBOOK_DATABASE_URL": url})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	errc := make(chan error, 1)
	go func() {
		errc <- runWith(ctx, append([]string{"gpubook", "demo", "--usage-days", "0", "--agents", "--agent-bin", bin, "--agents-dir", t.TempDir()}, lockArgs...),
			envOf(map[string]string{"GPUBOOK_DATABASE_URL": url, "GPUBOOK_BASE_URL": base}), stdout, stderr, nil)
	}()
	db := storetest.OpenURL(t, url)
	for end := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if demoAgentsReported(t, db, lockArgs != nil) {
			break
		}
		select {
		case err := <-errc:
			t.Fatalf("demo stopped: %v\n%s\n%s", err, stdout, stderr)
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("no heartbeat and violation from all 3 agents within 2 minutes\n%s\n%s", stdout, stderr)
		}
	}
	checkDemoSlicesKept(t, db)
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("demo after Ctrl-C = %v, want nil", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("demo still running 40 s after Ctrl-C\n%s", stderr)
	}
	pids := regexp.MustCompile(`\(pid (\d+),`).FindAllStringSubmatch(stdout.String(), -1)
	if len(pids) != 3 {
		t.Fatalf("started agents = %v, want 3\n%s", pids, stdout)
	}
	for _, m := range pids {
		pid, _ := strconv.Atoi(m[1])
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("agent pid %d after the demo: kill -0 = %v, want ESRCH (gone)", pid, err)
		}
	}
}

// demoAgentsReported: every demo node's agent has sent a heartbeat and
// each node has an unbooked-use violation (the demo's intruder).
func demoAgentsReported(t *testing.T, db *store.DB, locked bool) bool {
	ctx := context.Background()
	nodes, err := db.AgentNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := telemetry.New(db).Violations(ctx, models.ViolationFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	unbooked := map[string]bool{}
	for _, v := range vs {
		if v.Kind == wire.ViolationUnbooked {
			unbooked[v.NodeName] = true
		}
	}
	beats := 0
	for _, n := range nodes {
		wantLock := "detect"
		if locked && n.NodeName == "gpu-a100-01" {
			wantLock = "lock v1" // this machine kind: the v1 devices controller is mounted
		}
		if n.LastHeartbeatAt != nil && unbooked[n.NodeName] && n.Lock == wantLock {
			beats++
		}
	}
	return beats == 3
}

func TestCheckDemoLock(t *testing.T) {
	plan := demoPlan(1, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC), time.UTC)
	for _, tc := range []struct {
		node string
		euid int
		want string
	}{
		{"", 1000, ""},
		{"gpu-a100-01", 0, ""},
		{"gpu-a100-01", 1000, "needs root"},
		{"gpu-x", 0, "no such demo node (the demo's nodes: gpu-a100-01, gpu-h100-01, gpu-l40s-01)"},
	} {
		err := checkDemoLock(tc.node, plan, tc.euid)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("checkDemoLock(%q, euid %d) = %v, want %q", tc.node, tc.euid, err, tc.want)
		}
	}
}

// checkDemoSlicesKept: after the agents' first inventories, the 7 slices
// the demo seeded on gpu-a100-01 GPU 7 are still its instances, in
// service, and no other instance appeared: the demo and the simulation
// derive the same UUIDs (wire.SimulatedMIGUUID).
func checkDemoSlicesKept(t *testing.T, db *store.DB) {
	t.Helper()
	gpus, err := db.GPUs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, g := range gpus {
		if !g.IsMIGInstance() {
			continue
		}
		switch {
		case !g.InService:
			t.Errorf("%s slice gi %d (%s) retired after the agent's inventory: %q", g.NodeName, g.MIGGI, g.UUID, g.OutOfServiceReason)
		case g.NodeName != "gpu-a100-01" || g.UUID != wire.SimulatedMIGUUID(g.NodeName, 7, g.MIGGI):
			t.Errorf("instance %s of %s is not one the demo seeded", g.UUID, g.NodeName)
		default:
			kept++
		}
	}
	if kept != 7 {
		t.Errorf("seeded slices kept in service = %d, want 7", kept)
	}
}
