package wire

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
)

// Every Validate below stops at the first problem and returns it as one
// field error naming where it is: a hostile batch of a million bad items
// costs one short answer, not a million field errors. They run on the
// portal before anything is stored (and on the agent before it spools, so
// that a bad batch never blocks the spool).

// Invalid is what breaks the protocol in a body: where, and what is wrong,
// in English (agents, not people, read it, in their logs). The portal
// answers it as a 422 field error (models.AgentError).
type Invalid struct {
	Field   string
	Problem string
}

func (e *Invalid) Error() string { return "wire: " + e.Field + ": " + e.Problem }

// agentInvalid is the one error of an invalid agent body.
func agentInvalid(field, problem string) error { return &Invalid{Field: field, Problem: problem} }

// listProblem checks a list's length against its bounds.
func listProblem(n, lo, hi int) string {
	switch {
	case n < lo:
		return fmt.Sprintf("at least %d required", lo)
	case n > hi:
		return fmt.Sprintf("at most %d allowed", hi)
	}
	return ""
}

// envelopeProblem checks what every batch carries besides its list.
func envelopeProblem(node, batchID string) (string, string) {
	switch {
	case !agentText(node, agentMaxNameLen):
		return "node", "must be at most 256 bytes of text without control characters"
	case !agentText(batchID, agentMaxNameLen):
		return "batch_id", "must be at most 256 bytes of text without control characters"
	}
	return "", ""
}

// Validate checks a usage batch.
func (b *UsageBatch) Validate() error { return b.Stream().Validate() }

// problem returns what is wrong with one record (and where, below the
// record), or "".
func (r UsageRecord) problem() (string, string) {
	switch {
	case !ValidGPUUUID(r.GPUUUID):
		return ".gpu_uuid", "missing or malformed"
	case !agentTime(r.Minute) || !r.Minute.Equal(r.Minute.Truncate(time.Minute)):
		return ".minute", "must be the start of a minute"
	case r.Samples < 1 || r.Samples > MaxSamples:
		return ".samples", fmt.Sprintf("must be between 1 and %d", MaxSamples)
	case (r.UtilAvgPct == nil) != (r.UtilMaxPct == nil):
		return "", "util_avg_pct and util_max_pct must both be set or both be null"
	case r.UtilAvgPct != nil && !pct(*r.UtilAvgPct), r.UtilMaxPct != nil && !pct(*r.UtilMaxPct):
		return "", "utilisation must be between 0 and 100"
	case r.UtilAvgPct != nil && *r.UtilAvgPct > *r.UtilMaxPct:
		return "", "util_avg_pct exceeds util_max_pct"
	case !agentMemory(r.MemTotalMiB) || !agentMemory(r.MemUsedMiB) || r.MemUsedMiB > r.MemTotalMiB:
		return "", "memory must satisfy 0 <= used <= total <= 16 TiB"
	}
	if p := listProblem(len(r.Users), 0, MaxUsersPerRecord); p != "" {
		return ".users", p
	}
	for i, u := range r.Users {
		if p := u.problem(); p != "" {
			return fmt.Sprintf(".users[%d]", i), p
		}
		for _, v := range r.Users[:i] {
			if v.User == u.User {
				return fmt.Sprintf(".users[%d]", i), "user listed twice"
			}
		}
	}
	return "", ""
}

func (u UserUsage) problem() string {
	switch {
	case !agentName(u.User, agentMaxNameLen):
		return "user must be 1 to 256 bytes of text without control characters"
	case !agentUID(u.UID):
		return "uid must be between -1 and 2147483647"
	case !agentMemory(u.MemoryMiB):
		return "memory_mib must be between 0 and 16 TiB"
	case u.Processes < 0 || u.Processes > MaxPID:
		return fmt.Sprintf("processes must be between 0 and %d", MaxPID)
	case u.Container != "" && !ValidContainerID(u.Container):
		return "container must be 12 to 64 lowercase hexadecimal digits"
	}
	return ""
}

// Validate checks a violation batch.
func (b *ViolationBatch) Validate() error {
	if f, p := envelopeProblem(b.Node, b.BatchID); p != "" {
		return agentInvalid(f, p)
	}
	if p := listProblem(len(b.Violations), 1, MaxViolationsPerBatch); p != "" {
		return agentInvalid("violations", p)
	}
	for i, v := range b.Violations {
		if msg := v.problem(); msg != "" {
			return agentInvalid(fmt.Sprintf("violations[%d]", i), msg)
		}
	}
	return nil
}

