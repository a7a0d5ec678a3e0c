package wire

import (
	"math"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of the agent wire protocol. Both sides compile against them: the
// portal refuses anything beyond them (422) before it allocates or touches
// the database, and the agent cuts what it spools into batches that respect
// them, so that a valid batch is never refused for its size. A node's agent
// sends one minute of usage per batch (one record per GPU), so these leave
// a wide margin above the largest real node and still keep the memory one
// request can cost the portal to a few times MaxBody.
const (
	// MaxBody is the most bytes of one request body on the agent API.
	// A real batch is a few kB; a week offline is delivered as one batch
	// per spooled minute, never as one big body.
	MaxBody = 1 << 20
	// MaxEnrollBody bounds the enrolment request (token, hostname, version).
	MaxEnrollBody = 16 << 10

	MaxRecordsPerBatch    = 1000
	MaxUsersPerRecord     = 64
	MaxViolationsPerBatch = 500
	MaxIdlePerBatch       = 500
	// MaxIdleGPUsPerBatch bounds the GPUs of all reports of an idle
	// batch together. An agent's batch is one detection cycle's reports,
	// one per idle booking, and bookings never share a GPU, so a real
	// batch names each of a node's GPUs at most once (MaxGPUs).
	MaxIdleGPUsPerBatch = 16 * MaxGPUs
	// MaxGPUs bounds an inventory, a node's GPU indices (0 to
	// MaxGPUs−1) and the GPUs of one idle report; it equals the most
	// GPUs a node may be registered with by hand.
	MaxGPUs = MaxNodeGPUs
	// MaxMIGSlices bounds a GPU's compute slices and so its instances
	// (7 on every MIG GPU so far); MaxMIGID bounds NVML's instance ids.
	MaxMIGSlices = 8
	MaxMIGID     = 63
	// MaxGPUMinor is the highest /dev/nvidiaN minor number (255 is nvidiactl).
	MaxGPUMinor = 254
	// MaxMemoryMiB (16 TiB) bounds every memory figure an agent sends.
	MaxMemoryMiB = MaxGPUMemoryMiB
	// MaxPID is Linux's PID_MAX_LIMIT; it bounds PIDs and process counts.
	MaxPID = 1 << 22
	// MaxSamples bounds the samples of one minute (one a millisecond).
	MaxSamples = 60000

	agentMaxNameLen    = 256 // user names, ids, node names, tokens
	agentMaxVersionLen = 100 // agent and driver versions, GPU models, ETags
	agentMaxHostLen    = 255
)

// MaxNodeGPUs is the most GPUs one node may have; MaxGPUMemoryMiB (16 TiB)
// the most memory one GPU may claim. Far above any real hardware, they only
// keep absurd values out of the schedule and the reports.
const (
	MaxNodeGPUs     = 64
	MaxGPUMemoryMiB = 16 << 20
)

// agentText reports whether s is acceptable text from an agent: at most max
// bytes of valid UTF-8 without control characters. A NUL makes PostgreSQL
// refuse the row, and a newline or an escape sequence forges log lines and
// terminal output, so they are refused rather than stored.
func agentText(s string, max int) bool {
	if len(s) > max || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// agentName is agentText that must not be empty.
func agentName(s string, max int) bool { return s != "" && agentText(s, max) }

// agentTime reports whether t is a time an agent can have seen: from 1970
// to 9999, like every time the portal accepts.
func agentTime(t time.Time) bool { return t.Year() >= 1970 && t.Year() <= 9999 }

// agentUID accepts a unix uid, or −1 for unknown; the column is a 32-bit integer.
func agentUID(uid int) bool { return uid >= -1 && uid <= math.MaxInt32 }

func agentMemory(mib int64) bool { return mib >= 0 && mib <= MaxMemoryMiB }
