package wire

import (
	"time"
)

// The agent wire protocol: JSON bodies exchanged between gpubook-agent on a
// GPU node and the portal, under APIPrefix. They live in models (not in
// agent/) because both sides compile against them; the version is in the
// path so that an old agent keeps working while a new portal adds /v2.
//
// Every request except enrolment carries the node credential as
// "Authorization: Bearer <credential>". The portal derives the node from the
// credential and ignores any node name in a body for authorisation; the name
// is there for logs and for humans reading a spool file.
//
// Times are RFC 3339 in UTC. Every POST is idempotent: usage records, idle
// reports and violations carry stable keys, so a resend after a crash or an
// outage is harmless (the portal upserts by key).
const (
	APIPrefix = "/api/agent/v1"

	// PathEnroll: POST EnrollRequest (no credential) → 200 EnrollResponse;
	// 401 for an unknown, used or expired token.
	PathEnroll = APIPrefix + "/enroll"
	// PathInventory: PUT Inventory → 204. Sent at every agent start.
	PathInventory = APIPrefix + "/inventory"
	// PathSchedule: GET → 200 Schedule with an ETag header, or 304
	// when the request's If-None-Match equals the current ETag.
	PathSchedule = APIPrefix + "/schedule"
	// PathUsage: POST UsageBatch → 204 (also when every record was already known).
	PathUsage = APIPrefix + "/usage"
	// PathViolations: POST ViolationBatch → 204.
	PathViolations = APIPrefix + "/violations"
	// PathIdle: POST IdleBatch → 204.
	PathIdle = APIPrefix + "/idle"
	// PathHeartbeat: POST Heartbeat → 204. A node silent for 2 min is offline.
	PathHeartbeat = APIPrefix + "/heartbeat"
)

// Booking kinds as the schedule carries them (models uses the same values).
const (
	KindStandard = "standard"
	KindPriority = "priority" // from an approved priority request
)

// Violation kinds an agent reports.
const (
	// ViolationUnbooked: a process of a non-exempt user on a GPU the user holds no booking of.
	ViolationUnbooked = "unbooked_use"
	// ViolationOverstay: like unbooked use, but the user's booking of that GPU has just ended.
	ViolationOverstay = "overstay"
	// ViolationMemoryNoProcess: GPU memory held while no process is visible (zombies, D-state).
	ViolationMemoryNoProcess = "memory_without_process"
	// ViolationRefused: the device lock refused a user's open of a GPU they hold no
	// booking of (cgroup2 only); no process to name, one per user, GPU and episode.
	ViolationRefused = "refused_open"
)

// Actions an agent took about a violation. A violation is re-sent with the
// same ID whenever its action escalates; the portal keeps the latest.
const (
	ActionNone    = "none"    // reported only: nobody told, nothing signalled (memory without process; enforce = off)
	ActionWarned  = "warned"  // the user's terminals got a message
	ActionSIGTERM = "sigterm" // the process was asked to stop after the grace period
	ActionSIGKILL = "sigkill" // the process ignored SIGTERM and was killed
)

// EnrollRequest exchanges a one-time enrolment token (valid 24 h) for a
// long-lived node credential.
type EnrollRequest struct {
	Token        string `json:"token"`
	Hostname     string `json:"hostname"`
	AgentVersion string `json:"agent_version"`
}

// EnrollResponse carries the node credential; the agent stores it with
// mode 0600 and never prints it.
type EnrollResponse struct {
	NodeID     int64  `json:"node_id"`
	NodeName   string `json:"node_name"`
	Credential string `json:"credential"`
}

// GPU is one GPU as NVML sees it. UUID is the identity; index and minor
// are for humans and for /dev/nvidiaN.
type GPU struct {
	UUID      string `json:"uuid"`
	Index     int    `json:"index"`
	Minor     int    `json:"minor"`
	Model     string `json:"model"`
	MemoryMiB int64  `json:"memory_mib"`
	MIG       bool   `json:"mig"`
	// MIGSlices is the GPU's compute slices (7 on an A100 or H100) when
	// MIG is on; 0 otherwise. An instance weighs Slices/MIGSlices of a GPU.
	MIGSlices int `json:"mig_slices,omitempty"`
	// Instances are the GPU's MIG instances when MIG is on: each is a
	// bookable unit of its own, and the GPU is then not bookable whole.
	// An agent that omits them (or sends none) reports a GPU that cannot
	// be split at the moment; a booking never names its UUID then.
	Instances []MIGInstance `json:"mig_instances,omitempty"`
}

