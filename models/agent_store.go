package models

import (
	"context"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

// AgentStore is what the agent API, the live status page and the violation
// pages need from the database. Every agent-facing method takes the node ID
// that the credential proved, never one from a request body.
type AgentStore interface {
	// CreateEnrollToken makes a one-time token for nodeID (plain shown once).
	CreateEnrollToken(ctx context.Context, nodeID int64, now time.Time, by Actor) (plain string, expiresAt time.Time, err error)
	// Enroll spends a token and returns the node's new credential.
	Enroll(ctx context.Context, req wire.EnrollRequest, now time.Time) (wire.EnrollResponse, error)
	// NodeByCredential authenticates an agent call and notes that the node was seen.
	NodeByCredential(ctx context.Context, plain string, now time.Time) (*AgentNode, error)
	AgentNodes(ctx context.Context) ([]AgentNode, error) // every node, enrolled or not
	AgentNode(ctx context.Context, nodeID int64) (*AgentNode, error)
	ApplyInventory(ctx context.Context, nodeID int64, inv wire.Inventory, now time.Time) (InventoryResult, error)
	AgentSchedule(ctx context.Context, nodeID int64, now time.Time) (wire.Schedule, string, error)
	// IngestUsage stores each (GPU, minute) once; records older than
	// retention are acknowledged and dropped.
	IngestUsage(ctx context.Context, nodeID int64, b wire.UsageBatch, retention time.Duration, now time.Time) (UsageResult, error)
	// IngestUsageStream is IngestUsage for a batch read one record at a
	// time (the agent API's, decoded from the body as it is stored).
	IngestUsageStream(ctx context.Context, nodeID int64, s wire.UsageStream, retention time.Duration, now time.Time) (UsageResult, error)
	RecordViolations(ctx context.Context, nodeID int64, b wire.ViolationBatch, now time.Time) error
	// RecordIdle stores idle reports and returns, per booking, those of
	// the batch nobody has been warned of yet.
	RecordIdle(ctx context.Context, nodeID int64, b wire.IdleBatch, now time.Time) ([]IdleToWarn, error)
	RecordHeartbeat(ctx context.Context, nodeID int64, hb wire.Heartbeat, now time.Time) error
	// IdleReleaseDue lists the node's open idle reports whose booking the
	// policy says to release at now.
	IdleReleaseDue(ctx context.Context, nodeID int64, pol IdlePolicy, now time.Time) ([]IdleReport, error)
	MarkIdle(ctx context.Context, reportID int64, warned, released bool, now time.Time) error
	// MarkIdleReports is MarkIdle for several reports at once.
	MarkIdleReports(ctx context.Context, reportIDs []int64, warned, released bool, now time.Time) error
	Violations(ctx context.Context, f ViolationFilter) ([]Violation, error)
	IdleReports(ctx context.Context, f IdleFilter) ([]IdleReport, error)
	LiveInputs(ctx context.Context, now time.Time, scope LiveScope) (LiveInputs, error)
	// PruneUsage deletes usage rows of minutes before before (retention).
	PruneUsage(ctx context.Context, before time.Time) (int64, error)
}

// InventoryResult counts what an inventory report changed.
type InventoryResult struct {
	Added, Updated, Replaced, Missing int
}

// UsageResult counts a usage batch: Inserted new GPU-minutes, Duplicates
// already stored (a resend), Stale ones older than retention.
type UsageResult struct {
	Inserted, Duplicates, Stale int
}

// Violation is an anomaly an agent reported, as the portal keeps it.
type Violation struct {
	ID       int64
	NodeID   int64
	NodeName string
	AgentKey string
	Kind     string
	GPUID    int64
	GPUIndex int
	GPUName  string // UnitName: "GPU 3 · 1g.10gb" for a MIG instance
	GPUUUID  string
	UserName string
	UserID   int64 // 0 when the unix name matches no gpubook user
	// PersonName is that gpubook user's name, which pages show (linked to
	// the user for admins) beside the login; "" when UserID is 0.
	PersonName string
	UID        int
	Container  string // the container id the process ran in, "" when none
	PID        int
	MemoryMiB  int64
	BookingID  int64
	Action     string
	FirstSeen  time.Time
	LastSeen   time.Time
	ReceivedAt time.Time
}

// ViolationRecent is how long after its last sighting a violation is
// highlighted on the status page.
const ViolationRecent = 10 * time.Minute

// ViolationFilter selects violations, newest first.
type ViolationFilter struct {
	UserID    int64    // the gpubook user, or
	UserNames []string // one of their unix names (either matches)
	NodeIDs   []int64  // when not nil, these nodes' only (a page of the status)
	Since     time.Time
	Limit     int
}

// IdleToWarn is one booking's reports of an idle batch that no one has been
// warned of (nor released) yet: the newest in full, for the warning, and the
// IDs of all of them, to mark warned together. The owner is warned once
// per booking and batch, however many reports name it.
type IdleToWarn struct {
	Report IdleReport
	IDs    []int64
}

// IdleReport is an agent's "this booking's GPUs are idle", with what the
// portal did about it.
type IdleReport struct {
	ID         int64
	NodeID     int64
	NodeName   string
	AgentKey   string
	BookingID  int64
	UserID     int64 // the booking's owner
	UserName   string
	GPUUUIDs   []string
	IdleSince  time.Time
	ReportedAt time.Time
	ReceivedAt time.Time
	WarnedAt   *time.Time
	ReleasedAt *time.Time
	// Filled by queries, for the rules and the pages.
	BookingEndsAt time.Time
	GPUIDs        []int64
}

// IdleFilter selects idle reports, newest first.
type IdleFilter struct {
	UserID   int64
	NodeIDs  []int64 // when not nil, these nodes' only (a page of the status)
	OpenOnly bool    // booking still running at Now and not released
	Now      time.Time
	Since    time.Time
	Limit    int
}

// UsageMinute is one GPU in one minute, as stored.
type UsageMinute struct {
	GPUID       int64
	Minute      time.Time
	UtilAvgPct  *float64
	UtilMaxPct  *float64
	MemUsedMiB  int64
	MemTotalMiB int64
	Samples     int
}

// UserMinute is one unix user's share of one GPU in one minute.
type UserMinute struct {
	GPUID     int64
	Minute    time.Time
	UserName  string
	UserID    int64
	UID       int // -1 when the agent did not know it
	MemoryMiB int64
	Processes int
	Busy      bool
	// Container is the container that held most of the user's memory, ""
	// when none of their processes ran in one (wire.UserUsage.Container).
	Container string
}

// LiveInputs is what the live status page is computed from.
type LiveInputs struct {
	GPUs       []GPU
	Nodes      []AgentNode
	Bookings   []Booking // active now
	Usage      []UsageMinute
	Users      []UserMinute
	Violations []Violation // seen within ViolationRecent
	Idle       []IdleReport
}
