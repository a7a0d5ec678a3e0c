// Command gpubook-agent runs on every GPU node: it keeps the node's booking
// schedule cached, sets CUDA_VISIBLE_DEVICES at login, samples the GPUs,
// detects unbooked use and idle bookings, and reports to the portal.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/gpubook/gpubook/agent/lock"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	lock.MaybeSelfCheckChild() // the lock's self-check runs this binary as its probe child
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr)
	stop()
	var code exitCode
	if errors.As(err, &code) {
		os.Exit(int(code))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// exitCode makes run return a child's exit status (exec) without printing.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

const usage = `gpubook-agent — the gpubook node agent

Usage: gpubook-agent <command> [flags]

Commands:
  run      run the daemon (as root, under systemd)
  enroll   exchange an enrolment token for this node's credential
  env      print shell code that sets CUDA_VISIBLE_DEVICES for your bookings
  exec     run a command with CUDA_VISIBLE_DEVICES recomputed now
  status   show the GPUs, who holds each, what runs, sync and spool state
  probe    show what NVML sees
  unlock   remove every cgroup device rule the agent made (enforce = lock)
  version  print the version

Every command takes --config FILE (default /etc/gpubook/agent.conf, or
$GPUBOOK_AGENT_CONFIG) and --help.
`

// run dispatches to a subcommand. It is main without the process globals,
// so tests call it directly.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return errors.New("gpubook-agent: no command")
	}
	cmd, rest := args[1], args[2:]
	switch cmd {
	case "run":
		return cmdRun(ctx, rest, getenv, stdout, stderr)
	case "enroll":
		return cmdEnroll(ctx, rest, getenv, stdout, stderr)
	case "env":
		return cmdEnv(ctx, rest, getenv, stdout, stderr)
	case "exec":
		return cmdExec(ctx, rest, getenv, stdout, stderr)
	case "status":
		return cmdStatus(ctx, rest, getenv, stdout, stderr)
	case "probe":
		return cmdProbe(ctx, rest, getenv, stdout, stderr)
	case "unlock":
		return cmdUnlock(ctx, rest, getenv, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "gpubook-agent", version)
		return nil
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("gpubook-agent: unknown command %q", cmd)
}

// newFlags returns a FlagSet with the shared --config flag. ErrHelp from
// Parse is turned into a nil error by parseFlags.
func newFlags(name, summary string, stderr io.Writer, getenv func(string) string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("gpubook-agent "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := getenv("GPUBOOK_AGENT_CONFIG")
	if def == "" {
		def = defaultConfigPath
	}
	cfg := fs.String("config", def, "config file (key = value lines)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: gpubook-agent %s [flags]\n\n%s\n\nFlags:\n", name, summary)
		fs.PrintDefaults()
	}
	return fs, cfg
}

// errHelp tells a command that --help was printed and it should stop.
var errHelp = flag.ErrHelp

// parseFlags parses args. A bad flag has already been reported with the
// usage by the FlagSet, so it comes back as exit status 2, which main does
// not print again.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return exitCode(2)
	}
	return nil
}

// helpOK maps errHelp to success.
func helpOK(err error) error {
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}
