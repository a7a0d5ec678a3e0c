package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpubook/gpubook/agent/detect"
)

// cadence is how often a node's agent does each thing, as the shipped
// agent does it by default.
type cadence struct {
	sample, sync, deliver, heartbeat time.Duration
	// spread is how long after a minute a node may wait to send it
	// (usage_spread: its own moment, spool.Slot).
	spread time.Duration
	// policy is the agent's detection policy (idle after 30 min and the
	// rest): detect.DefaultPolicy, as gpubook-agent's defaults take it.
	policy detect.Policy
}

// agentCadence reads the agent's default intervals from the shipped
// agent/deploy/agent.conf, whose commented "#key = value" lines are the
// defaults gpubook-agent runs with. Those defaults live in
// cmd/gpubook-agent (package main, which nothing may import), so the
// shipped file is the one place outside it that states them; copying the
// numbers here would let the two drift apart unnoticed.
func agentCadence(root string) (cadence, error) {
	path := filepath.Join(root, "agent", "deploy", "agent.conf")
	f, err := os.Open(path)
	if err != nil {
		return cadence{}, err
	}
	defer f.Close()
	c := cadence{policy: detect.DefaultPolicy()}
	want := map[string]*time.Duration{"sample_interval": &c.sample, "sync_interval": &c.sync,
		"deliver_interval": &c.deliver, "heartbeat_interval": &c.heartbeat, "usage_spread": &c.spread}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "#"), "#")
		k, v, ok := strings.Cut(line, "=")
		if d, known := want[strings.TrimSpace(k)]; ok && known {
			if *d, err = time.ParseDuration(strings.TrimSpace(v)); err != nil {
				return cadence{}, fmt.Errorf("%s: %s: %w", path, k, err)
			}
		}
	}
	for k, d := range want {
		if *d <= 0 {
			return cadence{}, fmt.Errorf("%s states no default %s", path, k)
		}
	}
	return c, sc.Err()
}

// repoRoot is the directory of go.mod above the working directory: the
// command runs from the repository root, its test from its own folder.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = up
	}
}