func (v Violation) problem() string {
	switch {
	case !agentName(v.ID, agentMaxNameLen):
		return "id must be 1 to 256 bytes of text without control characters"
	case v.Kind != ViolationUnbooked && v.Kind != ViolationOverstay && v.Kind != ViolationMemoryNoProcess && v.Kind != ViolationRefused:
		return "unknown kind"
	case !ValidGPUUUID(v.GPUUUID):
		return "gpu_uuid is missing or malformed"
	case !agentText(v.User, agentMaxNameLen):
		return "user must be at most 256 bytes of text without control characters"
	case v.Kind == ViolationRefused && v.User == "":
		return "user is required for a refused open"
	case v.Kind != ViolationMemoryNoProcess && v.Kind != ViolationRefused && (v.User == "" || v.PID <= 0):
		return "user and pid are required for process violations"
	case !agentUID(v.UID) || v.PID < 0 || v.PID > MaxPID:
		return fmt.Sprintf("uid must be between -1 and 2147483647, pid between 0 and %d", MaxPID)
	case !agentMemory(v.MemoryMiB) || v.BookingID < 0:
		return "memory_mib must be between 0 and 16 TiB, booking_id not negative"
	case v.Container != "" && !ValidContainerID(v.Container):
		return "container must be 12 to 64 lowercase hexadecimal digits"
	case !agentTime(v.FirstSeen) || !agentTime(v.LastSeen) || v.LastSeen.Before(v.FirstSeen):
		return "first_seen is required and must not be after last_seen"
	case v.Action != ActionNone && v.Action != ActionWarned && v.Action != ActionSIGTERM && v.Action != ActionSIGKILL:
		return "unknown action"
	}
	return ""
}

// Validate checks an idle batch.
func (b *IdleBatch) Validate() error {
	if f, p := envelopeProblem(b.Node, b.BatchID); p != "" {
		return agentInvalid(f, p)
	}
	if p := listProblem(len(b.Reports), 1, MaxIdlePerBatch); p != "" {
		return agentInvalid("reports", p)
	}
	gpus := 0
	for i, r := range b.Reports {
		if f, msg := r.problem(); msg != "" {
			return agentInvalid(fmt.Sprintf("reports[%d]%s", i, f), msg)
		}
		if gpus += len(r.GPUUUIDs); gpus > MaxIdleGPUsPerBatch {
			return agentInvalid(fmt.Sprintf("reports[%d].gpu_uuids", i), fmt.Sprintf("at most %d GPUs in all reports of a batch", MaxIdleGPUsPerBatch))
		}
	}
	return nil
}

func (r IdleReport) problem() (string, string) {
	switch {
	case !agentName(r.ID, agentMaxNameLen) || r.BookingID <= 0:
		return "", "id (text without control characters) and booking_id are required"
	case !agentText(r.User, agentMaxNameLen):
		return ".user", "must be at most 256 bytes of text without control characters"
	case !agentTime(r.IdleSince) || !agentTime(r.ReportedAt) || r.ReportedAt.Before(r.IdleSince):
		return "", "idle_since is required and must not be after reported_at"
	}
	if p := listProblem(len(r.GPUUUIDs), 1, MaxGPUs); p != "" {
		return ".gpu_uuids", p
	}
	for i, u := range r.GPUUUIDs {
		if !ValidGPUUUID(u) {
			return fmt.Sprintf(".gpu_uuids[%d]", i), "malformed UUID"
		}
	}
	return "", ""
}

// Validate checks an inventory report.
func (inv *Inventory) Validate() error {
	switch {
	case !agentText(inv.Node, agentMaxNameLen):
		return agentInvalid("node", "must be at most 256 bytes of text without control characters")
	case !agentText(inv.AgentVersion, agentMaxVersionLen):
		return agentInvalid("agent_version", "must be at most 100 bytes of text without control characters")
	case !agentText(inv.DriverVersion, agentMaxVersionLen):
		return agentInvalid("driver_version", "must be at most 100 bytes of text without control characters")
	case !inv.ReportedAt.IsZero() && !agentTime(inv.ReportedAt):
		return agentInvalid("reported_at", "must be between 1970 and 9999")
	}
	if p := listProblem(len(inv.GPUs), 0, MaxGPUs); p != "" {
		return agentInvalid("gpus", p)
	}
	for i, g := range inv.GPUs {
		if msg := g.problem(); msg != "" {
			return agentInvalid(fmt.Sprintf("gpus[%d]", i), msg)
		}
		for j, m := range g.Instances {
			if msg := m.problem(g); msg != "" {
				return agentInvalid(fmt.Sprintf("gpus[%d].mig_instances[%d]", i, j), msg)
			}
		}
		if msg := g.instancesProblem(inv.GPUs[:i]); msg != "" {
			return agentInvalid(fmt.Sprintf("gpus[%d].mig_instances", i), msg)
		}
		for _, h := range inv.GPUs[:i] {
			switch {
			case h.UUID == g.UUID:
				return agentInvalid(fmt.Sprintf("gpus[%d]", i), "uuid listed twice")
			case h.Index == g.Index:
				return agentInvalid(fmt.Sprintf("gpus[%d]", i), "index listed twice")
			}
		}
	}
	return nil
}

