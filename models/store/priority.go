package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

type requestRow struct {
	ID          int64      `gorm:"column:id;primaryKey"`
	UserID      int64      `gorm:"column:user_id"`
	TeamID      *int64     `gorm:"column:team_id"`
	NodeID      int64      `gorm:"column:node_id"`
	GPUIDs      string     `gorm:"column:gpu_ids"`
	StartsAt    time.Time  `gorm:"column:starts_at"`
	EndsAt      time.Time  `gorm:"column:ends_at"`
	Note        string     `gorm:"column:note"`
	Purpose     string     `gorm:"column:purpose"`
	Urgency     string     `gorm:"column:urgency"`
	Plan        string     `gorm:"column:plan"`
	GiveBack    string     `gorm:"column:give_back"`
	Preempt     bool       `gorm:"column:preempt"`
	Status      string     `gorm:"column:status"`
	DecidedBy   *int64     `gorm:"column:decided_by"`
	DecidedAt   *time.Time `gorm:"column:decided_at"`
	Comment     string     `gorm:"column:comment"`
	BookingID   *int64     `gorm:"column:booking_id"`
	CreatedAt   time.Time  `gorm:"column:created_at"`
	UpdatedAt   time.Time  `gorm:"column:updated_at"`
	UserName    string     `gorm:"column:user_name;->"`
	UserEmail   string     `gorm:"column:user_email;->"`
	NodeName    string     `gorm:"column:node_name;->"`
	TeamName    string     `gorm:"column:team_name;->"`
	DeciderName string     `gorm:"column:decider_name;->"`
}

func (requestRow) TableName() string { return "priority_requests" }

func (r requestRow) model() models.PriorityRequest {
	var ids []int64
	for _, s := range strings.Split(r.GPUIDs, ",") {
		if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	var dec *time.Time
	if r.DecidedAt != nil {
		t := r.DecidedAt.UTC()
		dec = &t
	}
	return models.PriorityRequest{ID: r.ID, UserID: r.UserID, TeamID: r.TeamID, NodeID: r.NodeID, GPUIDs: ids,
		StartsAt: r.StartsAt.UTC(), EndsAt: r.EndsAt.UTC(), Note: r.Note, Purpose: r.Purpose, Urgency: r.Urgency, Plan: r.Plan,
		GiveBack: r.GiveBack, Preempt: r.Preempt, Status: r.Status, DecidedBy: r.DecidedBy, DecidedAt: dec, Comment: r.Comment,
		BookingID: r.BookingID, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		UserName: r.UserName, UserEmail: r.UserEmail, NodeName: r.NodeName, TeamName: r.TeamName, DeciderName: r.DeciderName}
}

// joinIDs is ids in decimal, comma-separated (a stored GPU list, a list
// parameter's text: raw_sql.go).
func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

func requestQuery(tx *gorm.DB) *gorm.DB {
	return tx.Table("priority_requests r").
		Select("r.*, u.name AS user_name, u.email AS user_email, n.name AS node_name, t.name AS team_name, d.name AS decider_name").
		Joins("JOIN users u ON u.id = r.user_id").Joins("JOIN nodes n ON n.id = r.node_id").
		Joins("LEFT JOIN teams t ON t.id = r.team_id").Joins("LEFT JOIN users d ON d.id = r.decided_by")
}

// CreateRequest validates a priority request like a booking (but not
// against the policy, which it asks to go beyond) and stores it pending,
// for the leads of the team the requester chose (r.TeamID, one of theirs),
// or of their first team when they chose none. It holds nothing.
func (db *DB) CreateRequest(ctx context.Context, r *models.PriorityRequest, lim models.BookingLimits, now time.Time, by models.Actor, mail models.Mailer) error {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		gpus, err := gpusByID(tx, r.GPUIDs)
		if err != nil {
			return err
		}
		req, verr := models.ValidateNewBooking(r.Booking(), gpus, lim, now)
		jerr := models.ValidateJustification(r)
		if verr != nil || jerr != nil {
			return mergeInvalid(verr, jerr)
		}
		r.GPUIDs, r.StartsAt, r.EndsAt, r.Note = req.GPUIDs, req.StartsAt, req.EndsAt, req.Note
		r.NodeID = gpus[req.GPUIDs[0]].NodeID
		if err := requestTeam(tx, r); err != nil {
			return err
		}
		r.Status, r.CreatedAt, r.UpdatedAt = models.RequestPending, utc(now), utc(now)
		row := requestRow{UserID: r.UserID, TeamID: r.TeamID, NodeID: r.NodeID, GPUIDs: joinIDs(r.GPUIDs), StartsAt: utc(r.StartsAt),
			EndsAt: utc(r.EndsAt), Note: r.Note, Purpose: r.Purpose, Urgency: r.Urgency, Plan: r.Plan, GiveBack: r.GiveBack,
			Preempt: r.Preempt, Status: r.Status, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
		if err := tx.Omit("user_name", "user_email", "node_name", "team_name", "decider_name").Create(&row).Error; err != nil {
			return fmt.Errorf("store: create request: %w", err)
		}
		var full requestRow // with the names the emails show
		if err := requestQuery(tx).Where("r.id = ?", row.ID).Take(&full).Error; err != nil {
			return fmt.Errorf("store: read request: %w", err)
		}
		*r = full.model()
		if err := notifyLeads(tx, mail, r, now); err != nil {
			return err
		}
		return audit(tx, by, models.AuditRequestCreate, "request", r.ID, map[string]any{"gpu_ids": r.GPUIDs,
			"starts_at": r.StartsAt, "ends_at": r.EndsAt, "preempt": r.Preempt, "team_id": r.TeamID})
	})
	return mapErr(err, "request")
}

