package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpubook/gpubook/agent/daemon"
	"github.com/gpubook/gpubook/models/wire"
)

// cmdStatus prints the daemon's last view of the node. It reads the status
// file the daemon rewrites after every sample, so it needs neither root nor NVML.
func cmdStatus(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("status", "Show the node's GPUs, who holds each now, what runs on each, and sync and spool state.", stderr, getenv)
	asJSON := fs.Bool("json", false, "print the raw status JSON")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	cfg, err := loadConfig(*cfgPath, getenv)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(cfg.statusPath())
	if err != nil {
		return fmt.Errorf("agent: status: %w (is the daemon running?)", err)
	}
	if *asJSON {
		_, err := stdout.Write(data)
		return err
	}
	var st daemon.Status
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("agent: status: %w", err)
	}
	return printStatus(stdout, st, daemonNow(cfg, time.Now()))
}

func printStatus(w io.Writer, st daemon.Status, now time.Time) error {
	fmt.Fprintf(w, "node %s, sampled %s, NVML ok: %v\n", st.Node, ago(now, st.At), st.NVMLOK)
	if !st.NVMLDownSince.IsZero() {
		fmt.Fprintf(w, "NO NVML since %s (%s): no sampling or enforcement; retrying\n", ago(now, st.NVMLDownSince), st.NVMLError)
	}
	printLock(w, st)
	if st.SampleError != "" {
		fmt.Fprintf(w, "SAMPLE ERROR since %s: %s\n", ago(now, st.SampleFailingSince), st.SampleError)
	}
	if st.MetricsProblem != "" {
		fmt.Fprintln(w, "metrics: NOT served:", st.MetricsProblem)
	}
	fmt.Fprintf(w, "portal: last sync %s", ago(now, st.LastSync))
	if st.SyncError != "" {
		fmt.Fprintf(w, ", last error: %s", st.SyncError)
	}
	fmt.Fprintf(w, "\nschedule: fetched %s (etag %s)\n", ago(now, st.ScheduleAt), st.ScheduleETag)
	fmt.Fprintf(w, "spool: %d waiting (%d bytes)", st.SpoolDepth, st.SpoolBytes)
	if st.SpoolDepth > 0 {
		fmt.Fprintf(w, ", oldest %s", ago(now, st.OldestSpooled))
	}
	fmt.Fprintln(w)
	if st.SetAside > 0 {
		fmt.Fprintf(w, "spool: %d set aside as invalid (newest: %s)\n", st.SetAside, st.SetAsideReason)
	}
	if n := sum(st.Dropped); n > 0 {
		fmt.Fprintf(w, "spool: %d dropped at the limits (usage %d, violations %d, idle %d)\n", n, st.Dropped["usage"], st.Dropped["violations"], st.Dropped["idle"])
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tMODEL\tUTIL\tMEMORY (MiB)\tBOOKED BY\tRUNNING")
	for _, g := range st.GPUs {
		util := "n/a (MIG)"
		if g.UtilValid {
			util = fmt.Sprintf("%.0f%%", g.UtilPct)
		} else if !g.MIG {
			util = "-"
		}
		holder := "-"
		if g.Holder != "" {
			holder = fmt.Sprintf("%s until %s", g.Holder, g.HeldUntil.Local().Format("Mon 15:04"))
		}
		var procs []string
		for _, p := range g.Procs {
			procs = append(procs, fmt.Sprintf("%s:%d(%dMiB)", p.User, p.PID, p.MemMiB))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d / %d\t%s\t%s\n", g.Index, g.Model, util, g.MemUsedMiB, g.MemTotalMiB, holder, strings.Join(procs, " "))
	}
	return tw.Flush()
}

// printLock says how bookings are enforced; a node that was asked to lock
// and cannot says so in capitals.
func printLock(w io.Writer, st daemon.Status) {
	switch {
	case st.Lock == "":
	case wire.LockFailed(st.Lock) || wire.LockIdle(st.Lock):
		fmt.Fprintf(w, "enforce: NOT LOCKED: %s\n", st.Lock)
	case strings.HasPrefix(st.Lock, "lock v1"):
		fmt.Fprintf(w, "enforce: %s (v1 refuses opens without counting them: refused opens are not reported; cgroup2 reports them)\n", st.Lock)
	default:
		fmt.Fprintf(w, "enforce: %s\n", st.Lock)
	}
	if st.LockError != "" {
		fmt.Fprintf(w, "lock: device rules NOT fully applied: %s\n", st.LockError)
	}
}

// daemonNow is now on the daemon's clock, which the status file's times
// are in: a simulated node's runs sim_clock_ahead ahead of the host's.
func daemonNow(cfg config, now time.Time) time.Time {
	if cfg.GPU == "simulated" {
		return now.Add(cfg.Sim.ClockAhead)
	}
	return now
}

// ago says how long before now t was. A t after now (a clock stepped
// back, or another clock ahead of this one) is never a negative age.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	switch d := now.Sub(t).Truncate(time.Second); {
	case d >= 0:
		return d.String() + " ago"
	case d > -2*time.Second:
		return "just now"
	default:
		return fmt.Sprintf("just now (by a clock %s ahead of this one)", -d)
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
