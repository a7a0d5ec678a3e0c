package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpubook/gpubook/agent/nvmlgpu"
)

// cmdProbe prints what NVML sees: driver, GPUs, one sample. It is the first
// thing to run on a new node.
func cmdProbe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, _ := newFlags("probe", "Show what NVML sees on this node: driver, GPUs, a sample of each.", stderr, getenv)
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	return probe(ctx, nvml.New(), stdout)
}

// probe is cmdProbe on any nvml.Interface (tests pass a go-nvml mock).
func probe(ctx context.Context, lib nvml.Interface, w io.Writer) error {
	b, err := nvmlgpu.Open(lib)
	if err != nil {
		return fmt.Errorf("NVML unavailable: %w", err)
	}
	defer b.Close()
	fmt.Fprintln(w, "driver:", b.DriverVersion())
	devs, err := b.Devices(ctx)
	if err != nil {
		return err
	}
	samples, sampleErr := b.Sample(ctx)
	byUUID := map[string]int{}
	for i, s := range samples {
		byUUID[s.UUID] = i
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tUUID\tMODEL\tMINOR\tMIG\tUTIL\tMEMORY (MiB)\tPIDS")
	for _, d := range devs {
		util, mem, pids := "-", "-", "-"
		if i, ok := byUUID[d.UUID]; ok {
			s := samples[i]
			if s.UtilValid {
				util = fmt.Sprintf("%.0f%%", s.UtilPct)
			}
			mem = fmt.Sprintf("%d / %d", s.MemUsedMiB, s.MemTotalMiB)
			pids = fmt.Sprint(len(s.Processes))
			for _, p := range s.Processes {
				pids += fmt.Sprintf(" %d(%dMiB)", p.PID, p.MemMiB)
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%v\t%s\t%s\t%s\n", d.Index, d.UUID, d.Model, d.Minor, d.MIG, util, mem, pids)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if sampleErr != nil {
		fmt.Fprintln(w, "sample errors:", sampleErr)
	}
	return nil
}
