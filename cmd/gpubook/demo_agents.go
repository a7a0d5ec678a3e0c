package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// demoAgentOpts are the --agents settings of the demo.
type demoAgentOpts struct {
	bin, dir string
	// lock names the demo node whose agent runs with enforce = lock (one
	// at most: the agents of one host share its cgroups).
	lock string
}

// demoAgent is one running gpubook-agent process of the demo.
type demoAgent struct {
	node    string
	cmd     *exec.Cmd
	done    chan struct{}
	metrics int // the port of its /metrics, free when it started
}

// demoAgents enrols every demo node and runs a real gpubook-agent process
// per node on simulated GPUs (gpu = simulated) until ctx ends, so that the
// live status, violations, idle warnings and usage of the demo come from
// the real agent path. The portal must be running at cfg.BaseURL.
func (c *cli) demoAgents(ctx context.Context, cfg Config, db *store.DB, plan demoData, o demoAgentOpts) error {
	if err := portalAnswers(ctx, cfg.BaseURL); err != nil {
		return fmt.Errorf("demo --agents: the portal does not answer at %s (start 'gpubook serve' first, or set GPUBOOK_BASE_URL): %w", cfg.BaseURL, err)
	}
	if err := checkDemoLock(o.lock, plan, os.Geteuid()); err != nil {
		return err
	}
	dir, cleanup, err := demoAgentDir(o.dir)
	if err != nil {
		return err
	}
	defer cleanup()
	bin, err := c.agentBinary(ctx, o.bin, dir)
	if err != nil {
		return err
	}
	var agents []*demoAgent
	defer func() { stopDemoAgents(agents, c.stderr) }()
	for i, n := range plan.Nodes {
		a, err := c.startDemoAgent(ctx, cfg, db, plan, n, i, bin, filepath.Join(dir, n.Name), n.Name == o.lock)
		if err != nil {
			return fmt.Errorf("demo --agents: %s: %w", n.Name, err)
		}
		agents = append(agents, a)
		fmt.Fprintf(c.stdout, "demo: gpubook-agent for %s runs on simulated GPUs (pid %d, /metrics on 127.0.0.1:%d, log %s)\n",
			n.Name, a.cmd.Process.Pid, a.metrics, filepath.Join(dir, n.Name, "agent.log"))
	}
	if o.lock != "" {
		fmt.Fprintf(c.stdout, "demo: %s locks its GPUs: its simulated GPUs are /dev/gpubook-sim/%s/nvidia0…; a login on this host\n"+
			"      whose Unix name holds a booking there opens only those GPUs, every other one answers 'Operation not permitted'\n"+
			"      (its node page says lock v1 or v2; after Ctrl-C, 'sudo gpubook-agent unlock' removes the rules)\n", o.lock, o.lock)
	}
	fmt.Fprintf(c.stdout, "demo: live status at %s/status; press Ctrl-C to stop the agents\n", cfg.BaseURL)
	<-ctx.Done()
	return nil
}

// checkDemoLock refuses a --lock that names no demo node, or that cannot
// work because the demo does not run as root (mknod, cgroups).
func checkDemoLock(node string, plan demoData, euid int) error {
	if node == "" {
		return nil
	}
	var names []string
	for _, n := range plan.Nodes {
		if n.Name == node {
			if euid != 0 {
				return fmt.Errorf("demo --lock %s: needs root (the lock writes cgroup device rules and makes the simulated GPUs' device files); run the demo as root or leave --lock out", node)
			}
			return nil
		}
		names = append(names, n.Name)
	}
	return fmt.Errorf("demo --lock %s: no such demo node (the demo's nodes: %s)", node, strings.Join(names, ", "))
}

// portalAnswers checks /healthz, for a clear message instead of agents
// that retry against nothing.
func portalAnswers(ctx context.Context, base string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /healthz: %s", resp.Status)
	}
	return nil
}

