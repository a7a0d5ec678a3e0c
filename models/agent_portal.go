package models

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

// The portal's rules about agents: enrolment, when a node counts as
// offline, which usage records are stored, and when an idle booking is
// released. They are pure functions of their inputs and now, so that the
// store and the handlers only move data.

// Prefixes of the agent secrets, so that a leaked one is recognisable and
// can never be mistaken for a personal API token (TokenPrefix).
const (
	NodeCredentialPrefix = "gpbn_"
	EnrollTokenPrefix    = "gpbe_"
)

// Agent timing rules.
const (
	// EnrollTokenValidity is how long an admin has to run the install command.
	EnrollTokenValidity = 24 * time.Hour
	// NodeOfflineAfter: a node whose agent has not called for this long is offline.
	NodeOfflineAfter = 2 * time.Minute
	// ScheduleLookBack: bookings that ended this recently stay in the
	// schedule, so the agent can tell an overstay from unbooked use.
	ScheduleLookBack = time.Hour
	// ScheduleLookAhead is how far ahead the agent caches bookings.
	ScheduleLookAhead = 24 * time.Hour
	// UsageFutureSkew is how far past now a usage minute may lie (clock skew).
	UsageFutureSkew = 5 * time.Minute
	// DefaultUsageRetentionDays is GPUBOOK_USAGE_RETENTION_DAYS' default:
	// five weeks, a report's four weeks and the week after in which a
	// closed week may still be recomputed from its minutes. Reports of
	// older weeks read the hourly sums, kept for
	// DefaultRollupRetentionDays; at 10,000 GPUs a year of minutes would
	// be 1.6–2 TB (docs/scaling.md).
	DefaultUsageRetentionDays = 35
	// NotReportedReason marks a GPU that the node's agent stopped reporting.
	NotReportedReason = "not reported by agent"
)

// AgentNode is a node's agent state, as the admin and status pages show it.
type AgentNode struct {
	NodeID          int64
	NodeName        string
	Enrolled        bool
	Hostname        string
	AgentVersion    string
	DriverVersion   string
	EnrolledAt      *time.Time
	LastSeenAt      *time.Time
	LastHeartbeatAt *time.Time
	InventoryAt     *time.Time
	SpoolDepth      int
	OldestSpooled   *time.Time
	NVMLOK          bool

	// From the latest heartbeat: reports set aside on the node as invalid
	// (count, newest reason and time), reports dropped at the spool's
	// bounds, and since when NVML has been down (nil while it works).
	SpoolSetAside       int
	SpoolSetAsideReason string
	SpoolSetAsideAt     *time.Time
	SpoolDroppedUsage   int64
	SpoolDroppedEvents  int64
	NVMLDownSince       *time.Time

	// Lock is how the node enforces bookings (wire.Heartbeat.Lock; see
	// models/wire/lock.go): "lock v1"/"lock v2", "detect", "detect (cannot
	// lock: REASON)", "lock v1 (guarding nothing: REASON)"; "" from agents
	// that do not say.
	Lock string

	// SampleError is the latest sample's error and SampleFailingSince since
	// when the agent's samples fail (nil while they work), from its latest
	// heartbeat.
	SampleError        string
	SampleFailingSince *time.Time
}

// Degraded reports whether the node's agent runs but cannot measure its
// GPUs (NVML down, or samples failing): the node page must not call such
// an agent healthy, and what it last reported is no longer live.
func (n AgentNode) Degraded() bool { return n.NVMLDownSince != nil || n.SampleFailingSince != nil }

// FiguresStale reports whether the GPU figures the portal last received
// from the node may no longer hold: its agent is offline or degraded.
func (n AgentNode) FiguresStale(now time.Time) bool { return n.Offline(now) || n.Degraded() }

// LockFailed reports whether the node was asked to lock GPUs to their
// bookings and cannot, which the node page shows as an alert.
func (n AgentNode) LockFailed() bool { return wire.LockFailed(n.Lock) }

// LockIdle reports whether the node's lock passed its self-check but
// guards no GPU yet (its agent lists none), which the node page says
// plainly rather than showing the lock as active.
func (n AgentNode) LockIdle() bool { return wire.LockIdle(n.Lock) }

// Offline reports whether the node's agent has been silent for
// NodeOfflineAfter (or never called at all).
func (n AgentNode) Offline(now time.Time) bool { return NodeOffline(n.LastSeenAt, now) }

// NodeOffline is the 2-minute rule on a last-seen time (nil: never seen).
func NodeOffline(lastSeen *time.Time, now time.Time) bool {
	return lastSeen == nil || now.Sub(*lastSeen) >= NodeOfflineAfter
}

// NewAgentSecret returns a fresh secret with prefix (shown once) and its
// hash (stored), 256 random bits like personal tokens.
func NewAgentSecret(prefix string) (plain, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", Internal(err)
	}
	plain = prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
	return plain, HashToken(plain), nil
}