func (g GPU) problem() string {
	switch {
	case !ValidGPUUUID(g.UUID):
		return "uuid is missing or malformed"
	case g.Index < 0 || g.Index >= MaxGPUs:
		return fmt.Sprintf("index must be between 0 and %d", MaxGPUs-1)
	case g.Minor < 0 || g.Minor > MaxGPUMinor:
		return fmt.Sprintf("minor must be between 0 and %d", MaxGPUMinor)
	case strings.TrimSpace(g.Model) == "" || !agentText(g.Model, agentMaxVersionLen):
		return "model must be 1 to 100 bytes of text without control characters"
	case g.MemoryMiB <= 0 || g.MemoryMiB > MaxMemoryMiB:
		return "memory_mib must be between 1 and 16 TiB"
	case !g.MIG && (g.MIGSlices != 0 || len(g.Instances) > 0):
		return "mig_slices and mig_instances need mig"
	case g.MIGSlices < 0 || g.MIGSlices > MaxMIGSlices || len(g.Instances) > 0 && g.MIGSlices == 0:
		return fmt.Sprintf("mig_slices must be between 1 and %d when instances are listed", MaxMIGSlices)
	}
	return ""
}

// migProfileRE is NVML's profile name: a compute instance smaller than
// its GPU instance first ("1c."), then slices and memory, and optional
// suffixes ("+me", "+me.all", "+gfx").
var migProfileRE = regexp.MustCompile(`^([1-8]c\.)?[1-8]g\.[0-9]{1,4}gb(\+[a-z]{1,8}(\.[a-z]{1,8})?)?$`)

func (m MIGInstance) problem(g GPU) string {
	switch {
	case !strings.HasPrefix(m.UUID, "MIG-") || !ValidGPUUUID(m.UUID):
		return "uuid must be a MIG-… UUID"
	case !migProfileRE.MatchString(m.Profile):
		return `profile must be NVML's profile name, such as "1g.10gb"`
	case m.GPUInstance < 0 || m.GPUInstance > MaxMIGID || m.ComputeInstance < 0 || m.ComputeInstance > MaxMIGID:
		return fmt.Sprintf("gi and ci must be between 0 and %d", MaxMIGID)
	case m.Slices < 1 || m.Slices > g.MIGSlices:
		return "slices must be between 1 and the GPU's mig_slices"
	case m.MemoryMiB <= 0 || m.MemoryMiB > g.MemoryMiB:
		return "memory_mib must be between 1 and the GPU's memory"
	}
	return ""
}

// instancesProblem checks a GPU's instances together: their slices fit
// the GPU, and no UUID or (gi, ci) pair repeats, on this GPU or an earlier one.
func (g GPU) instancesProblem(earlier []GPU) string {
	sum := 0
	for i, m := range g.Instances {
		sum += m.Slices
		for _, o := range g.Instances[:i] {
			if o.UUID == m.UUID || o.GPUInstance == m.GPUInstance && o.ComputeInstance == m.ComputeInstance {
				return "an instance is listed twice"
			}
		}
		if m.UUID == g.UUID {
			return "an instance has its GPU's uuid"
		}
		for _, h := range earlier {
			if h.UUID == m.UUID {
				return "an instance has another GPU's uuid"
			}
			for _, o := range h.Instances {
				if o.UUID == m.UUID {
					return "an instance is listed under two GPUs"
				}
			}
		}
	}
	for _, h := range earlier {
		for _, o := range h.Instances {
			if o.UUID == g.UUID {
				return "the GPU has an earlier GPU's instance's uuid"
			}
		}
	}
	if sum > g.MIGSlices {
		return "the instances hold more slices than the GPU has"
	}
	return ""
}

