package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"time"
)

// cmdExec runs CMD with CUDA_VISIBLE_DEVICES recomputed now, for a booking
// that started after login. The child shares our terminal; its exit status
// becomes ours.
func cmdExec(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("exec", "Run a command with CUDA_VISIBLE_DEVICES set to the GPUs you have booked now.\nUsage: gpubook-agent exec [flags] -- CMD [ARGS…]", stderr, getenv)
	userFlag := fs.String("user", "", "compute for this user instead of the invoking one")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fs.Usage()
		return errors.New("agent: exec: no command given")
	}
	r := computeEnvTimed(ctx, *cfgPath, *userFlag, getenv, time.Now())
	if r.Hint != "" {
		fmt.Fprintln(stderr, r.Hint)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = r.Env(os.Environ())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() < 0 { // killed by a signal
			return exitCode(1)
		}
		return exitCode(ee.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("agent: exec: %w", err)
	}
	return nil
}

func isNotExist(err error) bool   { return errors.Is(err, fs.ErrNotExist) }
func isPermission(err error) bool { return errors.Is(err, fs.ErrPermission) }