// EnrollTokenUsable says whether a token that expires at expiresAt and was
// used at usedAt (nil: never) may enrol a node at now: single use, 24 hours.
func EnrollTokenUsable(expiresAt time.Time, usedAt *time.Time, now time.Time) bool {
	return usedAt == nil && now.Before(expiresAt)
}

// ErrEnrollToken is the one answer to every bad enrolment token (unknown,
// used or expired), so that the answer tells an attacker nothing.
func ErrEnrollToken() *Error {
	return NewError(EUNAUTHORIZED, M("err.enroll_token_invalid"))
}

// ErrNodeCredential refuses a missing, unknown or replaced node credential.
func ErrNodeCredential() *Error {
	return NewError(EUNAUTHORIZED, M("err.node_credential_invalid"))
}

// ErrForeignGPU refuses a body that names a GPU of another node: a node
// reads and writes only its own GPUs and bookings.
func ErrForeignGPU(uuid string) *Error {
	return NewError(EFORBIDDEN, M("err.agent_foreign_gpu", "UUID", uuid))
}

// UnixName is the login name gpubook assumes a user has on the GPU nodes:
// the local part of their email, lower-cased (ada.l@example.org → ada.l).
// Agents report processes by unix name and receive bookings by it.
func UnixName(email string) string {
	local, _, _ := strings.Cut(NormalizeEmail(email), "@")
	return local
}

// UnixNameIndex maps unix names to user IDs. A name shared by two users
// (same local part, different domains) maps to nobody rather than to the
// wrong person.
func UnixNameIndex(users []User) map[string]int64 {
	idx := make(map[string]int64, len(users))
	for _, u := range users {
		n := UnixName(u.Email)
		if _, dup := idx[n]; dup {
			idx[n] = 0
			continue
		}
		idx[n] = u.ID
	}
	return idx
}

// UsageVerdict says what the portal does with one usage record.
type UsageVerdict int

// Usage verdicts.
const (
	UsageStore UsageVerdict = iota // store it (once)
	UsageStale                     // older than retention: acknowledged, not stored
)

// CheckUsageRecord applies the rules beyond wire.UsageBatch.Validate: a
// minute in the future (beyond clock skew) is refused, one older than the
// retention is acknowledged but dropped (the pruner would delete it anyway,
// and refusing it would make the agent retry for nothing).
func CheckUsageRecord(r wire.UsageRecord, now time.Time, retention time.Duration) (UsageVerdict, error) {
	if r.Minute.After(now.Add(UsageFutureSkew)) {
		return 0, NewError(EINVALID, agentProblem("minute "+r.Minute.UTC().Format(time.RFC3339)+" is in the future"))
	}
	if r.Samples > 3600 {
		return 0, NewError(EINVALID, agentProblem("more than 3600 samples in one minute"))
	}
	if retention > 0 && r.Minute.Before(now.Add(-retention)) {
		return UsageStale, nil
	}
	return UsageStore, nil
}

// UsageRetention turns GPUBOOK_USAGE_RETENTION_DAYS into a duration; ""
// means the default. cmd reads the variable and calls this.
func UsageRetention(days string) (time.Duration, error) {
	return retentionDays(days, DefaultUsageRetentionDays)
}

// RollupRetention turns GPUBOOK_USAGE_ROLLUP_RETENTION_DAYS (how long the
// hourly usage sums are kept) into a duration; "" means the default.
func RollupRetention(days string) (time.Duration, error) {
	return retentionDays(days, DefaultRollupRetentionDays)
}

// retentionDays reads a whole number of days, at least 1; "" is def.
func retentionDays(days string, def int) (time.Duration, error) {
	if strings.TrimSpace(days) == "" {
		return time.Duration(def) * 24 * time.Hour, nil
	}
	n := 0
	for _, c := range strings.TrimSpace(days) {
		if c < '0' || c > '9' || n > 100000 {
			return 0, NewError(EINVALID, M("err.number_invalid"))
		}
		n = n*10 + int(c-'0')
	}
	if n < 1 {
		return 0, NewError(EINVALID, M("err.number_invalid"))
	}
	return time.Duration(n) * 24 * time.Hour, nil
}

// ScheduleWindow is the range of bookings a node's schedule covers at now.
func ScheduleWindow(now time.Time) (from, until time.Time) {
	now = now.UTC().Truncate(time.Second)
	return now.Add(-ScheduleLookBack), now.Add(ScheduleLookAhead)
}

// ScheduleETag is the schedule's entity tag: a hash of its bookings only
// (not of the window or the generation time), so that it changes exactly
// when a booking that matters to the node changes, appears or disappears.
func ScheduleETag(bookings []wire.Booking) string {
	data, _ := json.Marshal(bookings)
	sum := sha256.Sum256(data)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}
