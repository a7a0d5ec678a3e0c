package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gpubook/gpubook/models"
)

type bookingRow struct {
	ID         int64      `gorm:"column:id;primaryKey"`
	UserID     int64      `gorm:"column:user_id"`
	NodeID     int64      `gorm:"column:node_id"`
	StartsAt   time.Time  `gorm:"column:starts_at"`
	EndsAt     time.Time  `gorm:"column:ends_at"`
	Note       string     `gorm:"column:note"`
	Kind       string     `gorm:"column:kind"`
	Status     string     `gorm:"column:status"`
	ReleasedAt *time.Time `gorm:"column:released_at"`
	CreatedAt  time.Time  `gorm:"column:created_at"`
	UpdatedAt  time.Time  `gorm:"column:updated_at"`
	UserName   string     `gorm:"column:user_name;->"`
	UserEmail  string     `gorm:"column:user_email;->"`
	NodeName   string     `gorm:"column:node_name;->"`
}

func (bookingRow) TableName() string { return "bookings" }

func (r bookingRow) model() models.Booking {
	var rel *time.Time
	if r.ReleasedAt != nil {
		t := r.ReleasedAt.UTC()
		rel = &t
	}
	return models.Booking{ID: r.ID, UserID: r.UserID, NodeID: r.NodeID, StartsAt: r.StartsAt.UTC(), EndsAt: r.EndsAt.UTC(),
		Note: r.Note, Kind: r.Kind, Status: r.Status, ReleasedAt: rel, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		UserName: r.UserName, UserEmail: r.UserEmail, NodeName: r.NodeName}
}

type bookingGPURow struct {
	BookingID int64     `gorm:"column:booking_id;primaryKey"`
	GPUID     int64     `gorm:"column:gpu_id;primaryKey"`
	StartsAt  time.Time `gorm:"column:starts_at"`
	EndsAt    time.Time `gorm:"column:ends_at"`
	Blocking  bool      `gorm:"column:blocking"`
}

func (bookingGPURow) TableName() string { return "booking_gpus" }

// bookingScope applies f to a query over "bookings b".
func bookingScope(f models.BookingFilter) func(*gorm.DB) *gorm.DB {
	return func(q *gorm.DB) *gorm.DB {
		if !f.From.IsZero() {
			q = q.Where("b.ends_at > ?", utc(f.From))
		}
		if !f.To.IsZero() {
			q = q.Where("b.starts_at < ?", utc(f.To))
		}
		if f.UserID != 0 {
			q = q.Where("b.user_id = ?", f.UserID)
		}
		if f.TeamID != 0 {
			q = q.Where("b.user_id IN (SELECT user_id FROM memberships WHERE team_id = ?)", f.TeamID)
		}
		if f.NodeID != 0 {
			q = q.Where("b.node_id = ?", f.NodeID)
		}
		if f.NodeIDs != nil {
			q = WhereIDIn(q, "b.node_id", f.NodeIDs)
		}
		if f.GPUID != 0 {
			q = q.Where("b.id IN (SELECT booking_id FROM booking_gpus WHERE gpu_id = ?)", f.GPUID)
		}
		if !f.IncludeCancelled {
			q = q.Where("b.status = ?", models.StatusConfirmed)
		}
		return q
	}
}

// bookingQuery selects bookings b with their owner's name and email and
// their node's name, as bookingRow reads them.
func bookingQuery(tx *gorm.DB) *gorm.DB {
	return tx.Table("bookings b").Select("b.*, u.name AS user_name, u.email AS user_email, n.name AS node_name").
		Joins("JOIN users u ON u.id = b.user_id").Joins("JOIN nodes n ON n.id = b.node_id")
}

// Bookings returns the bookings that overlap f's range, by start: the first
// f.Limit, or all of them (models.ErrTooManyBookings above
// models.MaxBookingsRead). It runs two queries whatever the number of
// bookings: the bookings, then their GPUs.
func (db *DB) Bookings(ctx context.Context, f models.BookingFilter) ([]models.Booking, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = models.MaxBookingsRead + 1 // one more tells a range that holds too many
	}
	if f.NodeIDs != nil && len(f.NodeIDs) == 0 {
		return []models.Booking{}, nil
	}
	var rows []bookingRow
	err := bookingQuery(db.Gorm.WithContext(ctx)).Scopes(bookingScope(f)).Order("b.starts_at, b.id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: bookings: %w", err)
	}
	if f.Limit <= 0 && len(rows) > models.MaxBookingsRead {
		return nil, models.ErrTooManyBookings()
	}
	if len(rows) == 0 {
		return []models.Booking{}, nil
	}
	var links []bookingGPURow
	err = db.Gorm.WithContext(ctx).Table("booking_gpus bg").Select("bg.booking_id, bg.gpu_id").
		Joins("JOIN bookings b ON b.id = bg.booking_id").Scopes(bookingScope(f)).
		Order("bg.booking_id, bg.gpu_id").Find(&links).Error
	if err != nil {
		return nil, fmt.Errorf("store: booking gpus: %w", err)
	}
	gpus := map[int64][]int64{}
	for _, l := range links {
		gpus[l.BookingID] = append(gpus[l.BookingID], l.GPUID)
	}
	out := make([]models.Booking, len(rows))
	for i, r := range rows {
		out[i] = r.model()
		out[i].GPUIDs = gpus[r.ID]
	}
	return out, nil
}

