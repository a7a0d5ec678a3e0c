package telemetry

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

type violationRow struct {
	ID         int64          `gorm:"column:id"`
	NodeID     int64          `gorm:"column:node_id"`
	NodeName   string         `gorm:"column:node_name"`
	AgentKey   string         `gorm:"column:agent_key"`
	Kind       string         `gorm:"column:kind"`
	GPUID      int64          `gorm:"column:gpu_id"`
	GPUIndex   int            `gorm:"column:gpu_index"`
	GPUUUID    string         `gorm:"column:gpu_uuid"`
	UserName   string         `gorm:"column:user_name"`
	UserID     *int64         `gorm:"column:user_id"`
	UID        int            `gorm:"column:uid"`
	PID        int            `gorm:"column:pid"`
	MemoryMiB  int64          `gorm:"column:memory_mib"`
	BookingID  *int64         `gorm:"column:booking_id"`
	Action     string         `gorm:"column:action"`
	FirstSeen  time.Time      `gorm:"column:first_seen"`
	LastSeen   time.Time      `gorm:"column:last_seen"`
	ReceivedAt time.Time      `gorm:"column:received_at"`
	Container  string         `gorm:"column:container"`
	PersonName string         `gorm:"column:person_name"`
	Unit       store.UnitCols `gorm:"embedded"`
}

func (r violationRow) model() models.Violation {
	v := models.Violation{ID: r.ID, NodeID: r.NodeID, NodeName: r.NodeName, AgentKey: r.AgentKey, Kind: r.Kind, GPUID: r.GPUID,
		GPUIndex: r.GPUIndex, GPUName: r.Unit.Name(), GPUUUID: r.GPUUUID, UserName: r.UserName, UID: r.UID, PID: r.PID, MemoryMiB: r.MemoryMiB,
		Action: r.Action, FirstSeen: r.FirstSeen.UTC(), LastSeen: r.LastSeen.UTC(), ReceivedAt: r.ReceivedAt.UTC(), Container: r.Container,
		PersonName: r.PersonName}
	if r.UserID != nil {
		v.UserID = *r.UserID
	}
	if r.BookingID != nil {
		v.BookingID = *r.BookingID
	}
	return v
}

// Violations returns violations matching f, most recently seen first (at most 500).
func (db *Store) Violations(ctx context.Context, f models.ViolationFilter) ([]models.Violation, error) {
	q := db.st.Gorm.WithContext(ctx).Table("agent_violations v").
		Select("v.*, n.name AS node_name, g.idx AS gpu_index, g.uuid AS gpu_uuid, COALESCE(u.name, '') AS person_name, " + store.UnitSQL).
		Joins("JOIN nodes n ON n.id = v.node_id").Joins("JOIN gpus g ON g.id = v.gpu_id").Joins("LEFT JOIN gpus p ON p.id = g.parent_id").Joins("LEFT JOIN users u ON u.id = v.user_id")
	switch {
	case f.UserID != 0 && len(f.UserNames) > 0:
		q = q.Where("(v.user_id = ? OR v.user_name IN ?)", f.UserID, f.UserNames)
	case f.UserID != 0:
		q = q.Where("v.user_id = ?", f.UserID)
	case len(f.UserNames) > 0:
		q = q.Where("v.user_name IN ?", f.UserNames)
	}
	if f.NodeIDs != nil {
		q = store.WhereIDIn(q, "v.node_id", f.NodeIDs)
	}
	if !f.Since.IsZero() {
		q = q.Where("v.last_seen >= ?", store.UTC(f.Since))
	}
	var rows []violationRow
	if err := q.Order("v.last_seen DESC, v.id DESC").Limit(limitOr(f.Limit, 100, 500)).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: violations: %w", err)
	}
	out := make([]models.Violation, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
}

