package detect

import (
	"fmt"
	"time"

	"github.com/gpubook/gpubook/agent/atomicfile"
	"github.com/gpubook/gpubook/models/wire"
)

// savedProc is one violating process as kept across agent restarts, so that
// a restart neither restarts a user's grace period nor forgets an escalation.
type savedProc struct {
	GPU        string         `json:"gpu"`
	PID        int            `json:"pid"`
	Violation  wire.Violation `json:"violation"`
	GraceStart time.Time      `json:"grace_start"`
	TermAt     time.Time      `json:"term_at,omitzero"`
	Start      uint64         `json:"start"`
}

// SaveState writes the violating processes to path (atomically).
func (d *Detector) SaveState(path string) error {
	out := make([]savedProc, 0, len(d.procs))
	for k, st := range d.procs {
		out = append(out, savedProc{GPU: k.uuid, PID: k.pid, Violation: st.v, GraceStart: st.graceStart, TermAt: st.termAt, Start: st.start})
	}
	if err := atomicfile.WriteJSON(path, out, 0o600); err != nil {
		return fmt.Errorf("agent: detect: save state: %w", err)
	}
	return nil
}

// LoadState restores what SaveState wrote. A missing file is no state; a
// damaged one is reported and ignored (grace periods then start afresh).
func (d *Detector) LoadState(path string) error {
	var saved []savedProc
	if _, err := atomicfile.ReadJSON(path, &saved); err != nil {
		return fmt.Errorf("agent: detect: load state: %w", err)
	}
	for _, s := range saved {
		d.procs[procKey{s.GPU, s.PID}] = &procState{v: s.Violation, graceStart: s.GraceStart, termAt: s.TermAt, start: s.Start}
	}
	return nil
}
