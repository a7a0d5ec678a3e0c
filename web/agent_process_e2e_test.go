package web_test

// The portal and a real gpubook-agent process (built with `go build`,
// started with exec) on simulated GPUs (gpu = simulated), in real time:
// what `gpubook demo --agents` runs, checked end to end on both databases.

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest/agentbin"
	"github.com/gpubook/gpubook/agent/simgpu"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// agentProc is a running agent process and its log.
type agentProc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  bytes.Buffer
	done chan struct{} // closed when the process has exited, with err set
	err  error
}

func (a *agentProc) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.log.Write(p)
}

func (a *agentProc) logText() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.log.String()
}

// agentEnv is the agent's whole environment: nothing of the test's own
// GPUBOOK_AGENT_* variables leaks in.
func agentEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}, extra...)
}

func TestAgentProcessOnSimulatedGPUs(t *testing.T) {
	t.Parallel()
	bin := agentbin.Build(t, filepath.Join(t.TempDir(), "gpubook-agent"))
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			runAgentProcess(t, d, bin)
		})
	}
}

func runAgentProcess(t *testing.T, dialect, bin string) {
	ctx := context.Background()
	var bookingID int64
	x := startSimAgent(t, dialect, bin, "sim1", 4, "sim_script = @DIR@/load\nheartbeat_interval = 2s\n", func(env *webtest.Env, n *models.Node, dir string) {
		ada := env.AddUser("ada@example.org", "Ada", false)
		start := time.Now().UTC().Truncate(30 * time.Minute)
		b, err := env.DB.CreateBooking(ctx, models.NewBooking{UserID: ada.ID, GPUIDs: []int64{n.GPUs[0].ID}, StartsAt: start, EndsAt: start.Add(2 * time.Hour)},
			models.DefaultBookingLimits, start, models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		bookingID = b.ID
		writeFile(t, filepath.Join(dir, "load"), "3 mallory 70 10000 # unbooked\n")
	})
	if simgpu.BehaviourOf(bookingID) != simgpu.Train {
		t.Fatalf("booking %d does not train in the simulation; the test expects ada's processes on GPU 0", bookingID)
	}
	env, n, a := x.env, x.node, x.agent
	uuid3 := ""
	waitFor(t, a, "inventory: the simulated GPUs replace the placeholders", func() bool {
		n, _ = env.DB.Node(ctx, x.node.ID)
		uuid3 = n.GPUs[3].UUID
		return !strings.HasPrefix(uuid3, "GPU-manual-")
	})
	waitFor(t, a, "mallory's unbooked process becomes a violation", func() bool {
		vs, _ := telemetry.New(env.DB).Violations(ctx, models.ViolationFilter{Limit: 10})
		return len(vs) == 1 && vs[0].UserName == "mallory" && vs[0].Kind == wire.ViolationUnbooked && vs[0].GPUUUID == uuid3
	})
	admin := env.Client()
	admin.SignIn("root@example.org", "Root Admin")
	row := func(i int) string { return `[data-testid="status-gpu-` + itoa64(n.GPUs[i].ID) + `"]` }
	waitFor(t, a, "usage minutes arrive and live status shows the node's GPUs", func() bool {
		var minutes int64
		env.DB.Gorm.Table("gpu_usage_minutes").Count(&minutes)
		doc := admin.Get("/status").Doc
		return minutes >= 4 && doc.Find(`[data-testid="status-node-sim1"] [data-testid="agent-online"]`).Length() == 1 &&
			strings.Contains(doc.Find(row(0)+` [data-testid="used-by"]`).Text(), "ada") &&
			strings.Contains(doc.Find(row(3)+` [data-testid="used-by"]`).Text(), "mallory")
	})
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.done:
		if a.err != nil {
			t.Errorf("agent exit after SIGTERM: %v\n%s", a.err, a.logText())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("agent still running 30 s after SIGTERM\n%s", a.logText())
	}
}

// simAgent is a portal and a real gpubook-agent process enrolled on it,
// on simulated GPUs; the portal's clock runs as far ahead of the host's as
// the node's (sim_clock_ahead), so that the first minute of usage ends
// minuteLead after the agent's start (see clockAhead).
type simAgent struct {
	env   *webtest.Env
	node  *models.Node
	agent *agentProc
	conf  string // the agent.conf
	state string // the agent's state_dir
}

// startSimAgent makes the portal and a node of gpus NVIDIA L40S, calls
// before (bookings, a load script in dir), then enrols and starts the
// agent with quick intervals and extra lines in its agent.conf (@DIR@
// stands for dir).
func startSimAgent(t *testing.T, dialect, bin, name string, gpus int, extra string, before func(env *webtest.Env, n *models.Node, dir string)) *simAgent {
	t.Helper()
	return startSimAgentOf(t, dialect, bin, name, gpus, "NVIDIA L40S", 46068, extra, before)
}

// startSimAgentOf is startSimAgent on gpus of model with memMiB each (an
// A100 of 80 GiB holds seven 1g.10gb MIG instances; an L40S does not).
func startSimAgentOf(t *testing.T, dialect, bin, name string, gpus int, model string, memMiB int64, extra string, before func(env *webtest.Env, n *models.Node, dir string)) *simAgent {
	t.Helper()
	ctx := context.Background()
	var ahead atomic.Int64
	env := webtest.New(t, dialect, func(c *web.Config) {
		c.Now = func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	})
	srv := httptest.NewServer(env.Server.Echo)
	t.Cleanup(srv.Close)
	list, _ := models.NewNodeGPUs(name, gpus, model, memMiB)
	node := &models.Node{Name: name}
	if err := env.DB.CreateNode(ctx, node, list, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	n, err := env.DB.Node(ctx, node.ID)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if before != nil {
		before(env, n, dir)
	}
	token, _, err := env.DB.CreateEnrollToken(ctx, node.ID, time.Now(), models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	ahead.Store(int64(clockAhead(time.Now(), minuteLead)))
	x := &simAgent{env: env, node: n, conf: filepath.Join(dir, "agent.conf"), state: filepath.Join(dir, "state")}
	writeFile(t, x.conf, fmt.Sprintf("node = %s\ncredential_file = %s\nstate_dir = %s\ncache_file = %s\nmetrics_addr =\n"+
		"gpu = simulated\nsim_gpus = %d\nsim_model = %s\nsim_memory_mib = %d\n"+
		"sample_interval = 1s\nsync_interval = 1s\ndeliver_interval = 1s\nusage_spread = 2s\nsim_clock_ahead = %s\n%s",
		name, filepath.Join(dir, "credential.json"), x.state, filepath.Join(x.state, "schedule.json"), gpus, model, memMiB,
		time.Duration(ahead.Load()), strings.ReplaceAll(extra, "@DIR@", dir)))
	enroll := exec.Command(bin, "enroll", "--config", x.conf, "--portal", srv.URL)
	enroll.Env = agentEnv("GPUBOOK_AGENT_TOKEN=" + token)
	if out, err := enroll.CombinedOutput(); err != nil {
		t.Fatalf("gpubook-agent enroll: %v\n%s", err, out)
	}
	x.agent = startAgent(t, bin, x.conf)
	return x
}

// startAgent starts `gpubook-agent run` and stops it (SIGKILL) at cleanup
// if the test has not.
func startAgent(t *testing.T, bin, conf string) *agentProc {
	t.Helper()
	a := &agentProc{done: make(chan struct{})}
	a.cmd = exec.Command(bin, "run", "--config", conf)
	a.cmd.Env, a.cmd.Stdout, a.cmd.Stderr = agentEnv(), a, a
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		a.err = a.cmd.Wait()
		close(a.done)
	}()
	t.Cleanup(func() {
		_ = a.cmd.Process.Kill()
		<-a.done
		if t.Failed() {
			t.Logf("agent log:\n%s", a.logText())
		}
	})
	return a
}

// minuteLead is how long after the agent's start its first minute of usage
// should end: enough for the start itself, the inventory and a few samples.
const minuteLead = 8 * time.Second

// clockAhead is the sim_clock_ahead that puts the simulated node's clock
// lead before the end of a minute at now: usage arrives per completed
// minute, and the host's clock would make the test wait up to a minute for
// its first.
func clockAhead(now time.Time, lead time.Duration) time.Duration {
	return (time.Minute - now.Sub(now.Truncate(time.Minute)) - lead + time.Minute) % time.Minute
}

// waitFor polls cond for up to 3 minutes: usage arrives per completed
// minute of the agent's clock, so the first can take a minute on its own.
func waitFor(t *testing.T, a *agentProc, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(3 * time.Minute); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if cond() {
			return
		}
		select {
		case <-a.done:
			t.Fatalf("%s: the agent exited: %v\n%s", what, a.err, a.logText())
		default:
		}
	}
	t.Fatalf("%s: not within 3 minutes\n%s", what, a.logText())
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
