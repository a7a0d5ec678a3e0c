package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	v1 "github.com/gpubook/gpubook/models/api"
)

// freeGPU is one GPU free from the start of a window, and until when.
type freeGPU struct {
	GPU       v1.GPU     `json:"gpu"`
	FreeUntil *time.Time `json:"free_until"` // nil: free beyond the horizon looked at
}

// freeFrom lists the in-service GPUs (of node and model when given, any
// case) that no booking holds at from, each with the start of its next
// booking; bs are the bookings overlapping the window looked at.
func freeFrom(gpus []v1.GPU, bs []v1.Booking, from time.Time, node, model string) []freeGPU {
	var out []freeGPU
	for _, g := range gpus {
		if !g.InService || (node != "" && !strings.EqualFold(g.Node, node)) || (model != "" && !strings.EqualFold(g.Model, model)) {
			continue
		}
		busy, next := false, (*time.Time)(nil)
		for _, b := range bs {
			if b.Status != "confirmed" || !holds(b, g.ID) || !b.EndsAt.After(from) {
				continue
			}
			if !b.StartsAt.After(from) {
				busy = true
				break
			}
			if next == nil || b.StartsAt.Before(*next) {
				s := b.StartsAt
				next = &s
			}
		}
		if !busy {
			out = append(out, freeGPU{GPU: g, FreeUntil: next})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].GPU.Node != out[j].GPU.Node {
			return out[i].GPU.Node < out[j].GPU.Node
		}
		return out[i].GPU.Index < out[j].GPU.Index
	})
	return out
}

func holds(b v1.Booking, gpu int64) bool {
	for _, id := range b.GPUIDs {
		if id == gpu {
			return true
		}
	}
	return false
}

// free answers "what is free now, and for how long".
func (c *cli) free(ctx context.Context, args []string) (err error) {
	f := newClientFlags("free", "gpubook free [--model M] [--node N] [--for 4h] [--json]",
		"Lists the GPUs nobody holds now and until when each stays free (its next booking), in your time zone.\nWith --for, only those free for at least that long.")
	model := f.String("model", "", "only this GPU model: its name or a part of it, any case (l40s)")
	node := f.String("node", "", "only this node")
	forS := f.String("for", "", "only GPUs free for at least this long (e.g. 4h)")
	jsonOut := f.Bool("json", false, "print JSON")
	defer func() { err = c.jsonError(*jsonOut, err) }()
	if _, _, err := f.parse(c, args, 0, 0); err != nil {
		return err
	}
	var need time.Duration
	if *forS != "" {
		if need, err = parseSpan("for", *forS); err != nil {
			return err
		}
	}
	api, err := c.apiFromEnv()
	if err != nil {
		return err
	}
	zone, err := api.userZone(ctx)
	if err != nil {
		return err
	}
	if *model, err = c.matchModel(ctx, api, *model); err != nil {
		return err
	}
	now := c.now().Truncate(time.Second)
	horizon := min(max(need, 7*24*time.Hour), listAhead) // the API lists at most 62 days
	gpus, err := api.gpus(ctx)
	if err != nil {
		return err
	}
	bs, err := api.bookings(ctx, now, now.Add(horizon), false)
	if err != nil {
		return err
	}
	var out []freeGPU
	for _, g := range freeFrom(gpus, bs, now, *node, *model) {
		if g.FreeUntil == nil || g.FreeUntil.Sub(now) >= need {
			out = append(out, g)
		}
	}
	if *jsonOut {
		return printJSON(c.stdout, map[string]any{"now": now.UTC(), "horizon": now.Add(horizon).UTC(), "free": nonNil(out)})
	}
	if len(out) == 0 {
		fmt.Fprintln(c.stdout, "Nothing matching is free now.")
		return nil
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tGPU\tMODEL\tFREE FOR\tUNTIL")
	for _, g := range out {
		span, until := showSpan(horizon)+"+", "-"
		if g.FreeUntil != nil {
			span, until = showSpan(g.FreeUntil.Sub(now)), showTime(*g.FreeUntil, zone)
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\n", show(g.GPU.Node), g.GPU.Index, show(g.GPU.Model), span, until)
	}
	return w.Flush()
}

// nonNil keeps an empty list [] in JSON.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
