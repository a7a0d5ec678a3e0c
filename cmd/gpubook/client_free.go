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

// freeGPU is one unit (a GPU or a MIG instance) free from the start of a
// window, and until when.
type freeGPU struct {
	GPU       v1.GPU     `json:"gpu"`
	Name      string     `json:"name"`       // "GPU 3", "GPU 3 · 1g.10gb · 1/7"
	FreeUntil *time.Time `json:"free_until"` // nil: free beyond the horizon looked at
	at        int        // the GPU's index, its parent's for an instance
}

// freeFrom lists the in-service units of the kind profile asks for
// (unitFits), of node and model when given (any case), that no booking
// holds at from, each with the start of its next booking; bs are the
// bookings overlapping the window looked at. A MIG instance comes after
// its node's GPUs of lower index, before those of higher.
func freeFrom(gpus []v1.GPU, bs []v1.Booking, from time.Time, node, model, profile string) []freeGPU {
	byID := gpusByID(gpus)
	var out []freeGPU
	for _, g := range gpus {
		if !g.InService || !unitFits(g, profile) || (node != "" && !strings.EqualFold(g.Node, node)) || (model != "" && !strings.EqualFold(g.Model, model)) {
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
			at := g.Index
			if p, ok := byID[ptrOr(g.ParentID)]; ok {
				at = p.Index
			}
			out = append(out, freeGPU{GPU: g, Name: unitName(g, byID), FreeUntil: next, at: at})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.GPU.Node != b.GPU.Node {
			return a.GPU.Node < b.GPU.Node
		}
		if a.at != b.at {
			return a.at < b.at
		}
		return a.GPU.Index < b.GPU.Index
	})
	return out
}

// ptrOr is *p, or 0 for nil.
func ptrOr(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
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
	f := newClientFlags("free", "gpubook free [--model M] [--mig PROFILE] [--node N] [--for 4h] [--json]",
		"Lists the GPUs and MIG instances nobody holds now and until when each stays free (its next booking), in\nyour time zone; an instance is named by its GPU, profile and share (GPU 3 · 1g.10gb · 1/7). With --for,\nonly those free for at least that long; with --mig, only instances of that profile.")
	model := f.String("model", "", "only this GPU model: its name or a part of it, any case (l40s)")
	profile := f.String("mig", "", "only MIG instances of this profile, e.g. 1g.10gb")
	f.StringVar(profile, "profile", "", "the same as --mig")
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
	if *profile, err = c.matchProfile(ctx, api, *profile); err != nil {
		return err
	}
	if *profile == "" {
		*profile = anyUnit
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
	for _, g := range freeFrom(gpus, bs, now, *node, *model, *profile) {
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
	fmt.Fprintln(w, "NODE\tUNIT\tMODEL\tFREE FOR\tUNTIL")
	for _, g := range out {
		span, until := showSpan(horizon)+"+", "-"
		if g.FreeUntil != nil {
			span, until = showSpan(g.FreeUntil.Sub(now)), showTime(*g.FreeUntil, zone)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", show(g.GPU.Node), g.Name, show(g.GPU.Model), span, until)
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
