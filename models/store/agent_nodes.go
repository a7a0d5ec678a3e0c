package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
)

// Audit actions of the agent side.
const (
	auditEnrollToken = "node.enroll_token"
	auditEnroll      = "node.enroll"
	auditInventory   = "node.inventory"
)

type agentNodeRow struct {
	NodeID          int64      `gorm:"column:node_id;primaryKey;autoIncrement:false"`
	CredentialHash  *string    `gorm:"column:credential_hash"`
	Hostname        string     `gorm:"column:hostname"`
	AgentVersion    string     `gorm:"column:agent_version"`
	DriverVersion   string     `gorm:"column:driver_version"`
	EnrolledAt      *time.Time `gorm:"column:enrolled_at"`
	LastSeenAt      *time.Time `gorm:"column:last_seen_at"`
	LastHeartbeatAt *time.Time `gorm:"column:last_heartbeat_at"`
	InventoryAt     *time.Time `gorm:"column:inventory_at"`
	SpoolDepth      int        `gorm:"column:spool_depth"`
	OldestSpooled   *time.Time `gorm:"column:oldest_spooled"`
	NVMLOK          bool       `gorm:"column:nvml_ok"`
	ScheduleETag    string     `gorm:"column:schedule_etag"`
	UpdatedAt       time.Time  `gorm:"column:updated_at"`
}

func (agentNodeRow) TableName() string { return "agent_nodes" }

type enrollTokenRow struct {
	ID        int64      `gorm:"column:id;primaryKey"`
	NodeID    int64      `gorm:"column:node_id"`
	Hash      string     `gorm:"column:token_hash"`
	CreatedBy *int64     `gorm:"column:created_by"`
	CreatedAt time.Time  `gorm:"column:created_at"`
	ExpiresAt time.Time  `gorm:"column:expires_at"`
	UsedAt    *time.Time `gorm:"column:used_at"`
}

func (enrollTokenRow) TableName() string { return "agent_enroll_tokens" }

// CreateEnrollToken makes a one-time enrolment token for a node, valid for
// models.EnrollTokenValidity. Earlier unused tokens of the node stay valid
// until they expire: an admin may open the page twice.
func (db *DB) CreateEnrollToken(ctx context.Context, nodeID int64, now time.Time, by models.Actor) (string, time.Time, error) {
	plain, hash, err := models.NewAgentSecret(models.EnrollTokenPrefix)
	if err != nil {
		return "", time.Time{}, err
	}
	row := enrollTokenRow{NodeID: nodeID, Hash: hash, CreatedAt: utc(now), ExpiresAt: utc(now.Add(models.EnrollTokenValidity))}
	if by.UserID != 0 {
		id := by.UserID
		row.CreatedBy = &id
	}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Take(&nodeRow{}, "id = ?", nodeID).Error; err != nil {
			return err
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return audit(tx, by, auditEnrollToken, "node", nodeID, map[string]any{"expires_at": row.ExpiresAt})
	})
	if err != nil {
		return "", time.Time{}, mapErr(err, "node")
	}
	return plain, row.ExpiresAt, nil
}

