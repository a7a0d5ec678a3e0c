// Package loginenv computes what `gpubook-agent env` prints at login: shell
// code that sets CUDA_VISIBLE_DEVICES to the UUIDs of the GPUs the user has
// booked right now (a booked MIG instance as its "MIG-…" UUID, which CUDA
// takes there as it is), and a one-line hint for the terminal. It is pure (cache
// content, user and time in; text out) so every case is a table test.
package loginenv

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/models/wire"
)

// Result is the outcome for one user at one instant.
type Result struct {
	// Unchanged: print nothing (exempt users keep their environment).
	Unchanged bool
	// Visible is the GPU UUIDs to expose; empty means none.
	Visible []string
	// Hint is one line for stderr, or "".
	Hint string
}

// Shell renders r as POSIX shell code safe to eval. UUIDs were validated;
// an invalid one can never reach this text.
func (r Result) Shell() string {
	if r.Unchanged {
		return ""
	}
	return "export CUDA_VISIBLE_DEVICES=" + strings.Join(r.Visible, ",") + "; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n"
}

// Env returns r applied to an environment (for `gpubook-agent exec`).
func (r Result) Env(env []string) []string {
	if r.Unchanged {
		return env
	}
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CUDA_VISIBLE_DEVICES=") && !strings.HasPrefix(kv, "CUDA_DEVICE_ORDER=") {
			out = append(out, kv)
		}
	}
	return append(out, "CUDA_VISIBLE_DEVICES="+strings.Join(r.Visible, ","), "CUDA_DEVICE_ORDER=PCI_BUS_ID")
}

// Unavailable is the answer when the cache cannot be used: no GPUs (fail
// closed, like an unbooked user) and a hint that says why.
func Unavailable(why string) Result {
	return Result{Hint: "gpubook: GPU schedule unavailable (" + why + "); no GPUs visible — ask your admin"}
}

// Compute decides for user at now from the cache. The node's local time
// zone (loc) is used in the hint.
func Compute(f cache.File, user string, now time.Time, loc *time.Location) Result {
	index := unitIndex(f.GPUs)
	until := map[string]time.Time{} // GPU → end of the user's booking holding it now (the latest, when two do)
	var visible []string
	for _, b := range f.Schedule.Bookings {
		if b.User != user || !b.ActiveAt(now) {
			continue
		}
		for _, u := range b.GPUUUIDs {
			if !wire.ValidGPUUUID(u) {
				continue
			}
			if _, seen := until[u]; !seen {
				visible = append(visible, u)
			}
			if b.EndsAt.After(until[u]) {
				until[u] = b.EndsAt
			}
		}
	}
	sort.Slice(visible, func(i, j int) bool { return gpuLess(index, visible[i], visible[j]) })
	r := Result{Visible: visible}
	if len(visible) > 0 {
		r.Hint = "gpubook: " + bookedUntil(index, visible, until, now, loc)
	} else {
		r.Hint = noBookingHint(f, user, now, loc, index)
	}
	if age := now.Sub(f.FetchedAt); age > StaleAfter {
		r.Hint += fmt.Sprintf(" (schedule last synced %s ago)", age.Truncate(time.Minute))
	}
	return r
}

// bookedUntil names every end when overlapping bookings end at different
// times: "GPU 2 booked until 12:00, GPUs 3,5 until 14:00", earliest first.
func bookedUntil(index map[string]unit, visible []string, until map[string]time.Time, now time.Time, loc *time.Location) string {
	var ends []time.Time
	byEnd := map[time.Time][]string{}
	for _, u := range visible {
		e := until[u]
		if _, ok := byEnd[e]; !ok {
			ends = append(ends, e)
		}
		byEnd[e] = append(byEnd[e], u)
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i].Before(ends[j]) })
	parts := make([]string, len(ends))
	for i, e := range ends {
		verb := " until "
		if i == 0 {
			verb = " booked until "
		}
		parts[i] = gpuList(index, byEnd[e]) + verb + clock(e, now, loc)
	}
	return strings.Join(parts, ", ")
}

// StaleAfter is how old a cache may get before the hint says so: the daemon
// refreshes it every few minutes while the portal answers.
const StaleAfter = time.Hour

func noBookingHint(f cache.File, user string, now time.Time, loc *time.Location, index map[string]unit) string {
	var next *wire.Booking
	for i, b := range f.Schedule.Bookings {
		if b.User == user && b.StartsAt.After(now) && (next == nil || b.StartsAt.Before(next.StartsAt)) {
			next = &f.Schedule.Bookings[i]
		}
	}
	hint := "gpubook: no GPU booked now"
	if next != nil {
		hint += fmt.Sprintf(" — next: %s at %s", gpuList(index, next.GPUUUIDs), clock(next.StartsAt, now, loc))
	}
	if f.Schedule.PortalURL != "" {
		hint += "; book at " + f.Schedule.PortalURL
	}
	return hint
}

// unit is where a booked UUID sits on the node, for order and names: a
// GPU's index, and for a MIG instance also its place among the GPU's
// instances (-1 on a GPU) and its profile.
type unit struct {
	gpu, inst int
	profile   string
}

// unitIndex maps the node's GPUs and their MIG instances to their units.
func unitIndex(gpus []wire.GPU) map[string]unit {
	index := map[string]unit{}
	for _, g := range gpus {
		index[g.UUID] = unit{gpu: g.Index, inst: -1}
		for j, in := range g.Instances {
			index[in.UUID] = unit{gpu: g.Index, inst: j, profile: in.Profile}
		}
	}
	return index
}

// gpuList names units by index when known: "GPU 3", "GPUs 2,5", and a MIG
// instance by its GPU's index and its profile, as the portal shows it:
// "GPU 3 1g.10gb", "GPU 2, GPU 3 1g.10gb".
func gpuList(index map[string]unit, uuids []string) string {
	names := make([]string, 0, len(uuids))
	mig := false
	for _, u := range uuids {
		if x, ok := index[u]; ok {
			name := strconv.Itoa(x.gpu)
			if x.inst >= 0 {
				name, mig = name+" "+x.profile, true
			}
			names = append(names, name)
		} else if wire.ValidGPUUUID(u) {
			names = append(names, u)
		}
	}
	switch {
	case len(names) == 1:
		return "GPU " + names[0]
	case mig:
		return "GPU " + strings.Join(names, ", GPU ")
	}
	return "GPUs " + strings.Join(names, ",")
}

// gpuLess orders units by GPU index, a GPU's instances in NVML's order
// after it; unknown UUIDs last, by UUID.
func gpuLess(index map[string]unit, a, b string) bool {
	ia, oka := index[a]
	ib, okb := index[b]
	if oka && okb {
		if ia.gpu != ib.gpu {
			return ia.gpu < ib.gpu
		}
		return ia.inst < ib.inst
	}
	if oka != okb {
		return oka
	}
	return a < b
}

// clock shows "14:00" for today and "Tue 14:00" for another day.
func clock(t, now time.Time, loc *time.Location) string {
	t, now = t.In(loc), now.In(loc)
	if t.YearDay() == now.YearDay() && t.Year() == now.Year() {
		return t.Format("15:04")
	}
	return t.Format("Mon 15:04")
}