type idleRow struct {
	ID            int64      `gorm:"column:id"`
	NodeID        int64      `gorm:"column:node_id"`
	NodeName      string     `gorm:"column:node_name"`
	AgentKey      string     `gorm:"column:agent_key"`
	BookingID     int64      `gorm:"column:booking_id"`
	UserID        int64      `gorm:"column:owner_id"`
	UserName      string     `gorm:"column:user_name"`
	GPUUUIDs      string     `gorm:"column:gpu_uuids"`
	IdleSince     time.Time  `gorm:"column:idle_since"`
	ReportedAt    time.Time  `gorm:"column:reported_at"`
	ReceivedAt    time.Time  `gorm:"column:received_at"`
	WarnedAt      *time.Time `gorm:"column:warned_at"`
	ReleasedAt    *time.Time `gorm:"column:released_at"`
	BookingEndsAt time.Time  `gorm:"column:booking_ends_at"`
}

// scanIdleRows reads q's rows column by column: GORM's Find reflects on
// every field of every row, which made reading back a batch of 500 idle
// reports cost the server more than the batch itself (a tenth of the
// memory of a largest idle request went to it).
func scanIdleRows(q *gorm.DB) ([]idleRow, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []idleRow
	for rows.Next() {
		var r idleRow
		var warned, released sql.NullTime
		if err := rows.Scan(&r.ID, &r.NodeID, &r.NodeName, &r.AgentKey, &r.BookingID, &r.UserID, &r.UserName, &r.GPUUUIDs,
			&r.IdleSince, &r.ReportedAt, &r.ReceivedAt, &warned, &released, &r.BookingEndsAt); err != nil {
			return nil, err
		}
		if warned.Valid {
			r.WarnedAt = &warned.Time
		}
		if released.Valid {
			r.ReleasedAt = &released.Time
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// idleReports reads idle reports with their booking's owner and end and the
// IDs of their GPUs, newest first.
func (db *Store) idleReports(ctx context.Context, scope func(*gorm.DB) *gorm.DB) ([]models.IdleReport, error) {
	rows, err := scanIdleRows(db.st.Gorm.WithContext(ctx).Table("agent_idle_reports i").
		Select("i.id, i.node_id, n.name, i.agent_key, i.booking_id, b.user_id, i.user_name, i.gpu_uuids, i.idle_since, " +
			"i.reported_at, i.received_at, i.warned_at, i.released_at, b.ends_at").
		Joins("JOIN nodes n ON n.id = i.node_id").Joins("JOIN bookings b ON b.id = i.booking_id").
		Scopes(scope).Order("i.reported_at DESC, i.id DESC").Limit(500))
	if err != nil {
		return nil, fmt.Errorf("store: idle reports: %w", err)
	}
	var uuids []string
	seen := map[string]bool{}
	for _, r := range rows {
		for _, u := range strings.Split(r.GPUUUIDs, ",") {
			if !seen[u] { // a node's few GPUs, named by every report
				seen[u] = true
				uuids = append(uuids, u)
			}
		}
	}
	ids := map[string]int64{}
	if len(uuids) > 0 {
		var gs []struct {
			ID   int64  `gorm:"column:id"`
			UUID string `gorm:"column:uuid"`
		}
		if err := db.st.Gorm.WithContext(ctx).Table("gpus").Select("id, uuid").Where("uuid IN ?", uuids).Find(&gs).Error; err != nil {
			return nil, fmt.Errorf("store: idle gpus: %w", err)
		}
		for _, g := range gs {
			ids[g.UUID] = g.ID
		}
	}
	out := make([]models.IdleReport, len(rows))
	for i, r := range rows {
		out[i] = models.IdleReport{ID: r.ID, NodeID: r.NodeID, NodeName: r.NodeName, AgentKey: r.AgentKey, BookingID: r.BookingID,
			UserID: r.UserID, UserName: r.UserName, GPUUUIDs: strings.Split(r.GPUUUIDs, ","), IdleSince: r.IdleSince.UTC(),
			ReportedAt: r.ReportedAt.UTC(), ReceivedAt: r.ReceivedAt.UTC(), WarnedAt: store.UTCPtr(r.WarnedAt),
			ReleasedAt: store.UTCPtr(r.ReleasedAt), BookingEndsAt: r.BookingEndsAt.UTC()}
		for _, u := range out[i].GPUUUIDs {
			if id, ok := ids[u]; ok {
				out[i].GPUIDs = append(out[i].GPUIDs, id)
			}
		}
	}
	return out, nil
}

// IdleReports returns idle reports matching f, newest first.
func (db *Store) IdleReports(ctx context.Context, f models.IdleFilter) ([]models.IdleReport, error) {
	out, err := db.idleReports(ctx, func(q *gorm.DB) *gorm.DB {
		if f.UserID != 0 {
			q = q.Where("b.user_id = ?", f.UserID)
		}
		if f.NodeIDs != nil {
			q = store.WhereIDIn(q, "i.node_id", f.NodeIDs)
		}
		if f.OpenOnly {
			q = q.Where("i.released_at IS NULL AND b.ends_at > ? AND b.status = ?", store.UTC(f.Now), models.StatusConfirmed)
		}
		if !f.Since.IsZero() {
			q = q.Where("i.reported_at >= ?", store.UTC(f.Since))
		}
		return q
	})
	if err != nil {
		return nil, err
	}
	if l := limitOr(f.Limit, 100, 500); len(out) > l {
		out = out[:l]
	}
	return out, nil
}

// LiveInputs reads what the live status page shows: the GPUs and nodes of
// the page (every one unless scope.Page names them), and of those nodes
// the bookings running now, recent violations and open idle reports (500
// at most of each: the page's, not the most recent of a whole large lab's,
// which could miss its nodes), and for the GPUs in scope the last hour of
// usage and the latest users.
func (db *Store) LiveInputs(ctx context.Context, now time.Time, scope models.LiveScope) (models.LiveInputs, error) {
	var in models.LiveInputs
	var err error
	if in.GPUs, err = db.st.GPUs(ctx); err != nil {
		return in, err
	}
	if in.GPUs = scope.PageGPUs(in.GPUs); scope.Page != nil {
		in.Nodes, err = db.st.AgentNodesOf(ctx, scope.Page)
	} else {
		in.Nodes, err = db.st.AgentNodes(ctx)
	}
	if err != nil {
		return in, err
	}
	if in.Bookings, err = db.st.Bookings(ctx, models.BookingFilter{From: now, To: now.Add(time.Second), NodeIDs: scope.Page}); err != nil {
		return in, err
	}
	if in.Usage, in.Users, err = db.liveMinutes(ctx, now, scope.GPUIDs(in.GPUs)); err != nil {
		return in, err
	}
	recent := models.ViolationFilter{NodeIDs: scope.Page, Since: now.Add(-models.ViolationRecent), Limit: 500}
	if in.Violations, err = db.Violations(ctx, recent); err != nil {
		return in, err
	}
	in.Idle, err = db.IdleReports(ctx, models.IdleFilter{NodeIDs: scope.Page, OpenOnly: true, Now: now, Limit: 500})
	return in, err
}

// liveMinutes reads the last hour of usage and the last ten minutes of
// users of gpuIDs (nil: every GPU; empty: none, and no query).
func (db *Store) liveMinutes(ctx context.Context, now time.Time, gpuIDs []int64) ([]models.UsageMinute, []models.UserMinute, error) {
	if gpuIDs != nil && len(gpuIDs) == 0 {
		return nil, nil, nil
	}
	usage, err := db.usageSince(ctx, gpuIDs, now.UTC().Truncate(time.Minute).Add(-models.SparkMinutes*time.Minute))
	if err != nil {
		return nil, nil, err
	}
	users, err := db.userUsageSince(ctx, gpuIDs, now.Add(-10*time.Minute))
	return usage, users, err
}

func limitOr(n, def, most int) int {
	if n <= 0 {
		return def
	}
	return min(n, most)
}
