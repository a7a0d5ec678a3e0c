package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// startDemoAgent enrols node n with a fresh token through the real
// `gpubook-agent enroll` and starts `gpubook-agent run` for it.
func (c *cli) startDemoAgent(ctx context.Context, cfg Config, db *store.DB, plan demoData, n demoNode, i int, bin, dir string, lock bool) (*demoAgent, error) {
	id, err := demoNodeID(ctx, db, n.Name)
	if err != nil {
		return nil, err
	}
	token, _, err := db.CreateEnrollToken(ctx, id, c.now(), models.CLIActor)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o755); err != nil {
		return nil, err
	}
	load := "# GPU USER UTIL MEM_MIB: processes besides the bookers' (see agent/README.md)\n"
	if user, gpu, ok := demoIntruder(plan, n, c.now()); ok {
		load += fmt.Sprintf("%d %s 85 %d # runs without a booking\n", gpu, user, n.MemoryMiB/2)
	}
	conf := filepath.Join(dir, "agent.conf")
	if err := os.WriteFile(filepath.Join(dir, "load"), []byte(load), 0o644); err != nil {
		return nil, err
	}
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(conf, []byte(demoAgentConf(cfg.BaseURL, n, port, dir, lock)), 0o644); err != nil {
		return nil, err
	}
	enroll := exec.CommandContext(ctx, bin, "enroll", "--config", conf)
	enroll.Env = append(demoAgentEnv(), "GPUBOOK_AGENT_TOKEN="+token)
	if out, err := enroll.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gpubook-agent enroll: %w\n%s", err, out)
	}
	log, err := os.Create(filepath.Join(dir, "agent.log"))
	if err != nil {
		return nil, err
	}
	// Not CommandContext: at Ctrl-C the agents get SIGTERM and time to
	// deliver what they spooled (stopDemoAgents), not SIGKILL.
	cmd := exec.Command(bin, "run", "--config", conf)
	cmd.Env, cmd.Stdout, cmd.Stderr = demoAgentEnv(), log, log
	// Its own process group: a Ctrl-C in the terminal reaches the demo,
	// which then stops the agents in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	a := &demoAgent{node: n.Name, cmd: cmd, done: make(chan struct{}), metrics: port}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(a.done)
	}()
	return a, nil
}

// demoAgentEnv keeps the caller's GPUBOOK_AGENT_* variables away from the
// demo agents: their agent.conf says everything.
func demoAgentEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
}

func demoNodeID(ctx context.Context, db *store.DB, name string) (int64, error) {
	nodes, err := db.Nodes(ctx)
	if err != nil {
		return 0, err
	}
	for _, n := range nodes {
		if n.Name == name {
			return n.ID, nil
		}
	}
	return 0, fmt.Errorf("node %s not found: run 'gpubook demo' on an empty database first", name)
}

// stopDemoAgents sends SIGTERM to every agent and waits up to 20 s for
// each (they flush the current minute and deliver), then kills the rest.
func stopDemoAgents(agents []*demoAgent, w io.Writer) {
	for _, a := range agents {
		_ = a.cmd.Process.Signal(syscall.SIGTERM)
	}
	deadline, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, a := range agents {
		select {
		case <-a.done:
			fmt.Fprintf(w, "demo: gpubook-agent for %s stopped\n", a.node)
		case <-deadline.Done():
			_ = a.cmd.Process.Kill()
			<-a.done
			fmt.Fprintf(w, "demo: gpubook-agent for %s killed (no exit 20 s after SIGTERM)\n", a.node)
		}
	}
}