// Enroll spends a one-time token and gives the node a new credential,
// replacing any earlier one. The token is claimed with a conditional
// UPDATE, so two agents racing with one token cannot both win.
func (db *DB) Enroll(ctx context.Context, req wire.EnrollRequest, now time.Time) (wire.EnrollResponse, error) {
	if err := models.AgentError(req.Validate()); err != nil {
		return wire.EnrollResponse{}, err
	}
	plain, hash, err := models.NewAgentSecret(models.NodeCredentialPrefix)
	if err != nil {
		return wire.EnrollResponse{}, err
	}
	var resp wire.EnrollResponse
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var tok enrollTokenRow
		err := tx.Take(&tok, "token_hash = ?", models.HashToken(req.Token)).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return models.ErrEnrollToken()
		}
		if err != nil {
			return fmt.Errorf("store: enroll token: %w", err)
		}
		if !models.EnrollTokenUsable(tok.ExpiresAt, tok.UsedAt, now) {
			return models.ErrEnrollToken()
		}
		res := tx.Model(&enrollTokenRow{}).Where("id = ? AND used_at IS NULL", tok.ID).Update("used_at", utc(now))
		if res.Error != nil {
			return fmt.Errorf("store: use enroll token: %w", res.Error)
		}
		if res.RowsAffected != 1 {
			return models.ErrEnrollToken()
		}
		var node nodeRow
		if err := tx.Take(&node, "id = ?", tok.NodeID).Error; err != nil {
			return err
		}
		t := utc(now)
		row := agentNodeRow{NodeID: node.ID, CredentialHash: &hash, Hostname: clip(req.Hostname, 255),
			AgentVersion: clip(req.AgentVersion, 100), EnrolledAt: &t, LastSeenAt: &t, UpdatedAt: t}
		if err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "node_id"}},
			DoUpdates: clause.AssignmentColumns([]string{"credential_hash", "hostname", "agent_version", "enrolled_at", "last_seen_at", "updated_at"}),
		}).Create(&row).Error; err != nil {
			return err
		}
		resp = wire.EnrollResponse{NodeID: node.ID, NodeName: node.Name, Credential: plain}
		return audit(tx, models.Actor{Label: "agent:" + node.Name}, auditEnroll, "node", node.ID,
			map[string]any{"hostname": row.Hostname, "agent_version": row.AgentVersion})
	})
	if err != nil {
		return wire.EnrollResponse{}, mapErr(err, "node")
	}
	return resp, nil
}

// lastSeenEvery is how stale agent_nodes.last_seen_at may grow before an
// agent call other than the heartbeat writes it again. Pages show "last
// seen" to the minute and call a node offline after
// models.NodeOfflineAfter (2 min). The heartbeat (every 60 s by default)
// writes it anyway, so while heartbeats arrive no other call needs to: at
// one minute, a schedule sync written just before each heartbeat doubled
// the node's liveness writes (two committed updates per node and minute,
// 100 a second at 50,000 GPUs). When heartbeats stop, the syncs (every
// 30 s) keep it within 75 + 30 s, under the two minutes.
const lastSeenEvery = 75 * time.Second

// NodeByCredential returns the node a credential belongs to in one read,
// and notes that it was seen when the stored time is older than
// lastSeenEvery: most agent calls cost one indexed SELECT and no write.
func (db *DB) NodeByCredential(ctx context.Context, plain string, now time.Time) (*models.AgentNode, error) {
	rows, err := queryAll(db.raw(ctx), nodeByCredentialSQL, scanAgentNode, models.HashToken(plain))
	if err != nil {
		return nil, fmt.Errorf("store: node by credential: %w", err)
	}
	if len(rows) == 0 {
		return nil, models.ErrNodeCredential()
	}
	n := rows[0].model()
	if n.LastSeenAt == nil || now.Sub(*n.LastSeenAt) >= lastSeenEvery {
		t := utc(now)
		// The condition keeps two replicas answering the same node at once
		// from both writing; it never moves last_seen_at backwards.
		if err := db.Gorm.WithContext(ctx).Model(&agentNodeRow{}).
			Where("node_id = ? AND (last_seen_at IS NULL OR last_seen_at < ?)", n.NodeID, t).
			Updates(map[string]any{"last_seen_at": t}).Error; err != nil {
			return nil, fmt.Errorf("store: node last seen: %w", err)
		}
		n.LastSeenAt = &t
	}
	return &n, nil
}

