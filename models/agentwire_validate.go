package models

import (
	"fmt"
	"strings"
	"time"
)

// Limits on what one agent batch may carry. They keep a single request small
// enough to ingest in one transaction: a week-long outage is delivered as many
// batches, never as one giant body.
const (
	AgentMaxRecordsPerBatch    = 2000
	AgentMaxViolationsPerBatch = 1000
	AgentMaxIdlePerBatch       = 1000
	agentMaxNameLen            = 256
)

// Validate checks a usage batch before the portal ingests it (and before the
// agent spools it, so that a bad batch never blocks the spool).
func (b *AgentUsageBatch) Validate() error {
	fe := FieldErrors{}
	if len(b.Records) == 0 {
		fe.Add("records", agentProblem("at least one record is required"))
	} else if len(b.Records) > AgentMaxRecordsPerBatch {
		fe.Add("records", agentProblem(fmt.Sprintf("at most %d records per batch", AgentMaxRecordsPerBatch)))
	}
	seen := make(map[string]bool, len(b.Records))
	for i, r := range b.Records {
		field := fmt.Sprintf("records[%d]", i)
		if msg := r.problem(); msg != "" {
			fe.Add(field, agentProblem(msg))
			continue
		}
		if k := r.Key(""); seen[k] {
			fe.Add(field, agentProblem("duplicate (gpu_uuid, minute)"))
		} else {
			seen[k] = true
		}
	}
	return fe.Err()
}

// problem returns what is wrong with one record, or "".
func (r AgentUsageRecord) problem() string {
	switch {
	case !ValidGPUUUID(r.GPUUUID):
		return "gpu_uuid is missing or malformed"
	case r.Minute.IsZero() || !r.Minute.Equal(r.Minute.Truncate(time.Minute)):
		return "minute must be the start of a minute"
	case r.Samples < 1:
		return "samples must be at least 1"
	case (r.UtilAvgPct == nil) != (r.UtilMaxPct == nil):
		return "util_avg_pct and util_max_pct must both be set or both be null"
	case r.UtilAvgPct != nil && !pct(*r.UtilAvgPct), r.UtilMaxPct != nil && !pct(*r.UtilMaxPct):
		return "utilisation must be between 0 and 100"
	case r.UtilAvgPct != nil && *r.UtilAvgPct > *r.UtilMaxPct:
		return "util_avg_pct exceeds util_max_pct"
	case r.MemTotalMiB < 0 || r.MemUsedMiB < 0 || r.MemUsedMiB > r.MemTotalMiB:
		return "memory must satisfy 0 <= used <= total"
	}
	users := make(map[string]bool, len(r.Users))
	for _, u := range r.Users {
		switch {
		case u.User == "" || len(u.User) > agentMaxNameLen:
			return "user name is missing or too long"
		case users[u.User]:
			return "user listed twice"
		case u.MemoryMiB < 0 || u.Processes < 0:
			return "user memory and processes must not be negative"
		}
		users[u.User] = true
	}
	return ""
}

// Validate checks a violation batch.
func (b *AgentViolationBatch) Validate() error {
	fe := FieldErrors{}
	if len(b.Violations) == 0 {
		fe.Add("violations", agentProblem("at least one violation is required"))
	} else if len(b.Violations) > AgentMaxViolationsPerBatch {
		fe.Add("violations", agentProblem(fmt.Sprintf("at most %d violations per batch", AgentMaxViolationsPerBatch)))
	}
	for i, v := range b.Violations {
		if msg := v.problem(); msg != "" {
			fe.Add(fmt.Sprintf("violations[%d]", i), agentProblem(msg))
		}
	}
	return fe.Err()
}

func (v AgentViolation) problem() string {
	switch {
	case v.ID == "" || len(v.ID) > agentMaxNameLen:
		return "id is missing or too long"
	case v.Kind != ViolationUnbooked && v.Kind != ViolationOverstay && v.Kind != ViolationMemoryNoProcess:
		return "unknown kind"
	case !ValidGPUUUID(v.GPUUUID):
		return "gpu_uuid is missing or malformed"
	case v.Kind != ViolationMemoryNoProcess && (v.User == "" || v.PID <= 0):
		return "user and pid are required for process violations"
	case v.FirstSeen.IsZero() || v.LastSeen.Before(v.FirstSeen):
		return "first_seen is required and must not be after last_seen"
	case v.Action != ActionNone && v.Action != ActionWarned && v.Action != ActionSIGTERM && v.Action != ActionSIGKILL:
		return "unknown action"
	}
	return ""
}

// Validate checks an idle batch.
func (b *AgentIdleBatch) Validate() error {
	fe := FieldErrors{}
	if len(b.Reports) == 0 {
		fe.Add("reports", agentProblem("at least one report is required"))
	} else if len(b.Reports) > AgentMaxIdlePerBatch {
		fe.Add("reports", agentProblem(fmt.Sprintf("at most %d reports per batch", AgentMaxIdlePerBatch)))
	}
	for i, r := range b.Reports {
		field := fmt.Sprintf("reports[%d]", i)
		switch {
		case r.ID == "" || r.BookingID <= 0:
			fe.Add(field, agentProblem("id and booking_id are required"))
		case len(r.GPUUUIDs) == 0:
			fe.Add(field, agentProblem("gpu_uuids must not be empty"))
		case r.IdleSince.IsZero() || r.ReportedAt.Before(r.IdleSince):
			fe.Add(field, agentProblem("idle_since is required and must not be after reported_at"))
		}
		for _, u := range r.GPUUUIDs {
			if !ValidGPUUUID(u) {
				fe.Add(field, agentProblem("gpu_uuids has a malformed UUID"))
			}
		}
	}
	return fe.Err()
}

// Validate checks an inventory report.
func (inv *AgentInventory) Validate() error {
	fe := FieldErrors{}
	seen := map[string]bool{}
	for i, g := range inv.GPUs {
		field := fmt.Sprintf("gpus[%d]", i)
		switch {
		case !ValidGPUUUID(g.UUID):
			fe.Add(field, agentProblem("uuid is missing or malformed"))
		case seen[g.UUID]:
			fe.Add(field, agentProblem("uuid listed twice"))
		case g.Index < 0 || g.Minor < 0:
			fe.Add(field, agentProblem("index and minor must not be negative"))
		case g.Model == "" || g.MemoryMiB <= 0:
			fe.Add(field, agentProblem("model and memory_mib are required"))
		}
		seen[g.UUID] = true
	}
	return fe.Err()
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

// agentProblem wraps an English problem description in a Msg. Agents, not
// people, read these (in logs), so one translation key covers them all.
func agentProblem(problem string) Msg { return M("err.agent_invalid", "Problem", problem) }

func pct(f float64) bool { return f >= 0 && f <= 100 }