// MIGInstance is one MIG device of a GPU in MIG mode (a GPU instance with
// its compute instance) as NVML lists it. UUID ("MIG-…") is the identity;
// schedules, usage records and violations name it where they would name a
// whole GPU, and CUDA_VISIBLE_DEVICES lists it as is.
type MIGInstance struct {
	UUID    string `json:"uuid"`
	Profile string `json:"profile"` // NVML's profile name: "1g.10gb", "3g.40gb", "1g.10gb+me"
	// GPUInstance and ComputeInstance are NVML's ids, which name the
	// capability files (/proc/driver/nvidia-caps/mig-minors) the lock opens.
	GPUInstance     int   `json:"gi"`
	ComputeInstance int   `json:"ci"`
	Slices          int   `json:"slices"` // compute slices this instance holds
	MemoryMiB       int64 `json:"memory_mib"`
}

// Inventory is the node's full GPU list. The portal adds or updates the
// GPUs it names and marks the node's other GPUs out of service (never deletes).
type Inventory struct {
	Node          string    `json:"node"`
	AgentVersion  string    `json:"agent_version"`
	DriverVersion string    `json:"driver_version,omitempty"`
	ReportedAt    time.Time `json:"reported_at"`
	GPUs          []GPU     `json:"gpus"`
}

// Booking is one booking of this node's GPUs as the agent needs it:
// who (the unix login), which GPUs (UUIDs), when.
type Booking struct {
	ID       int64     `json:"id"`
	User     string    `json:"user"`
	Email    string    `json:"email,omitempty"`
	GPUUUIDs []string  `json:"gpu_uuids"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
	Kind     string    `json:"kind"`
}

// ActiveAt reports whether the booking holds its GPUs at t ([StartsAt, EndsAt)).
func (b Booking) ActiveAt(t time.Time) bool {
	return !t.Before(b.StartsAt) && t.Before(b.EndsAt)
}

// HasGPU reports whether the booking includes the GPU with this UUID.
func (b Booking) HasGPU(uuid string) bool {
	for _, u := range b.GPUUUIDs {
		if u == uuid {
			return true
		}
	}
	return false
}

// Schedule is the node's confirmed bookings that overlap [From, Until),
// normally now−24 h to now+24 h: the past day lets an agent tell an overstay
// from unbooked use. The response's ETag changes whenever any of it
// changes; an unchanged schedule costs the portal a 304.
type Schedule struct {
	Node        string    `json:"node"`
	GeneratedAt time.Time `json:"generated_at"`
	From        time.Time `json:"from"`
	Until       time.Time `json:"until"`
	PortalURL   string    `json:"portal_url,omitempty"` // shown in login hints ("book at …")
	Bookings    []Booking `json:"bookings"`
}

// UserUsage is one user's share of one GPU in one minute.
type UserUsage struct {
	User string `json:"user"`
	UID  int    `json:"uid"`
	// MemoryMiB is the most GPU memory the user's processes held in any sample.
	MemoryMiB int64 `json:"memory_mib"`
	// Processes is the most processes the user had on the GPU in any sample.
	Processes int `json:"processes"`
	// Busy: in at least one sample the user had a process while the GPU was
	// at or above the idle threshold (on MIG GPUs: had a process at all).
	Busy bool `json:"busy"`
	// Container is the id of the container (docker, containerd, podman,
	// CRI-O; from the process's cgroup) that held most of the user's GPU
	// memory in the minute, "" when none of the user's processes ran in
	// one. A rootful engine's processes show as root or a container UID:
	// the id is what lets an admin find whose they were. Optional; older
	// agents omit it.
	Container string `json:"container,omitempty"`
}

// UsageRecord is one GPU in one minute. Its key (node, GPU UUID, minute
// start in UTC) is stable: the portal stores each key once and ignores a resend.
type UsageRecord struct {
	GPUUUID string    `json:"gpu_uuid"`
	Minute  time.Time `json:"minute"` // start of the minute, UTC, seconds zero
	// UtilAvgPct and UtilMaxPct are null for MIG-enabled GPUs, where NVML
	// cannot measure whole-GPU utilisation.
	UtilAvgPct  *float64    `json:"util_avg_pct"`
	UtilMaxPct  *float64    `json:"util_max_pct"`
	MemUsedMiB  int64       `json:"mem_used_mib"` // maximum over the minute's samples
	MemTotalMiB int64       `json:"mem_total_mib"`
	Samples     int         `json:"samples"`
	Users       []UserUsage `json:"users"`
}

// Key is the record's idempotency key.
func (r UsageRecord) Key(node string) string {
	return node + "|" + r.GPUUUID + "|" + r.Minute.UTC().Format(time.RFC3339)
}

// UsageBatch carries per-minute records, oldest first. BatchID is unique
// per node (the spool sequence) and only helps logs; dedup is by record key.
type UsageBatch struct {
	Node    string        `json:"node"`
	BatchID string        `json:"batch_id"`
	Records []UsageRecord `json:"records"`
}

// Violation is one anomaly the agent saw. ID is stable for the whole
// episode (node, kind, GPU, PID, first seen), so escalations update it.
type Violation struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	GPUUUID   string `json:"gpu_uuid"`
	User      string `json:"user,omitempty"`
	UID       int    `json:"uid"`
	PID       int    `json:"pid,omitempty"`
	MemoryMiB int64  `json:"memory_mib"`
	BookingID int64  `json:"booking_id,omitempty"` // the ended booking, for overstay
	// Container is the id of the container the process runs in, from its
	// cgroup (docker, containerd, podman), when it runs in one: a rootful
	// engine's processes show as root or a container UID, and the id is
	// what lets an admin find whose they are. Optional; older agents omit it.
	Container string    `json:"container,omitempty"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Action    string    `json:"action"`
}

