package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	v1 "github.com/gpubook/gpubook/models/api"
)

// bookArgs is what book was asked for.
type bookArgs struct {
	n           int
	node, model string
	profile     string // a MIG profile: book instances of it, not whole GPUs
	span        time.Duration
	at          time.Time // zero: now
	note        string
	wait        time.Duration
}

func (c *cli) book(ctx context.Context, args []string) (err error) {
	f := newClientFlags("book", "gpubook book (--gpus N | --mig PROFILE [-n N]) --for 4h [--node N] [--model M] [--at TIME] [--note TEXT] [--wait 30m] [--short|--json]",
		"Books N GPUs of one node for a length of time, or with --mig N MIG instances (slices of a GPU) of that\nprofile, e.g. 1g.10gb: now when they are free, else at the earliest slot (/api/v1/slots).\nWith --at, at that time or not at all. With --wait, waits (up to that long) until the booking can start\nnow, polling the portal with backoff. On a GPU node without --node, books on that node.\nPrints the booking and an export line; --short prints only the UUIDs (GPU-… or MIG-…), comma-separated:\n  v=$(gpubook book --gpus 2 --for 4h --short) || exit 1; export CUDA_VISIBLE_DEVICES=$v\n(a refusal prints nothing on stdout and exits 1; the plain export=$(…) form would export an empty list).")
	var a bookArgs
	f.IntVar(&a.n, "gpus", 1, "how many GPUs (with --mig: how many MIG instances)")
	f.IntVar(&a.n, "n", 1, "the same as --gpus")
	f.StringVar(&a.profile, "mig", "", "book MIG instances of this profile (1g.10gb) instead of whole GPUs")
	f.StringVar(&a.profile, "profile", "", "the same as --mig")
	f.StringVar(&a.node, "node", "", "on this node (default: this machine, when it is a GPU node)")
	anyNode := f.Bool("any-node", false, "on any node, also when run on a GPU node")
	f.StringVar(&a.model, "model", "", "GPU model: its name or a part of it, any case (l40s)")
	forS := f.String("for", "", "how long, e.g. 90m, 4h, 2d (required)")
	atS := f.String("at", "", "start at 15:04, 2006-01-02 15:04 (your zone) or RFC 3339")
	f.StringVar(&a.note, "note", "", "a note shown on the calendar")
	waitS := f.String("wait", "", "wait up to this long for the GPUs to be free now")
	short := f.Bool("short", false, "print only the GPU UUIDs, comma-separated (nothing on a refusal: see README for the safe form)")
	jsonOut := f.Bool("json", false, "print the booking as JSON")
	defer func() { err = c.jsonError(*jsonOut, err) }()
	if _, _, err := f.parse(c, args, 0, 0); err != nil {
		return err
	}
	if *forS == "" {
		return errors.New("book: --for is required (e.g. --for 4h)")
	}
	if a.span, err = parseSpan("for", *forS); err != nil {
		return err
	}
	if *waitS != "" {
		if a.wait, err = parseSpan("wait", *waitS); err != nil {
			return err
		}
	}
	assumed := ""
	if a.node == "" && !*anyNode {
		a.node = localNode(c.getenv)
		assumed = a.node
	}
	api, err := c.apiFromEnv()
	if err != nil {
		return err
	}
	zone, err := api.userZone(ctx)
	if err != nil {
		return err
	}
	if *atS != "" {
		if a.at, err = parseAt(*atS, zone, c.now()); err != nil {
			return err
		}
	}
	if a.model, err = c.matchModel(ctx, api, a.model); err != nil {
		return err
	}
	if a.profile, err = c.matchProfile(ctx, api, a.profile); err != nil {
		return err
	}
	raw, b, err := c.bookLoop(ctx, api, a, zone)
	if err != nil {
		return assumedNode(err, assumed)
	}
	switch {
	case *short:
		fmt.Fprintln(c.stdout, strings.Join(showAll(b.GPUUUIDs), ","))
	case *jsonOut:
		return printJSON(c.stdout, raw)
	default:
		units, err := bookingUnits(ctx, api, b)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "Booked #%d: %s on %s, %s – %s\n", b.ID, unitsWords(b.GPUIDs, units), show(b.Node), showTime(b.StartsAt, zone), showTime(b.EndsAt, zone))
		fmt.Fprintf(c.stdout, "export CUDA_VISIBLE_DEVICES=%s\n", strings.Join(showAll(b.GPUUUIDs), ","))
	}
	return nil
}

