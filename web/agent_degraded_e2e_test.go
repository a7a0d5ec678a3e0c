package web_test

// The real gpubook-agent on simulated GPUs whose sampling is made to fail
// (the simulation's sample-error file): the node page must turn degraded
// within a minute, with the agent's own heartbeat interval (60 s).

import (
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
	"github.com/gpubook/gpubook/agent/simgpu"
	"github.com/gpubook/gpubook/models/store/storetest"
)

func TestAgentProcessSampleFailureDegradesNode(t *testing.T) {
	t.Parallel()
	bin := agentbin.Build(t, filepath.Join(t.TempDir(), "gpubook-agent"))
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			runAgentSampleFailure(t, d, bin)
		})
	}
}

func runAgentSampleFailure(t *testing.T, dialect, bin string) {
	// heartbeat_interval is left at its default, 60 s: the portal must hear
	// of the failure from the heartbeat the failure itself sends.
	x := startSimAgent(t, dialect, bin, "sim2", 2, "", nil)
	env, node, a, conf, state := x.env, x.node, x.agent, x.conf, x.state
	admin := env.Client()
	admin.SignIn("root@example.org", "Root Admin")
	page := "/admin/nodes/" + strconv.FormatInt(node.ID, 10) + "/enroll"
	waitFor(t, a, "usage arrives and the node is online", func() bool {
		var minutes int64
		env.DB.Gorm.Table("gpu_usage_minutes").Count(&minutes)
		return minutes >= 2 && admin.Get(page).Doc.Find(`[data-testid="agent-online"]`).Length() == 1
	})

	fault := filepath.Join(state, "sim", simgpu.SampleErrorFile)
	writeFile(t, fault, "GPU is lost\n")
	failed := time.Now()
	within(t, a, time.Minute, "the node page turns degraded", func() bool {
		doc := admin.Get(page).Doc
		return doc.Find(`[data-testid="agent-degraded"]`).Length() == 1 &&
			strings.Contains(doc.Find(`[data-testid="agent-sample-error"]`).Text(), "GPU is lost")
	})
	t.Logf("degraded on the node page %s after sampling began failing", time.Since(failed).Round(time.Second))
	status := admin.Get("/status").Doc.Find(`[data-testid="status-node-sim2"]`)
	if status.Find(`[data-testid="agent-degraded"]`).Length() != 1 || status.Find(`[data-testid="figures-stale"]`).Length() != 1 {
		t.Errorf("/status: node %q, want it degraded with its figures marked stale", status.Text())
	}
	out, err := exec.Command(bin, "status", "--config", conf).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SAMPLE ERROR since") || !strings.Contains(string(out), "GPU is lost") ||
		regexp.MustCompile(`-[0-9][0-9hms.]*s ago`).Match(out) {
		t.Errorf("gpubook-agent status: %v\n%s\nwant the sample error and no negative age", err, out)
	}

	if err := os.Remove(fault); err != nil {
		t.Fatal(err)
	}
	within(t, a, time.Minute, "the node page is online again", func() bool {
		doc := admin.Get(page).Doc
		return doc.Find(`[data-testid="agent-online"]`).Length() == 1 && doc.Find(`[data-testid="agent-sample-error"]`).Length() == 0
	})
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.done:
	case <-time.After(30 * time.Second):
		t.Errorf("agent still running 30 s after SIGTERM\n%s", a.logText())
	}
}

// within polls cond for at most d.
func within(t *testing.T, a *agentProc, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if cond() {
			return
		}
		select {
		case <-a.done:
			t.Fatalf("%s: the agent exited: %v\n%s", what, a.err, a.logText())
		default:
		}
	}
	t.Fatalf("%s: not within %s\n%s", what, d, a.logText())
}
