package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gpubook/gpubook/models"
)

type notificationRow struct {
	ID        int64      `gorm:"column:id;primaryKey"`
	UserID    int64      `gorm:"column:user_id"`
	Kind      string     `gorm:"column:kind"`
	DedupKey  string     `gorm:"column:dedup_key"`
	Link      string     `gorm:"column:link"`
	Params    string     `gorm:"column:params"`
	CreatedAt time.Time  `gorm:"column:created_at"`
	ReadAt    *time.Time `gorm:"column:read_at"`
}

func (notificationRow) TableName() string { return "notifications" }

func (r notificationRow) model() models.Notification {
	n := models.Notification{ID: r.ID, UserID: r.UserID, Kind: r.Kind, DedupKey: r.DedupKey, Link: r.Link, CreatedAt: r.CreatedAt.UTC()}
	if r.ReadAt != nil {
		at := r.ReadAt.UTC()
		n.ReadAt = &at
	}
	// A row that no longer parses still shows, with its kind's text.
	_ = json.Unmarshal([]byte(r.Params), &n.Params)
	return n
}

// AddNotification records n unless its dedup key is already there.
func (db *DB) AddNotification(ctx context.Context, n models.Notification) error {
	return addNotification(db.Gorm.WithContext(ctx), n)
}

// addNotification is AddNotification inside the caller's transaction: the
// change and the notice about it commit together, or neither.
func addNotification(tx *gorm.DB, n models.Notification) error {
	if n.UserID <= 0 || n.Kind == "" || n.DedupKey == "" {
		return models.NewError(models.EINVALID, models.M("err.invalid"))
	}
	params, err := json.Marshal(n.Params)
	if err != nil {
		return fmt.Errorf("store: notification params: %w", err)
	}
	if n.CreatedAt.IsZero() {
		n.CreatedAt = time.Now()
	}
	row := notificationRow{UserID: n.UserID, Kind: n.Kind, DedupKey: n.DedupKey, Link: n.Link, Params: string(params), CreatedAt: utc(n.CreatedAt)}
	err = tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "dedup_key"}}, DoNothing: true}).Create(&row).Error
	return mapErr(err, "notification")
}

// Notifications lists a user's most recent notices, newest first.
func (db *DB) Notifications(ctx context.Context, userID int64, limit int) ([]models.Notification, error) {
	if limit <= 0 || limit > models.NotificationPageSize {
		limit = models.NotificationPageSize
	}
	var rows []notificationRow
	err := db.Gorm.WithContext(ctx).Where("user_id = ?", userID).Order("created_at DESC, id DESC").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, mapErr(err, "notification")
	}
	out := make([]models.Notification, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
}

// UnreadNotifications counts a user's unread notices, for the bell.
func (db *DB) UnreadNotifications(ctx context.Context, userID int64) (int, error) {
	var n int64
	err := db.Gorm.WithContext(ctx).Model(&notificationRow{}).Where("user_id = ? AND read_at IS NULL", userID).Count(&n).Error
	return int(n), mapErr(err, "notification")
}

// NavState reads the navigation's figures in one round trip: a page view
// used to pay three queries for them.
func (db *DB) NavState(ctx context.Context, u *models.User, now time.Time) (models.NavState, error) {
	pending := db.Gorm.Table("priority_requests r").Select("count(*)").
		Where("r.status = ? AND r.starts_at > ?", models.RequestPending, utc(now))
	var row struct {
		Pending int64 `gorm:"column:pending"`
		Unread  int64 `gorm:"column:unread"`
		Leads   int64 `gorm:"column:leads"`
	}
	err := db.Gorm.WithContext(ctx).Raw(`SELECT (?) AS pending,
		(SELECT count(*) FROM notifications WHERE user_id = ? AND read_at IS NULL) AS unread,
		(SELECT count(*) FROM memberships WHERE user_id = ? AND role = ?) AS leads`,
		deciderScope(pending, u), u.ID, u.ID, models.RoleLead).Scan(&row).Error
	if err != nil {
		return models.NavState{}, fmt.Errorf("store: nav state: %w", err)
	}
	return models.NavState{PendingApprovals: int(row.Pending), UnreadNotices: int(row.Unread), LeadsATeam: row.Leads > 0}, nil
}

// MarkNotificationRead marks one of the user's notices read; another
// user's notice is not found, as if it did not exist.
func (db *DB) MarkNotificationRead(ctx context.Context, userID, id int64, now time.Time) error {
	q := db.Gorm.WithContext(ctx).Model(&notificationRow{}).Where("id = ? AND user_id = ?", id, userID)
	res := q.Where("read_at IS NULL").Update("read_at", utc(now))
	if res.Error != nil {
		return mapErr(res.Error, "notification")
	}
	if res.RowsAffected == 0 {
		var n int64
		if err := db.Gorm.WithContext(ctx).Model(&notificationRow{}).Where("id = ? AND user_id = ?", id, userID).Count(&n).Error; err != nil {
			return mapErr(err, "notification")
		}
		if n == 0 {
			return mapErr(gorm.ErrRecordNotFound, "notification")
		}
	}
	return nil
}

// MarkAllNotificationsRead marks every unread notice of the user read and
// says how many it marked.
func (db *DB) MarkAllNotificationsRead(ctx context.Context, userID int64, now time.Time) (int, error) {
	res := db.Gorm.WithContext(ctx).Model(&notificationRow{}).Where("user_id = ? AND read_at IS NULL", userID).Update("read_at", utc(now))
	return int(res.RowsAffected), mapErr(res.Error, "notification")
}
