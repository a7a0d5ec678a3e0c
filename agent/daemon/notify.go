package daemon

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/gpubook/gpubook/agent/procfs"
)

// KillSignaller sends real signals (detect.Signaller for production). It
// refuses, whatever the exemption settings say, PID 1 and below, processes
// of UID 0, and the agent itself with its descendants (the hooks and tools
// it starts): no configuration can make the agent hit those.
type KillSignaller struct {
	Root string // /proc when empty
	Self int    // the agent's PID; os.Getpid() when 0
}

// NewSignalGuard returns the KillSignaller for the agent process self.
func NewSignalGuard(procRoot string, self int) KillSignaller {
	return KillSignaller{Root: procRoot, Self: self}
}

// ErrProtected is returned for a process the agent never signals.
var ErrProtected = errors.New("agent: protected process")

// Signal sends sig to pid after the checks above.
func (k KillSignaller) Signal(pid int, sig syscall.Signal) error {
	if err := k.check(pid); err != nil {
		return err
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("agent: kill %d: %w", pid, err)
	}
	return nil
}

func (k KillSignaller) check(pid int) error {
	self := k.Self
	if self == 0 {
		self = os.Getpid()
	}
	if pid <= 1 || pid == self {
		return fmt.Errorf("%w: pid %d", ErrProtected, pid)
	}
	res := procfs.New(cmpOr(k.Root, "/proc"), "", "")
	uid, err := res.UID(pid)
	if err != nil {
		return fmt.Errorf("agent: kill %d: %w", pid, err)
	}
	if uid == 0 {
		return fmt.Errorf("%w: pid %d runs as root", ErrProtected, pid)
	}
	for p, hops := pid, 0; p > 1 && hops < 4096; hops++ { // walk up to init; bounded against loops
		ppid, _, err := res.Stat(p)
		if err != nil {
			return fmt.Errorf("agent: kill %d: ancestry: %w", pid, err)
		}
		if ppid == self {
			return fmt.Errorf("%w: pid %d descends from the agent", ErrProtected, pid)
		}
		p = ppid
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TTYFinder lists a user's terminals; procfs.Resolver implements it.
type TTYFinder interface {
	TTYs(uid int) []string
}

// TTYNotifier writes messages to every pseudo-terminal of a user, like
// wall(1) for one person (detect.Notifier for production).
type TTYNotifier struct {
	TTYs TTYFinder
}

// Notify writes msg to uid's terminals. O_NONBLOCK so a stuck terminal
// cannot stall the sampler; O_NOCTTY so root never acquires it.
func (n TTYNotifier) Notify(uid int, _ string, msg string) error {
	var errs []error
	for _, tty := range n.TTYs.TTYs(uid) {
		f, err := os.OpenFile(tty, os.O_WRONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		_, err = f.WriteString("\r\n\a" + msg + "\r\n")
		_ = f.Close()
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
