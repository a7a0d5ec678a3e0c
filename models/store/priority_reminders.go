package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// SendReminders queues a reminder for every booking whose start or end
// comes within models.ReminderLead, for owners who did not turn reminders
// off. The dedup key carries the time reminded of, so a run repeated
// within the window sends nothing twice, while an extended booking gets a
// reminder of its new end.
func (db *DB) SendReminders(ctx context.Context, now time.Time, mail models.Mailer) (int, error) {
	tx := db.Gorm.WithContext(ctx)
	due, owners, err := dueReminders(tx, now)
	if err != nil {
		return 0, err
	}
	sent := 0
	for i := range due {
		b := &due[i]
		kind := models.ReminderKind(b, now)
		if kind == "" {
			continue
		}
		at := b.StartsAt
		if kind == models.NoticeReminderEnd {
			at = b.EndsAt
		}
		owner, ok := owners[b.UserID]
		if !ok {
			return sent, mapErr(gorm.ErrRecordNotFound, "user")
		}
		n := models.Notice{Kind: kind, Booking: b, DedupKey: kind + ":booking:" + strconv.FormatInt(b.ID, 10) + ":" + strconv.FormatInt(at.Unix(), 10)}
		if err := notify(tx, mail, n, []*models.User{owner}, now); err != nil {
			return sent, err
		}
		sent++
	}
	return sent, nil
}

// dueReminders reads the bookings SendReminders may remind of, with their
// GPUs, and their owners: three queries, whatever the number of bookings.
func dueReminders(tx *gorm.DB, now time.Time) ([]models.Booking, map[int64]*models.User, error) {
	soon := utc(now.Add(models.ReminderLead))
	var rows []bookingRow
	err := bookingQuery(tx).Where("b.status = ? AND u.notify_reminders", models.StatusConfirmed).
		Where("(b.starts_at > ? AND b.starts_at <= ?) OR (b.ends_at > ? AND b.ends_at <= ? AND b.starts_at < ?)", utc(now), soon, utc(now), soon, utc(now)).
		Order("b.id").Find(&rows).Error
	if err != nil {
		return nil, nil, fmt.Errorf("store: due reminders: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil, nil
	}
	ids, userIDs := make([]int64, len(rows)), make([]int64, len(rows))
	for i, r := range rows {
		ids[i], userIDs[i] = r.ID, r.UserID
	}
	var links []bookingGPURow
	if err := tx.Model(&bookingGPURow{}).Where("booking_id IN ?", ids).Order("booking_id, gpu_id").Find(&links).Error; err != nil {
		return nil, nil, fmt.Errorf("store: due reminders gpus: %w", err)
	}
	gpus := map[int64][]int64{}
	for _, l := range links {
		gpus[l.BookingID] = append(gpus[l.BookingID], l.GPUID)
	}
	var users []userRow
	if err := tx.Where("id IN ?", userIDs).Find(&users).Error; err != nil {
		return nil, nil, fmt.Errorf("store: due reminders owners: %w", err)
	}
	owners := make(map[int64]*models.User, len(users))
	for _, u := range users {
		owners[u.ID] = u.model()
	}
	out := make([]models.Booking, len(rows))
	for i, r := range rows {
		out[i] = r.model()
		out[i].GPUIDs = gpus[r.ID]
	}
	return out, owners, nil
}

type watchRow struct {
	ID         int64      `gorm:"column:id;primaryKey"`
	UserID     int64      `gorm:"column:user_id"`
	GPUID      int64      `gorm:"column:gpu_id"`
	StartsAt   time.Time  `gorm:"column:starts_at"`
	EndsAt     time.Time  `gorm:"column:ends_at"`
	CreatedAt  time.Time  `gorm:"column:created_at"`
	NotifiedAt *time.Time `gorm:"column:notified_at"`
	GPUIndex   int        `gorm:"column:gpu_index;->"`
	NodeName   string     `gorm:"column:node_name;->"`
	ParentID   *int64     `gorm:"column:unit_parent_id;->"`
	ParentIdx  *int       `gorm:"column:unit_parent_idx;->"`
	Profile    string     `gorm:"column:unit_profile;->"`
}

func (watchRow) TableName() string { return "gpu_watches" }

func (r watchRow) model() models.Watch {
	return models.Watch{ID: r.ID, UserID: r.UserID, GPUID: r.GPUID, StartsAt: r.StartsAt.UTC(), EndsAt: r.EndsAt.UTC(),
		CreatedAt: r.CreatedAt.UTC(), NotifiedAt: r.NotifiedAt, GPUIndex: r.GPUIndex, NodeName: r.NodeName,
		GPUName: unitName(r.GPUIndex, r.ParentID, r.ParentIdx, r.Profile)}
}

func watchQuery(tx *gorm.DB) *gorm.DB {
	return tx.Table("gpu_watches w").Select("w.*, g.idx AS gpu_index, n.name AS node_name, " + unitSQL).
		Joins("JOIN gpus g ON g.id = w.gpu_id").Joins("JOIN nodes n ON n.id = g.node_id").
		Joins("LEFT JOIN gpus p ON p.id = g.parent_id")
}

// CreateWatch records that a user wants to hear when a GPU frees.
func (db *DB) CreateWatch(ctx context.Context, w *models.Watch, now time.Time, by models.Actor) error {
	w.StartsAt, w.EndsAt = utc(w.StartsAt), utc(w.EndsAt)
	if err := models.ValidateWatch(w, now); err != nil {
		return err
	}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		row := watchRow{UserID: w.UserID, GPUID: w.GPUID, StartsAt: w.StartsAt, EndsAt: w.EndsAt, CreatedAt: utc(now)}
		if err := tx.Omit("gpu_index", "node_name", "unit_parent_id", "unit_parent_idx", "unit_profile").Create(&row).Error; err != nil {
			return fmt.Errorf("store: create watch: %w", err)
		}
		w.ID = row.ID
		return audit(tx, by, models.AuditWatchCreate, "gpu", w.GPUID, map[string]any{"starts_at": w.StartsAt, "ends_at": w.EndsAt})
	})
	return mapErr(err, "gpu")
}