// demoAgentDir returns the agents' state directory: the one given (kept),
// or a temporary one removed at the end.
func demoAgentDir(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	tmp, err := os.MkdirTemp("", "gpubook-demo-agents-")
	if err != nil {
		return "", nil, fmt.Errorf("demo --agents: %w", err)
	}
	return tmp, func() { _ = os.RemoveAll(tmp) }, nil
}

// agentBinary returns bin, or gpubook-agent beside this binary or on PATH,
// or builds it from ./cmd/gpubook-agent (the agent needs cgo; the portal
// does not, so the demo runs it as a separate program).
func (c *cli) agentBinary(ctx context.Context, bin, dir string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), "gpubook-agent"); isFile(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath("gpubook-agent"); err == nil {
		return p, nil
	}
	if !isFile(filepath.Join("cmd", "gpubook-agent", "main.go")) {
		return "", errors.New("demo --agents: no gpubook-agent found; build it (go build ./cmd/gpubook-agent) and pass --agent-bin")
	}
	out := filepath.Join(dir, "gpubook-agent")
	fmt.Fprintln(c.stdout, "demo: building gpubook-agent (go build ./cmd/gpubook-agent, needs cgo)…")
	if msg, err := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/gpubook-agent").CombinedOutput(); err != nil {
		return "", fmt.Errorf("demo --agents: go build ./cmd/gpubook-agent: %w\n%s", err, msg)
	}
	return out, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// demoAgentConf is a demo node's agent.conf: simulated GPUs like the
// node's, quick intervals, idle bookings reported after 10 minutes.
func demoAgentConf(base string, n demoNode, metricsPort int, dir string, lock bool) string {
	enforce := "detect"
	if lock {
		enforce = "lock"
	}
	return fmt.Sprintf(`# written by gpubook demo --agents
portal_url = %s
node = %s
credential_file = %s
state_dir = %s
cache_file = %s
metrics_addr = 127.0.0.1:%d
gpu = simulated
sim_gpus = %d
sim_model = %s
sim_memory_mib = %d
sim_script = %s
sync_interval = 15s
deliver_interval = 10s
usage_spread = 0s
heartbeat_interval = 30s
idle_after = 10m
enforce = %s
%s`, base, n.Name, filepath.Join(dir, "credential.json"), filepath.Join(dir, "state"), filepath.Join(dir, "state", "schedule.json"),
		metricsPort, n.GPUs, n.Model, n.MemoryMiB, filepath.Join(dir, "load"), enforce, demoSimMIGLine(n))
}

// demoSimMIGLine splits the node's MIG GPU in the simulation as the demo
// seeded it; "" for a node without one.
func demoSimMIGLine(n demoNode) string {
	if n.MIG == nil {
		return ""
	}
	return "sim_mig = " + n.MIG.simMIG() + "\n"
}

// demoIntruder picks who uses a GPU of n without a booking, and which GPU:
// a member of another team, on the highest in-service GPU nobody holds now.
func demoIntruder(plan demoData, n demoNode, now time.Time) (string, int, bool) {
	user, email := "", ""
	for _, u := range plan.Users {
		if u.Team != "" && u.Team != n.HomeTeam {
			user, email = models.UnixName(u.Email), u.Email
		}
	}
	held := map[int]string{} // GPU index → its holder's e-mail now
	for _, b := range plan.Bookings {
		if b.Node == n.Name && !now.Before(b.Start) && now.Before(b.End) {
			for _, g := range b.GPUs {
				held[g] = b.UserEmail
			}
		}
	}
	// A free GPU if there is one; at an hour when every GPU of the node
	// is booked (early on a Monday), one booked by somebody else: the
	// intruder has no booking there either way.
	usable := inServiceIndexes(n, plan.OutOfService)
	for _, free := range []bool{true, false} {
		for k := len(usable) - 1; k >= 0; k-- {
			h, ok := held[usable[k]]
			if free && !ok || !free && h != email {
				return user, usable[k], user != ""
			}
		}
	}
	return "", 0, false
}