// Validate checks an enrolment request's descriptive fields; the token is
// checked by looking it up (any bad token is the same 401).
func (r *EnrollRequest) Validate() error {
	switch {
	case !agentText(r.Hostname, agentMaxHostLen):
		return agentInvalid("hostname", "must be at most 255 bytes of text without control characters")
	case !agentText(r.AgentVersion, agentMaxVersionLen):
		return agentInvalid("agent_version", "must be at most 100 bytes of text without control characters")
	}
	return nil
}

// UsableEnrollToken reports whether a token can be looked up at all; one
// that cannot is refused like an unknown one.
func (r *EnrollRequest) UsableEnrollToken() bool {
	return agentName(strings.TrimSpace(r.Token), agentMaxNameLen)
}

// Validate checks a heartbeat.
func (hb *Heartbeat) Validate() error {
	switch {
	case !agentText(hb.Node, agentMaxNameLen):
		return agentInvalid("node", "must be at most 256 bytes of text without control characters")
	case !agentText(hb.AgentVersion, agentMaxVersionLen):
		return agentInvalid("agent_version", "must be at most 100 bytes of text without control characters")
	case !agentText(hb.ScheduleETag, agentMaxVersionLen):
		return agentInvalid("schedule_etag", "must be at most 100 bytes of text without control characters")
	case hb.SpoolDepth < 0 || hb.SpoolDepth > math.MaxInt32:
		return agentInvalid("spool_depth", "must be between 0 and 2147483647")
	case !hb.SentAt.IsZero() && !agentTime(hb.SentAt):
		return agentInvalid("sent_at", "must be between 1970 and 9999")
	case !hb.OldestSpooled.IsZero() && !agentTime(hb.OldestSpooled):
		return agentInvalid("oldest_spooled", "must be between 1970 and 9999")
	}
	return hb.validateHealth()
}

// agentMaxReasonLen bounds the set-aside reason a heartbeat repeats (the
// portal's own validation message; the node page shows its start).
const agentMaxReasonLen = 1024

// MaxLockLen bounds the heartbeat's lock field (mode plus a reason).
const MaxLockLen = 512

// validateHealth checks what the agent could not deliver or sample.
func (hb *Heartbeat) validateHealth() error {
	switch {
	case hb.SpoolSetAside < 0 || hb.SpoolSetAside > math.MaxInt32:
		return agentInvalid("spool_set_aside", "must be between 0 and 2147483647")
	case !agentText(hb.SpoolSetAsideReason, agentMaxReasonLen):
		return agentInvalid("spool_set_aside_reason", "must be at most 1024 bytes of text without control characters")
	case !hb.SpoolSetAsideAt.IsZero() && !agentTime(hb.SpoolSetAsideAt):
		return agentInvalid("spool_set_aside_at", "must be between 1970 and 9999")
	case hb.SpoolDroppedUsage < 0 || hb.SpoolDroppedEvents < 0:
		return agentInvalid("spool_dropped_usage", "drop counts must not be negative")
	case !hb.NVMLDownSince.IsZero() && !agentTime(hb.NVMLDownSince):
		return agentInvalid("nvml_down_since", "must be between 1970 and 9999")
	case !agentText(hb.Lock, MaxLockLen):
		return agentInvalid("lock", "must be at most 512 bytes of text without control characters")
	case !agentText(hb.SampleError, agentMaxReasonLen):
		return agentInvalid("sample_error", "must be at most 1024 bytes of text without control characters")
	case !hb.SampleFailingSince.IsZero() && !agentTime(hb.SampleFailingSince):
		return agentInvalid("sample_failing_since", "must be between 1970 and 9999")
	}
	return nil
}

// ValidGPUUUID accepts NVML's "GPU-…" and "MIG-…" forms with only the
// characters they use. The agent relies on it to put values read from a
// cache file into shell code safely.
func ValidGPUUUID(s string) bool {
	if len(s) < 5 || len(s) > 100 || !(strings.HasPrefix(s, "GPU-") || strings.HasPrefix(s, "MIG-")) {
		return false
	}
	for _, c := range s {
		ok := c == '-' || c == '/' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !ok {
			return false
		}
	}
	return true
}

func pct(f float64) bool { return f >= 0 && f <= 100 }

// ValidContainerID reports whether s looks like a container id as docker,
// containerd and podman write it in cgroup paths: 12 to 64 lowercase hex
// digits (the short form is what people see in "docker ps").
func ValidContainerID(s string) bool {
	if len(s) < 12 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
