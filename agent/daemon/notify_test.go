package daemon_test

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/daemon"
)

// TestKillSignallerRefusesProtected: PID 1, root's processes and the
// agent's own descendants are refused before any kill(2).
func TestKillSignallerRefusesProtected(t *testing.T) {
	procs := agenttest.NewProcs(t)
	const self = 500
	procs.AddStarted(t, 1, agenttest.UIDRoot, 0, 1)
	procs.AddStarted(t, 300, agenttest.UIDRoot, 1, 10)
	procs.AddStarted(t, self, agenttest.UIDRoot, 1, 20)
	procs.AddStarted(t, 501, agenttest.UIDBob, self, 30) // a hook the agent started
	procs.AddStarted(t, 502, agenttest.UIDBob, 501, 40)  // and its child
	k := daemon.NewSignalGuard(procs.Root, self)
	for _, pid := range []int{0, 1, 300, self, 501, 502} {
		if err := k.Signal(pid, syscall.SIGTERM); !errors.Is(err, daemon.ErrProtected) {
			t.Errorf("Signal(%d) = %v, want ErrProtected", pid, err)
		}
	}
}

// TestKillSignallerSignalsOthers: an ordinary process (a real child of the
// test, seen through the real /proc with a fake agent PID) is signalled.
func TestKillSignallerSignalsOthers(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if os.Getuid() == 0 { // a root child would be refused: run it as nobody
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	k := daemon.NewSignalGuard("/proc", 999999)
	if err := k.Signal(cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Errorf("sleep exited normally, want killed by SIGTERM")
	}
}
