package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"text/tabwriter"
	"time"

	v1 "github.com/gpubook/gpubook/models/api"
)

// listAhead is how far ls looks: the API lists at most 62 days at once,
// and no booking may start further ahead than that.
const listAhead = 61 * 24 * time.Hour

// clientSession is what most client commands start with: the API, the
// user's zone and a flag set with --json.
type clientSession struct {
	api  *apiClient
	zone *time.Location
}

func (c *cli) session(ctx context.Context) (clientSession, error) {
	api, err := c.apiFromEnv()
	if err != nil {
		return clientSession{}, err
	}
	zone, err := api.userZone(ctx)
	return clientSession{api: api, zone: zone}, err
}

// myBookings lists the user's bookings that have not ended.
func (c *cli) myBookings(ctx context.Context, api *apiClient) ([]v1.Booking, json.RawMessage, error) {
	now := c.now().Truncate(time.Second)
	var raw json.RawMessage
	q := v1.BookingsQuery{From: now, To: now.Add(listAhead), Mine: true}
	if err := api.call(ctx, http.MethodGet, v1.PathBookings, q.Values(), nil, &raw); err != nil {
		return nil, nil, err
	}
	var out v1.BookingList
	return out.Bookings, raw, json.Unmarshal(raw, &out)
}

func (c *cli) ls(ctx context.Context, args []string) (err error) {
	f := newClientFlags("ls", "gpubook ls [--json]", "Lists your bookings that have not ended, by start, in your time zone.")
	jsonOut := f.Bool("json", false, "print JSON ({\"bookings\": […]} as the API answers)")
	defer func() { err = c.jsonError(*jsonOut, err) }()
	if _, _, err := f.parse(c, args, 0, 0); err != nil {
		return err
	}
	s, err := c.session(ctx)
	if err != nil {
		return err
	}
	bs, raw, err := c.myBookings(ctx, s.api)
	if err != nil {
		return err
	}
	if *jsonOut {
		return printJSON(c.stdout, raw)
	}
	if len(bs) == 0 {
		fmt.Fprintln(c.stdout, "You have no current or upcoming bookings.")
		return nil
	}
	units, err := bookingUnits(ctx, s.api, bs...)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNODE\tGPUS\tSTART\tEND\tPHASE\tNOTE")
	for _, b := range bs {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", b.ID, show(b.Node), lsUnits(b, units), showTime(b.StartsAt, s.zone), showTime(b.EndsAt, s.zone), show(b.Phase), show(b.Note))
	}
	return w.Flush()
}

// lsUnits is ls's GPUS column: the count for whole GPUs, as always; the
// instances by GPU and profile for a booking of MIG instances.
func lsUnits(b v1.Booking, units map[int64]v1.GPU) string {
	if !hasMIG(b) {
		return strconv.Itoa(len(b.GPUIDs))
	}
	return unitsWords(b.GPUIDs, units)
}

// oneBooking parses the ID argument and finds it among the user's bookings.
func (c *cli) oneBooking(ctx context.Context, api *apiClient, arg string) (v1.Booking, bool, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return v1.Booking{}, false, fmt.Errorf("%q is not a booking ID (see 'gpubook ls')", arg)
	}
	bs, _, err := c.myBookings(ctx, api)
	if err != nil {
		return v1.Booking{}, false, err
	}
	for _, b := range bs {
		if b.ID == id {
			return b, true, nil
		}
	}
	return v1.Booking{ID: id}, false, nil
}

func (c *cli) extend(ctx context.Context, args []string) (err error) {
	f := newClientFlags("extend", "gpubook extend ID (--by 2h | --until TIME) [--json]",
		"Moves the end of one of your bookings later; someone else's booking later on is named in the refusal.")
	by := f.String("by", "", "extend by this long, e.g. 2h")
	until := f.String("until", "", "extend until 15:04, 2006-01-02 15:04 (your zone) or RFC 3339")
	jsonOut := f.Bool("json", false, "print the booking as JSON")
	defer func() { err = c.jsonError(*jsonOut, err) }()
	_, pos, err := f.parse(c, args, 1, 1)
	if err != nil {
		return err
	}
	if (*by == "") == (*until == "") {
		return fmt.Errorf("extend: give one of --by and --until")
	}
	s, err := c.session(ctx)
	if err != nil {
		return err
	}
	b, ok, err := c.oneBooking(ctx, s.api, pos[0])
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("extend: booking #%d is not one of your current bookings (see 'gpubook ls')", b.ID)
	}
	end := b.EndsAt
	if *by != "" {
		d, err := parseSpan("by", *by)
		if err != nil {
			return err
		}
		end = end.Add(d)
	} else if end, err = parseAt(*until, s.zone, c.now()); err != nil {
		return err
	}
	var raw json.RawMessage
	body := v1.Extend{EndsAt: end.UTC().Truncate(time.Second)}
	if err := s.api.call(ctx, http.MethodPost, v1.Path(v1.PathExtend, b.ID), nil, body, &raw); err != nil {
		return err
	}
	return c.printBooking(ctx, s.api, raw, s.zone, *jsonOut, "Extended")
}

func (c *cli) release(ctx context.Context, args []string) (err error) {
	f := newClientFlags("release", "gpubook release ID [--json]",
		"Ends one of your bookings now (its GPUs are free at once), or cancels it when it has not started.")
	jsonOut := f.Bool("json", false, "print the booking as JSON")
	defer func() { err = c.jsonError(*jsonOut, err) }()
	_, pos, err := f.parse(c, args, 1, 1)
	if err != nil {
		return err
	}
	s, err := c.session(ctx)
	if err != nil {
		return err
	}
	b, ok, err := c.oneBooking(ctx, s.api, pos[0])
	if err != nil {
		return err
	}
	method, path, verb := http.MethodPost, v1.Path(v1.PathRelease, b.ID), "Released"
	if ok && b.Phase == "upcoming" {
		method, path, verb = http.MethodDelete, v1.Path(v1.PathBooking, b.ID), "Cancelled"
	}
	var raw json.RawMessage
	if err := s.api.call(ctx, method, path, nil, nil, &raw); err != nil {
		return err
	}
	return c.printBooking(ctx, s.api, raw, s.zone, *jsonOut, verb)
}

// printBooking prints one booking the API answered, as JSON or one line.
func (c *cli) printBooking(ctx context.Context, api *apiClient, raw json.RawMessage, zone *time.Location, asJSON bool, verb string) error {
	if asJSON {
		return printJSON(c.stdout, raw)
	}
	var b v1.Booking
	if err := json.Unmarshal(raw, &b); err != nil {
		return err
	}
	units, err := bookingUnits(ctx, api, b)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s #%d: %s on %s, %s – %s (%s)\n", verb, b.ID, unitsWords(b.GPUIDs, units), show(b.Node), showTime(b.StartsAt, zone), showTime(b.EndsAt, zone), show(b.Phase))
	return nil
}
