package daemon

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/lock"
	"github.com/gpubook/gpubook/models/wire"
)

// RefusalCounter is what a Locker offers where the kernel counts what it
// refuses (lock.Locker on cgroup2): each call returns the refusals since
// the previous one.
type RefusalCounter interface {
	Refusals(now time.Time) ([]lock.Refusal, error)
}

// refusedGap ends an episode of refused opens: a user refused again on the
// same GPU within it updates the same violation (its last_seen); later,
// it is a new one.
const refusedGap = 10 * time.Minute

// refusedKey is one user's refusals on one GPU (its device file, or the
// MIG capability files of its instances).
type refusedKey struct {
	uid, minor int
	mig        bool
}

// refusedEpisode is the violation an episode is reported as.
type refusedEpisode struct {
	v wire.Violation
}

// reportRefusals reads what the lock refused since the last sample and
// spools it as refused_open violations, one per user, GPU and episode,
// with a stable ID so that each resend (a new refusal moves last_seen)
// updates the portal's row. gpus gives the UUIDs of the minors.
func (d *Daemon) reportRefusals(now time.Time, gpus []lock.GPU) {
	rc, ok := d.deps.Lock.(RefusalCounter)
	if !ok {
		return
	}
	rs, err := rc.Refusals(now)
	if err != nil {
		d.log.Warn("agent: lock: refused opens not read", "err", err)
	}
	vs := d.refusedViolations(now, rs, gpus)
	if len(vs) == 0 {
		return
	}
	if err := d.spoolEvents(detect.Events{Violations: vs}); err != nil {
		d.log.Error("agent: lock: refused opens not spooled", "err", err, "violations", len(vs))
	}
}

// refusedViolations turns refusals into violations and keeps the episodes.
func (d *Daemon) refusedViolations(now time.Time, rs []lock.Refusal, gpus []lock.GPU) []wire.Violation {
	uuids := make(map[int]string, len(gpus))
	for _, g := range gpus {
		uuids[g.Minor] = g.UUID
	}
	if d.refused == nil {
		d.refused = map[refusedKey]*refusedEpisode{}
	}
	for k, ep := range d.refused {
		if now.Sub(ep.v.LastSeen) > refusedGap {
			delete(d.refused, k)
		}
	}
	var out []wire.Violation
	for _, r := range rs {
		uuid, known := uuids[r.GPUMinor]
		if !known {
			// A GPU minor this node does not have (or a capability file of
			// no known GPU): nothing the portal could show it on.
			d.log.Warn("agent: lock: refused open of a device the node does not list", "user", r.User, "uid", r.UID,
				"minor", r.GPUMinor, "mig", r.MIG, "count", r.Count)
			continue
		}
		k := refusedKey{uid: r.UID, minor: r.GPUMinor, mig: r.MIG}
		ep := d.refused[k]
		if ep == nil {
			id := fmt.Sprintf("%s:%s:%s:%d:%d", d.cfg.Node, wire.ViolationRefused, uuid, r.UID, r.At.Unix())
			if r.MIG {
				id += ":mig"
			}
			ep = &refusedEpisode{v: wire.Violation{ID: id, Kind: wire.ViolationRefused, GPUUUID: uuid, User: refusedUser(r),
				UID: r.UID, FirstSeen: r.At, Action: wire.ActionNone}}
			d.refused[k] = ep
		}
		ep.v.LastSeen = r.At
		d.log.Info("agent: lock: refused opens", "user", r.User, "uid", r.UID, "gpu", uuid, "minor", r.GPUMinor,
			"mig", r.MIG, "count", r.Count)
		out = append(out, ep.v)
	}
	return out
}

// refusedUser is the name a refusal is reported under: the login, or the
// UID in decimal when it has none.
func refusedUser(r lock.Refusal) string {
	if r.User != "" {
		return r.User
	}
	return strconv.Itoa(r.UID)
}