// requestTeam checks the team the requester chose, or picks their first.
func requestTeam(tx *gorm.DB, r *models.PriorityRequest) error {
	var teams []int64
	if err := tx.Table("memberships").Where("user_id = ?", r.UserID).Order("team_id").Pluck("team_id", &teams).Error; err != nil {
		return fmt.Errorf("store: request team: %w", err)
	}
	switch {
	case r.TeamID != nil && !slices.Contains(teams, *r.TeamID):
		fe := models.FieldErrors{}
		fe.Add("team_id", models.M("request.err.team"))
		return fe.Err()
	case r.TeamID == nil && len(teams) > 0:
		r.TeamID = &teams[0]
	}
	return nil
}

// mergeInvalid joins the field problems of two validation errors into one.
func mergeInvalid(errs ...error) error {
	fe := models.FieldErrors{}
	for _, err := range errs {
		if err == nil {
			continue
		}
		e := models.AsError(err)
		if e.Code != models.EINVALID {
			return err
		}
		for k, m := range e.Fields {
			fe.Add(k, m)
		}
	}
	return fe.Err()
}

// Request returns one priority request, expiring it first if its start passed.
func (db *DB) Request(ctx context.Context, id int64) (*models.PriorityRequest, error) {
	var r requestRow
	if err := requestQuery(db.Gorm.WithContext(ctx)).Where("r.id = ?", id).Take(&r).Error; err != nil {
		return nil, mapErr(err, "request")
	}
	m := r.model()
	return &m, nil
}

// Requests lists priority requests, newest start last.
func (db *DB) Requests(ctx context.Context, f models.RequestFilter) ([]models.PriorityRequest, error) {
	q := requestQuery(db.Gorm.WithContext(ctx))
	if f.Status != "" {
		q = q.Where("r.status = ?", f.Status)
	}
	if f.UserID != 0 {
		q = q.Where("r.user_id = ?", f.UserID)
	}
	if f.Decider != nil {
		q = deciderScope(q, f.Decider)
	}
	if !f.From.IsZero() {
		q = q.Where("r.ends_at > ?", utc(f.From))
	}
	if !f.To.IsZero() {
		q = q.Where("r.starts_at < ?", utc(f.To))
	}
	limit := f.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	var rows []requestRow
	if err := q.Order("r.starts_at, r.id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: requests: %w", err)
	}
	out := make([]models.PriorityRequest, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
}

// deciderScope keeps the requests that u may decide: not their own, and
// their lead teams' unless u is an admin.
func deciderScope(q *gorm.DB, u *models.User) *gorm.DB {
	q = q.Where("r.user_id <> ?", u.ID)
	if u.IsAdmin {
		return q
	}
	return q.Where("r.team_id IN (SELECT team_id FROM memberships WHERE user_id = ? AND role = ?)", u.ID, models.RoleLead)
}

// CountPendingFor is the number beside the approvals link (NavState's).
func (db *DB) CountPendingFor(ctx context.Context, u *models.User, now time.Time) (int, error) {
	nav, err := db.NavState(ctx, u, now)
	return nav.PendingApprovals, err
}

// LeadTeams returns the teams userID leads.
func (db *DB) LeadTeams(ctx context.Context, userID int64) ([]int64, error) {
	return leadTeams(db.Gorm.WithContext(ctx), userID)
}

func leadTeams(tx *gorm.DB, userID int64) ([]int64, error) {
	var ids []int64
	err := tx.Table("memberships").Where("user_id = ? AND role = ?", userID, models.RoleLead).Order("team_id").Pluck("team_id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("store: lead teams: %w", err)
	}
	return ids, nil
}

// ExpireRequests marks every pending request whose start has passed as
// expired, each with its audit event. The approvals pages call it before
// reading; a periodic job calls it too.
func (db *DB) ExpireRequests(ctx context.Context, now time.Time) (int, error) {
	var due int64
	err := db.Gorm.WithContext(ctx).Model(&requestRow{}).Where("status = ? AND starts_at <= ?", models.RequestPending, utc(now)).Count(&due).Error
	if err != nil || due == 0 {
		return 0, mapErr(err, "request") // no write transaction when nothing is due
	}
	n := 0
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var ids []int64
		if err := tx.Model(&requestRow{}).Where("status = ? AND starts_at <= ?", models.RequestPending, utc(now)).Pluck("id", &ids).Error; err != nil {
			return fmt.Errorf("store: expire requests: %w", err)
		}
		for _, id := range ids {
			res := tx.Model(&requestRow{}).Where("id = ? AND status = ?", id, models.RequestPending).
				Updates(map[string]any{"status": models.RequestExpired, "updated_at": utc(now)})
			if res.Error != nil {
				return fmt.Errorf("store: expire request: %w", res.Error)
			}
			if res.RowsAffected == 0 {
				continue
			}
			n++
			if err := audit(tx, models.Actor{Label: "system"}, models.AuditRequestExpire, "request", id, nil); err != nil {
				return err
			}
		}
		return nil
	})
	return n, mapErr(err, "request")
}