// Watches lists a user's watches that have not ended.
func (db *DB) Watches(ctx context.Context, userID int64, now time.Time) ([]models.Watch, error) {
	var rows []watchRow
	err := watchQuery(db.Gorm.WithContext(ctx)).Where("w.user_id = ? AND w.ends_at > ?", userID, utc(now)).Order("w.starts_at").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: watches: %w", err)
	}
	out := make([]models.Watch, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
}

// NotifyFreed tells each watcher whose GPU has no blocking booking left in
// the rest of the watched range, once: the notice and notified_at commit
// together.
func (db *DB) NotifyFreed(ctx context.Context, now time.Time, mail models.Mailer) (int, error) {
	var rows []watchRow
	err := watchQuery(db.Gorm.WithContext(ctx)).Where("w.notified_at IS NULL AND w.ends_at > ?", utc(now)).Order("w.id").Find(&rows).Error
	if err != nil {
		return 0, fmt.Errorf("store: open watches: %w", err)
	}
	n := 0
	for _, r := range rows {
		w := r.model()
		from := later(w.StartsAt, now)
		notified := false
		err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			cs, err := conflicts(tx, []int64{w.GPUID}, from, w.EndsAt, 0)
			if err != nil || len(cs) > 0 {
				return err
			}
			res := tx.Model(&watchRow{}).Where("id = ? AND notified_at IS NULL", w.ID).Update("notified_at", utc(now))
			if res.Error != nil || res.RowsAffected == 0 {
				return res.Error
			}
			owner, err := userInTx(tx, w.UserID)
			if err != nil {
				return err
			}
			notified = true
			return notify(tx, mail, models.Notice{Kind: models.NoticeFreed, Watch: &w, DedupKey: "gpu_freed:watch:" + strconv.FormatInt(w.ID, 10)}, []*models.User{owner}, now)
		})
		if err != nil {
			return n, mapErr(err, "watch")
		}
		if notified {
			n++ // counted once committed
		}
	}
	return n, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// NotifyReminders reports whether a user gets booking reminders.
func (db *DB) NotifyReminders(ctx context.Context, userID int64) (bool, error) {
	var on []bool
	if err := db.Gorm.WithContext(ctx).Table("users").Where("id = ?", userID).Pluck("notify_reminders", &on).Error; err != nil {
		return false, fmt.Errorf("store: reminders: %w", err)
	}
	if len(on) == 0 {
		return false, mapErr(gorm.ErrRecordNotFound, "user")
	}
	return on[0], nil
}

// SetNotifyReminders turns a user's booking reminders on or off.
func (db *DB) SetNotifyReminders(ctx context.Context, userID int64, on bool, by models.Actor) error {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Table("users").Where("id = ?", userID).Update("notify_reminders", on).Error; err != nil {
			return fmt.Errorf("store: set reminders: %w", err)
		}
		return audit(tx, by, models.AuditRemindersSet, "user", userID, map[string]any{"on": on})
	})
	return mapErr(err, "user")
}
