package daemon

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// KillSignaller sends real signals (detect.Signaller for production).
type KillSignaller struct{}

// Signal sends sig to pid.
func (KillSignaller) Signal(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("agent: kill %d: %w", pid, err)
	}
	return nil
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