// Booking returns the booking with id, with its GPUs.
func (db *DB) Booking(ctx context.Context, id int64) (*models.Booking, error) {
	return bookingByID(db.Gorm.WithContext(ctx), id, false)
}

// bookingByID reads the booking with id and its GPUs with their UUIDs. lock takes the
// booking's row lock on PostgreSQL in the same statement (FOR UPDATE OF b),
// so that two concurrent changes never both pass a rule on the same stale
// row; SQLite needs nothing, its transactions begin IMMEDIATE, one writer
// at a time.
func bookingByID(tx *gorm.DB, id int64, lock bool) (*models.Booking, error) {
	var r bookingRow
	q := bookingQuery(tx).Where("b.id = ?", id)
	if lock && tx.Dialector.Name() == Postgres {
		q = q.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate, Table: clause.Table{Name: "b"}})
	}
	if err := q.Take(&r).Error; err != nil {
		return nil, mapErr(err, "booking")
	}
	var gpus []struct {
		GPUID int64  `gorm:"column:gpu_id"`
		UUID  string `gorm:"column:uuid"`
	}
	err := tx.Table("booking_gpus bg").Select("bg.gpu_id, g.uuid").Joins("JOIN gpus g ON g.id = bg.gpu_id").
		Where("bg.booking_id = ?", id).Order("bg.gpu_id").Scan(&gpus).Error
	if err != nil {
		return nil, fmt.Errorf("store: booking gpus: %w", err)
	}
	b := r.model()
	for _, g := range gpus {
		b.GPUIDs = append(b.GPUIDs, g.GPUID)
		b.GPUUUIDs = append(b.GPUUUIDs, g.UUID)
	}
	return &b, nil
}

// conflicts lists the blocking bookings on gpuIDs that overlap [start, end),
// leaving out the booking "except" (for extending a booking).
func conflicts(tx *gorm.DB, gpuIDs []int64, start, end time.Time, except int64) ([]models.Conflict, error) {
	var rows []struct {
		GPUID     int64     `gorm:"column:gpu_id"`
		GPUIndex  int       `gorm:"column:gpu_index"`
		ParentID  *int64    `gorm:"column:parent_id"`
		ParentIdx *int      `gorm:"column:parent_idx"`
		Profile   string    `gorm:"column:mig_profile"`
		BookingID int64     `gorm:"column:booking_id"`
		UserName  string    `gorm:"column:user_name"`
		StartsAt  time.Time `gorm:"column:starts_at"`
		EndsAt    time.Time `gorm:"column:ends_at"`
	}
	err := tx.Table("booking_gpus bg").
		Select("bg.gpu_id AS gpu_id, g.idx AS gpu_index, g.parent_id AS parent_id, p.idx AS parent_idx, g.mig_profile AS mig_profile, bg.booking_id AS booking_id, u.name AS user_name, bg.starts_at AS starts_at, bg.ends_at AS ends_at").
		Joins("JOIN bookings b ON b.id = bg.booking_id").Joins("JOIN users u ON u.id = b.user_id").
		Joins("JOIN gpus g ON g.id = bg.gpu_id").Joins("LEFT JOIN gpus p ON p.id = g.parent_id").
		Where("bg.blocking AND bg.gpu_id IN ? AND bg.starts_at < ? AND bg.ends_at > ? AND bg.booking_id <> ?", gpuIDs, utc(end), utc(start), except).
		Order("bg.starts_at, bg.gpu_id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: conflicts: %w", err)
	}
	out := make([]models.Conflict, len(rows))
	for i, r := range rows {
		out[i] = models.Conflict{GPUID: r.GPUID, GPUIndex: r.GPUIndex, GPUName: unitName(r.GPUIndex, r.ParentID, r.ParentIdx, r.Profile),
			BookingID: r.BookingID, UserName: r.UserName,
			StartsAt: r.StartsAt.UTC(), EndsAt: r.EndsAt.UTC()}
	}
	return out, nil
}

func gpusByID(tx *gorm.DB, ids []int64) (map[int64]models.GPU, error) {
	var rows []gpuRow
	err := tx.Table("gpus g").Select("g.*, n.name AS node_name").Joins("JOIN nodes n ON n.id = g.node_id").
		Where("g.id IN ?", ids).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: gpus by id: %w", err)
	}
	m := make(map[int64]models.GPU, len(rows))
	for _, r := range rows {
		m[r.ID] = r.model()
	}
	return m, nil
}

// insertBooking inserts a booking of req's GPUs, whose rows the caller has
// locked (locks.go): its policy read, or an approval's lockGPUs.
func insertBooking(tx *gorm.DB, req models.NewBooking, nodeID int64, kind string, now time.Time) (int64, error) {
	row := bookingRow{UserID: req.UserID, NodeID: nodeID, StartsAt: utc(req.StartsAt), EndsAt: utc(req.EndsAt), Note: req.Note,
		Kind: kind, Status: models.StatusConfirmed, CreatedAt: utc(now), UpdatedAt: utc(now)}
	if err := tx.Omit("user_name", "user_email", "node_name").Create(&row).Error; err != nil {
		return 0, err
	}
	links := make([]bookingGPURow, len(req.GPUIDs))
	for i, g := range req.GPUIDs {
		links[i] = bookingGPURow{BookingID: row.ID, GPUID: g, StartsAt: row.StartsAt, EndsAt: row.EndsAt, Blocking: true}
	}
	if err := tx.Create(&links).Error; err != nil {
		return 0, err
	}
	return row.ID, restampBooking(tx, req.GPUIDs, req.StartsAt, req.EndsAt, now)
}
