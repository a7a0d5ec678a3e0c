package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpubook/gpubook/models"
	v1 "github.com/gpubook/gpubook/models/api"
)

// request files a priority request: what a booking refused by policy (or
// in others' way) needs, with the justification a team lead decides on.
func (c *cli) request(ctx context.Context, args []string) (err error) {
	f := newClientFlags("request", "gpubook request --gpus N --for 8h [--at TIME] [--node N] [--model M] --purpose … --urgency … --plan … --give-back … [--preempt] [--note …] [--json]",
		"Files a priority request for N GPUs of one node (on a GPU node: that node). It holds nothing until a lead of\nyour team or an admin approves it in the portal; 'gpubook ls' then shows the booking.")
	var a bookArgs
	f.IntVar(&a.n, "gpus", 1, "how many GPUs")
	f.StringVar(&a.node, "node", "", "on this node (default: this machine, when it is a GPU node, else the first node with enough GPUs)")
	anyNode := f.Bool("any-node", false, "on any node, also when run on a GPU node")
	f.StringVar(&a.model, "model", "", "GPU model: its name or a part of it, any case (l40s)")
	forS := f.String("for", "", "how long, e.g. 8h (required)")
	atS := f.String("at", "", "start at 15:04, 2006-01-02 15:04 (your zone) or RFC 3339 (default: now)")
	f.StringVar(&a.note, "note", "", "a note shown on the calendar")
	purpose := f.String("purpose", "", "what it is for (required)")
	urgency := f.String("urgency", "", "why it cannot wait (required)")
	plan := f.String("plan", "", "what runs, and how long (required)")
	giveBack := f.String("give-back", "", "when the GPUs are given back (required)")
	preempt := f.Bool("preempt", false, "ask that standard bookings in the way may be cancelled or trimmed")
	jsonOut := f.Bool("json", false, "print the request as JSON")
	defer func() { err = c.jsonError(*jsonOut, err) }()
	if _, _, err := f.parse(c, args, 0, 0); err != nil {
		return err
	}
	if *forS == "" {
		return errors.New("request: --for is required (e.g. --for 8h)")
	}
	if a.span, err = parseSpan("for", *forS); err != nil {
		return err
	}
	assumed := ""
	if a.node == "" && !*anyNode {
		a.node = localNode(c.getenv)
		assumed = a.node
	}
	s, err := c.session(ctx)
	if err != nil {
		return err
	}
	if a.model, err = c.matchModel(ctx, s.api, a.model); err != nil {
		return err
	}
	start := c.now().Truncate(time.Second)
	if *atS != "" {
		if start, err = parseAt(*atS, s.zone, c.now()); err != nil {
			return err
		}
	}
	ids, err := c.requestGPUs(ctx, s.api, a, start)
	if err != nil {
		return assumedNode(err, assumed)
	}
	req := v1.NewRequest{GPUIDs: ids, StartsAt: start.UTC().Truncate(time.Second), EndsAt: start.Add(a.span).UTC().Truncate(time.Second),
		Note: a.note, Purpose: *purpose, Urgency: *urgency, Plan: *plan, GiveBack: *giveBack, Preempt: *preempt}
	var raw json.RawMessage
	if err := s.api.call(ctx, http.MethodPost, v1.PathRequests, nil, req, &raw); err != nil {
		return assumedNode(err, assumed)
	}
	if *jsonOut {
		return printJSON(c.stdout, raw)
	}
	var r v1.Request
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("request: the portal's answer is not what the API documents: %w", err)
	}
	fmt.Fprintf(c.stdout, "Request #%d filed (%s): %s, %s – %s. A lead of your team or an admin decides it in the portal.\n",
		r.ID, show(r.Status), describeAsk(a), showTime(start, s.zone), showTime(start.Add(a.span), s.zone))
	return nil
}

// requestGPUs picks N in-service GPUs of one node, those free in the
// window first, lowest index next: a request names GPUs, and the ones in
// nobody's way are the easiest to grant.
func (c *cli) requestGPUs(ctx context.Context, api *apiClient, a bookArgs, start time.Time) ([]int64, error) {
	gpus, err := api.gpus(ctx)
	if err != nil {
		return nil, err
	}
	bs, err := api.bookings(ctx, start, start.Add(a.span), false)
	if err != nil {
		return nil, err
	}
	free := map[int64]bool{}
	for _, g := range freeFrom(gpus, bs, start, a.node, a.model, "") {
		free[g.GPU.ID] = g.FreeUntil == nil || !g.FreeUntil.Before(start.Add(a.span))
	}
	byNode := map[string][]v1.GPU{}
	var nodes []string
	for _, g := range gpus {
		if !g.InService || !unitFits(g, "") || (a.node != "" && !strings.EqualFold(g.Node, a.node)) || (a.model != "" && !strings.EqualFold(g.Model, a.model)) {
			continue
		}
		if _, ok := byNode[g.Node]; !ok {
			nodes = append(nodes, g.Node)
		}
		byNode[g.Node] = append(byNode[g.Node], g)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		gs := byNode[n]
		if len(gs) < a.n {
			continue
		}
		sort.SliceStable(gs, func(i, j int) bool {
			if free[gs[i].ID] != free[gs[j].ID] {
				return free[gs[i].ID]
			}
			return gs[i].Index < gs[j].Index
		})
		ids := make([]int64, a.n)
		for i := range ids {
			ids[i] = gs[i].ID
		}
		return ids, nil
	}
	return nil, fmt.Errorf("request: no node has %d in-service GPUs matching %s", a.n, describeAsk(a))
}

func (c *cli) limits(ctx context.Context, args []string) (err error) {
	f := newClientFlags("limits", "gpubook limits [--json]", "Shows the booking rules that apply to you now, where each is set, and this week's GPU-hours.")
	jsonOut := f.Bool("json", false, "print JSON as the API answers")
	defer func() { err = c.jsonError(*jsonOut, err) }()
	if _, _, err := f.parse(c, args, 0, 0); err != nil {
		return err
	}
	s, err := c.session(ctx)
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if err := s.api.call(ctx, http.MethodGet, v1.PathLimits, nil, nil, &raw); err != nil {
		return err
	}
	if *jsonOut {
		return printJSON(c.stdout, raw)
	}
	var l v1.Limits
	if err := json.Unmarshal(raw, &l); err != nil {
		return err
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RULE\tLIMIT\tSET BY")
	for _, r := range l.Limits {
		fmt.Fprintf(w, "%s\t%s\t%s\n", c.limitWords(r.Rule, r.Period), showLimit(r.Value, r.Unit), c.limitSource(r.Source, r.SourceName))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	week := fmt.Sprintf("This week (from %s): %s GPU-hours used", showTime(l.WeekStart, s.zone), hours(l.UsedGPUMinutes))
	if w := l.WeeklyGPUMinutes; w != nil {
		week += fmt.Sprintf(" of %s, %s left", hours(*w+l.LoanBalance), hours(max(0, *w+l.LoanBalance-l.UsedGPUMinutes)))
	}
	fmt.Fprintln(c.stdout, week+".")
	if l.Exempt {
		fmt.Fprintln(c.stdout, "You are an admin exempt from these limits.")
	}
	return nil
}

func showLimit(v int64, unit string) string {
	switch unit {
	case "gpus":
		return fmt.Sprintf("%d GPUs", v)
	case "gpu_minutes":
		return hours(v) + " GPU-hours"
	}
	return showSpan(time.Duration(v) * time.Minute)
}

// hours is GPU-minutes as GPU-hours, in the portal's one format.
func hours(minutes int64) string { return models.FormatMinutesAsHours(minutes) }
