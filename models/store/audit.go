package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

type auditRow struct {
	ID         int64     `gorm:"column:id;primaryKey"`
	At         time.Time `gorm:"column:at"`
	ActorID    *int64    `gorm:"column:actor_id"`
	ActorLabel string    `gorm:"column:actor_label"`
	Action     string    `gorm:"column:action"`
	TargetType string    `gorm:"column:target_type"`
	TargetID   string    `gorm:"column:target_id"`
	Details    string    `gorm:"column:details"`
	IP         string    `gorm:"column:ip"`
}

func (auditRow) TableName() string { return "audit_events" }

func (r auditRow) model() models.AuditEvent {
	return models.AuditEvent{ID: r.ID, At: r.At.UTC(), ActorID: r.ActorID, ActorLabel: r.ActorLabel, Action: r.Action,
		TargetType: r.TargetType, TargetID: r.TargetID, Details: r.Details, IP: r.IP}
}

// audit writes one event inside tx, so that a change and its record land together.
func audit(tx *gorm.DB, by models.Actor, action, targetType string, targetID int64, details any) error {
	if by.IP == "" { // the web layer put the client's address in the request
		by.IP = models.ClientIPFromContext(tx.Statement.Context)
	}
	row, err := newAuditRow(by, action, targetType, targetID, details)
	if err != nil {
		return err
	}
	if err := tx.Create(&row).Error; err != nil {
		return fmt.Errorf("store: audit %s: %w", action, err)
	}
	return nil
}

// newAuditRow builds the event audit writes, for writers that insert it
// in a statement of their own (bookings.go).
func newAuditRow(by models.Actor, action, targetType string, targetID int64, details any) (auditRow, error) {
	row := auditRow{At: utc(time.Now()), ActorLabel: by.Label, Action: action, TargetType: targetType, IP: by.IP}
	if by.UserID != 0 {
		id := by.UserID
		row.ActorID = &id
	}
	if targetID != 0 {
		row.TargetID = strconv.FormatInt(targetID, 10)
	}
	if details != nil {
		b, err := json.Marshal(details)
		if err != nil {
			return row, fmt.Errorf("store: audit details: %w", err)
		}
		row.Details = string(b)
	}
	return row, nil
}

// RecordAudit writes one event on its own, for actions that change nothing
// else in the database (sign-in, sign-out, failed sign-in).
func (db *DB) RecordAudit(ctx context.Context, e models.AuditEvent) error {
	row := auditRow{At: utc(e.At), ActorID: e.ActorID, ActorLabel: e.ActorLabel, Action: e.Action,
		TargetType: e.TargetType, TargetID: e.TargetID, Details: e.Details, IP: e.IP}
	if row.At.IsZero() {
		row.At = utc(time.Now())
	}
	return mapErr(db.Gorm.WithContext(ctx).Create(&row).Error, "audit event")
}

// AuditEvents returns events matching f, newest first (at most 500).
func (db *DB) AuditEvents(ctx context.Context, f models.AuditFilter) ([]models.AuditEvent, error) {
	q := db.Gorm.WithContext(ctx).Model(&auditRow{})
	switch {
	case strings.HasSuffix(f.Action, "."):
		q = q.Where("action LIKE ?", f.Action+"%")
	case f.Action != "":
		q = q.Where("action = ?", f.Action)
	}
	if f.ActorID != 0 {
		q = q.Where("actor_id = ?", f.ActorID)
	}
	if u := f.About; u != 0 {
		id := strconv.FormatInt(u, 10)
		// Writers marshal details with encoding/json: "user_id":4 is
		// followed by a comma or the closing brace.
		q = q.Where("(actor_id = ? OR (target_type = 'user' AND target_id = ?) OR details LIKE ? OR details LIKE ?)",
			u, id, `%"user_id":`+id+`,%`, `%"user_id":`+id+`}%`)
	}
	if f.TargetType != "" {
		q = q.Where("target_type = ?", f.TargetType)
	}
	if f.TargetID != "" {
		q = q.Where("target_id = ?", f.TargetID)
	}
	if !f.Since.IsZero() {
		q = q.Where("at >= ?", utc(f.Since))
	}
	if !f.Until.IsZero() {
		q = q.Where("at < ?", utc(f.Until))
	}
	limit := f.Limit
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	var rows []auditRow
	if err := q.Order("at DESC, id DESC").Limit(limit).Offset(f.Offset).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: audit events: %w", err)
	}
	out := make([]models.AuditEvent, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
}