// agentNodeView is a node LEFT JOINed with its agent state.
type agentNodeView struct {
	ID              int64      `gorm:"column:id"`
	Name            string     `gorm:"column:name"`
	CredentialHash  *string    `gorm:"column:credential_hash"`
	Hostname        *string    `gorm:"column:hostname"`
	AgentVersion    *string    `gorm:"column:agent_version"`
	DriverVersion   *string    `gorm:"column:driver_version"`
	EnrolledAt      *time.Time `gorm:"column:enrolled_at"`
	LastSeenAt      *time.Time `gorm:"column:last_seen_at"`
	LastHeartbeatAt *time.Time `gorm:"column:last_heartbeat_at"`
	InventoryAt     *time.Time `gorm:"column:inventory_at"`
	SpoolDepth      *int       `gorm:"column:spool_depth"`
	OldestSpooled   *time.Time `gorm:"column:oldest_spooled"`
	NVMLOK          *bool      `gorm:"column:nvml_ok"`

	SpoolSetAside       *int       `gorm:"column:spool_set_aside"`
	SpoolSetAsideReason *string    `gorm:"column:spool_set_aside_reason"`
	SpoolSetAsideAt     *time.Time `gorm:"column:spool_set_aside_at"`
	SpoolDroppedUsage   *int64     `gorm:"column:spool_dropped_usage"`
	SpoolDroppedEvents  *int64     `gorm:"column:spool_dropped_events"`
	NVMLDownSince       *time.Time `gorm:"column:nvml_down_since"`

	LockMode *string `gorm:"column:lock_mode"`

	SampleError        *string    `gorm:"column:sample_error"`
	SampleFailingSince *time.Time `gorm:"column:sample_failing_since"`
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (r agentNodeView) model() models.AgentNode {
	return models.AgentNode{NodeID: r.ID, NodeName: r.Name, Enrolled: r.CredentialHash != nil, Hostname: deref(r.Hostname),
		AgentVersion: deref(r.AgentVersion), DriverVersion: deref(r.DriverVersion), EnrolledAt: utcPtr(r.EnrolledAt),
		LastSeenAt: utcPtr(r.LastSeenAt), LastHeartbeatAt: utcPtr(r.LastHeartbeatAt), InventoryAt: utcPtr(r.InventoryAt),
		SpoolDepth: deref(r.SpoolDepth), OldestSpooled: utcPtr(r.OldestSpooled), NVMLOK: deref(r.NVMLOK),
		SpoolSetAside: deref(r.SpoolSetAside), SpoolSetAsideReason: deref(r.SpoolSetAsideReason), SpoolSetAsideAt: utcPtr(r.SpoolSetAsideAt),
		SpoolDroppedUsage: deref(r.SpoolDroppedUsage), SpoolDroppedEvents: deref(r.SpoolDroppedEvents), NVMLDownSince: utcPtr(r.NVMLDownSince),
		Lock: deref(r.LockMode), SampleError: deref(r.SampleError), SampleFailingSince: utcPtr(r.SampleFailingSince)}
}

// agentNodeSelect reads nodes n LEFT JOINed with their agent state a, as
// agentNodeView.scan takes the columns. Its statements run without GORM
// (raw_sql.go): the credential's look-up is the first read of every agent
// request, and GORM's reflection was most of its cost (7 % of the portal's
// CPU under fleetbench at 16,000 GPUs, with the live status page's read
// of every node another 5 %).
const agentNodeSelect = `SELECT n.id, n.name, a.credential_hash, a.hostname, a.agent_version, a.driver_version, a.enrolled_at,
	a.last_seen_at, a.last_heartbeat_at, a.inventory_at, a.spool_depth, a.oldest_spooled, a.nvml_ok,
	a.spool_set_aside, a.spool_set_aside_reason, a.spool_set_aside_at, a.spool_dropped_usage, a.spool_dropped_events,
	a.nvml_down_since, a.lock_mode, a.sample_error, a.sample_failing_since
FROM nodes n LEFT JOIN agent_nodes a ON a.node_id = n.id`

var (
	nodeByCredentialSQL = newRawSQL(agentNodeSelect + ` WHERE a.credential_hash = ? LIMIT 1`)
	agentNodesSQL       = newRawSQL(agentNodeSelect + ` ORDER BY n.name`)
	agentNodesOfSQL     = listSQL(agentNodeSelect + ` WHERE n.id IN ? ORDER BY n.name`)
	agentNodeSQL        = newRawSQL(agentNodeSelect + ` WHERE n.id = ?`)
)

func scanAgentNode(rows *sql.Rows) (r agentNodeView, err error) {
	err = rows.Scan(&r.ID, &r.Name, &r.CredentialHash, &r.Hostname, &r.AgentVersion, &r.DriverVersion, &r.EnrolledAt,
		&r.LastSeenAt, &r.LastHeartbeatAt, &r.InventoryAt, &r.SpoolDepth, &r.OldestSpooled, &r.NVMLOK,
		&r.SpoolSetAside, &r.SpoolSetAsideReason, &r.SpoolSetAsideAt, &r.SpoolDroppedUsage, &r.SpoolDroppedEvents,
		&r.NVMLDownSince, &r.LockMode, &r.SampleError, &r.SampleFailingSince)
	return r, err
}

// AgentNodes returns every node with its agent state (zero for nodes never
// enrolled), by name.
func (db *DB) AgentNodes(ctx context.Context) ([]models.AgentNode, error) {
	return db.agentNodes(ctx, agentNodesSQL)
}

// AgentNodesOf is AgentNodes of the nodes ids only (a page of a large
// lab's status, of 6,250 nodes at 50,000 GPUs), by name.
func (db *DB) AgentNodesOf(ctx context.Context, ids []int64) ([]models.AgentNode, error) {
	return db.agentNodes(ctx, agentNodesOfSQL, db.raw(ctx).idListArg(ids))
}

func (db *DB) agentNodes(ctx context.Context, q rawSQL, args ...any) ([]models.AgentNode, error) {
	rows, err := queryAll(db.raw(ctx), q, scanAgentNode, args...)
	if err != nil {
		return nil, fmt.Errorf("store: agent nodes: %w", err)
	}
	out := make([]models.AgentNode, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
}

// AgentNode returns one node's agent state.
func (db *DB) AgentNode(ctx context.Context, nodeID int64) (*models.AgentNode, error) {
	rows, err := queryAll(db.raw(ctx), agentNodeSQL, scanAgentNode, nodeID)
	if err != nil {
		return nil, fmt.Errorf("store: agent node: %w", err)
	}
	if len(rows) == 0 {
		return nil, mapErr(gorm.ErrRecordNotFound, "node")
	}
	n := rows[0].model()
	return &n, nil
}

// RecordHeartbeat stores what the agent says about itself.
func (db *DB) RecordHeartbeat(ctx context.Context, nodeID int64, hb wire.Heartbeat, now time.Time) error {
	if err := models.AgentError(hb.Validate()); err != nil {
		return err
	}
	t := utc(now)
	var oldest *time.Time
	if !hb.OldestSpooled.IsZero() {
		oldest = utcPtr(&hb.OldestSpooled)
	}
	_, err := db.raw(ctx).exec(heartbeatSQL, t, t, clip(hb.AgentVersion, 100), max(hb.SpoolDepth, 0), oldest, hb.NVMLOK,
		clip(hb.ScheduleETag, 100), t, max(hb.SpoolSetAside, 0), clip(hb.SpoolSetAsideReason, 300), optTime(hb.SpoolSetAsideAt),
		max(hb.SpoolDroppedUsage, 0), max(hb.SpoolDroppedEvents, 0), optTime(hb.NVMLDownSince), clip(hb.Lock, wire.MaxLockLen),
		clip(hb.SampleError, 1024), optTime(hb.SampleFailingSince), nodeID)
	if err != nil {
		return fmt.Errorf("store: heartbeat: %w", err)
	}
	return nil
}

// heartbeatSQL stores a heartbeat, one statement without GORM (every node
// sends one a minute). On PostgreSQL its commit does not wait for the WAL
// to reach the disk: set_config(…, true) turns synchronous_commit off for
// this statement's own transaction only. A heartbeat lost to a crash of the
// database costs nothing (the next, a minute later, says the same), and
// under a fleet's ingest waiting for the flush was most of a heartbeat's
// time and a third of the flushes per node and minute.
var heartbeatSQL = func() rawSQL {
	q := `UPDATE agent_nodes SET last_seen_at = ?, last_heartbeat_at = ?, agent_version = ?, spool_depth = ?,
	oldest_spooled = ?, nvml_ok = ?, schedule_etag = ?, updated_at = ?, spool_set_aside = ?, spool_set_aside_reason = ?,
	spool_set_aside_at = ?, spool_dropped_usage = ?, spool_dropped_events = ?, nvml_down_since = ?, lock_mode = ?,
	sample_error = ?, sample_failing_since = ?
WHERE node_id = ?`
	return rawSQL{sqlite: q, postgres: DollarParams(q + " AND set_config('synchronous_commit', 'off', true) = 'off'")}
}()

// optTime stores a zero time as NULL.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return utcPtr(&t)
}

// clip bounds a string an agent sends, so that a broken agent cannot fill a row.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // never cut a character in two: PostgreSQL refuses invalid UTF-8
	}
	return s[:n]
}