// bookLoop books now (or at --at) when the GPUs are free; otherwise the
// earliest slot, or with --wait polls until they are free now.
func (c *cli) bookLoop(ctx context.Context, api *apiClient, a bookArgs, zone *time.Location) (json.RawMessage, v1.Booking, error) {
	began := c.now()
	deadline := began.Add(a.wait)
	pause := c.pollMin
	checks := 0
	for {
		start := a.at
		if start.IsZero() {
			start = c.now().Truncate(time.Second)
		}
		raw, b, err := c.tryBook(ctx, api, a, start)
		if err == nil || !errors.Is(err, errNotFree) {
			if a.wait > 0 && err == nil {
				fmt.Fprintln(c.stderr)
			}
			return raw, b, err
		}
		slots, err := api.slots(ctx, a.n, a.span, a.model, a.node, a.profile, start)
		if err != nil {
			return nil, b, err
		}
		what := describeAsk(a)
		switch {
		case len(slots) == 0:
			return nil, b, fmt.Errorf("book: %s: no slot within the booking horizon", what)
		case a.wait <= 0 && !a.at.IsZero():
			return nil, b, fmt.Errorf("book: %s is not free at %s; the earliest slot is %s on %s", what, showTime(a.at, zone), showTime(slots[0].StartsAt, zone), show(slots[0].Node))
		case a.wait <= 0:
			return c.create(ctx, api, slots[0].GPUIDs, slots[0].StartsAt, slots[0].EndsAt, a.note)
		}
		now := c.now()
		if !now.Add(pause).Before(deadline) {
			fmt.Fprintln(c.stderr)
			return nil, b, fmt.Errorf("book: gave up after %s waiting for %s; the earliest slot is %s on %s", showSpan(a.wait), what, showTime(slots[0].StartsAt, zone), show(slots[0].Node))
		}
		checks++
		fmt.Fprintf(c.stderr, "\rwaiting for %s: %s of %s waited, %d checks, next in %s; earliest slot %s on %s ", what, waitClock(now.Sub(began)), showSpan(a.wait),
			checks, waitClock(pause), showTime(slots[0].StartsAt, zone), show(slots[0].Node))
		select {
		case <-ctx.Done():
			fmt.Fprintln(c.stderr)
			return nil, b, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(pause*2, 30*time.Second)
	}
}

// errNotFree says the asked GPUs are not free for the whole window.
var errNotFree = errors.New("not free")

// tryBook books [start, start+span) on the first node with enough GPUs
// free for all of it; errNotFree when there is none, or when someone else
// took them between the look and the booking.
func (c *cli) tryBook(ctx context.Context, api *apiClient, a bookArgs, start time.Time) (json.RawMessage, v1.Booking, error) {
	end := start.Add(a.span)
	gpus, err := api.gpus(ctx)
	if err != nil {
		return nil, v1.Booking{}, err
	}
	bs, err := api.bookings(ctx, start, end, false)
	if err != nil {
		return nil, v1.Booking{}, err
	}
	byNode := map[string][]int64{}
	var order []string
	for _, g := range freeFrom(gpus, bs, start, a.node, a.model, a.profile) {
		if g.FreeUntil != nil && g.FreeUntil.Before(end) {
			continue
		}
		if _, ok := byNode[g.GPU.Node]; !ok {
			order = append(order, g.GPU.Node)
		}
		byNode[g.GPU.Node] = append(byNode[g.GPU.Node], g.GPU.ID)
	}
	for _, n := range order {
		if ids := byNode[n]; len(ids) >= a.n {
			raw, b, err := c.create(ctx, api, ids[:a.n], start, end, a.note)
			if isRefusal(err, "conflict") {
				return nil, b, errNotFree
			}
			return raw, b, err
		}
	}
	return nil, v1.Booking{}, errNotFree
}

func (c *cli) create(ctx context.Context, api *apiClient, ids []int64, start, end time.Time, note string) (json.RawMessage, v1.Booking, error) {
	body := v1.NewBooking{GPUIDs: ids, StartsAt: start.UTC().Truncate(time.Second), EndsAt: end.UTC().Truncate(time.Second), Note: note}
	var raw json.RawMessage
	var b v1.Booking
	if err := api.call(ctx, http.MethodPost, v1.PathBookings, nil, body, &raw); err != nil {
		return nil, b, err
	}
	return raw, b, json.Unmarshal(raw, &b)
}

// describeAsk is the request in words: "2 × A100 on node-a for 4h",
// "1 × MIG 1g.10gb for 4h".
func describeAsk(a bookArgs) string {
	s := fmt.Sprintf("%d × %s", a.n, cmp(a.model, "any GPU"))
	if a.profile != "" {
		s = fmt.Sprintf("%d × MIG %s", a.n, a.profile)
		if a.model != "" {
			s += " of " + a.model
		}
	}
	if a.node != "" {
		s += " on " + a.node
	}
	return s + " for " + showSpan(a.span)
}

// cmp returns s, or def when s is empty.
func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// waitClock is a wait's elapsed time to the second, "0:05" or "1:02:03": the
// --wait progress line moves at every check, where minutes stood still.
func waitClock(d time.Duration) string {
	sec := int64(d.Round(time.Second) / time.Second)
	if sec >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", sec/3600, sec%3600/60, sec%60)
	}
	return fmt.Sprintf("%d:%02d", sec/60, sec%60)
}