// ViolationBatch carries violations in the order they happened or escalated.
type ViolationBatch struct {
	Node       string      `json:"node"`
	BatchID    string      `json:"batch_id"`
	Violations []Violation `json:"violations"`
}

// IdleReport says that GPUs of an active booking have been idle (below
// the utilisation threshold with no process) since IdleSince. ID is stable
// per (booking, idle episode). The portal warns the owner and may release.
type IdleReport struct {
	ID         string    `json:"id"`
	BookingID  int64     `json:"booking_id"`
	User       string    `json:"user"`
	GPUUUIDs   []string  `json:"gpu_uuids"`
	IdleSince  time.Time `json:"idle_since"`
	ReportedAt time.Time `json:"reported_at"`
}

// IdleBatch carries idle reports.
type IdleBatch struct {
	Node    string       `json:"node"`
	BatchID string       `json:"batch_id"`
	Reports []IdleReport `json:"reports"`
}

// Heartbeat tells the portal the agent is alive and how far behind it is.
type Heartbeat struct {
	Node          string    `json:"node"`
	AgentVersion  string    `json:"agent_version"`
	SentAt        time.Time `json:"sent_at"`
	ScheduleETag  string    `json:"schedule_etag,omitempty"`
	SpoolDepth    int       `json:"spool_depth"`
	OldestSpooled time.Time `json:"oldest_spooled,omitzero"`
	NVMLOK        bool      `json:"nvml_ok"`

	// What the agent could not deliver or sample, for the node page: batches
	// the portal refused as invalid (set aside on the node, newest reason),
	// entries dropped at the spool's bounds since it was created, and since
	// when NVML has been unavailable (zero while it works).
	SpoolSetAside       int       `json:"spool_set_aside"`
	SpoolSetAsideReason string    `json:"spool_set_aside_reason,omitempty"`
	SpoolSetAsideAt     time.Time `json:"spool_set_aside_at,omitzero"`
	SpoolDroppedUsage   int64     `json:"spool_dropped_usage"`
	SpoolDroppedEvents  int64     `json:"spool_dropped_events"`
	NVMLDownSince       time.Time `json:"nvml_down_since,omitzero"`

	// Lock is how the node enforces bookings, shown on the node page:
	// "lock v1" / "lock v2" (cgroup device rules), "detect", or "detect
	// (cannot lock: REASON)" when lock was asked for and the node cannot
	// do it. Empty from agents that predate it.
	Lock string `json:"lock,omitempty"`

	// SampleError is the latest sample's error and SampleFailingSince the
	// first of the samples failing since the last good one (empty and zero
	// while sampling works): an agent that runs but cannot measure is
	// degraded, and what the portal shows of its GPUs is stale.
	SampleError        string    `json:"sample_error,omitempty"`
	SampleFailingSince time.Time `json:"sample_failing_since,omitzero"`
}
