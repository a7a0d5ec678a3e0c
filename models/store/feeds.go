package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

type feedTokenRow struct {
	ID         int64      `gorm:"column:id;primaryKey"`
	UserID     int64      `gorm:"column:user_id"`
	TeamID     *int64     `gorm:"column:team_id"`
	Hash       string     `gorm:"column:token_hash"`
	CreatedAt  time.Time  `gorm:"column:created_at"`
	LastUsedAt *time.Time `gorm:"column:last_used_at"`
	RevokedAt  *time.Time `gorm:"column:revoked_at"`
	TeamName   *string    `gorm:"column:team_name;->"`
}

func (feedTokenRow) TableName() string { return "feed_tokens" }

func (r feedTokenRow) model() models.FeedToken {
	t := models.FeedToken{ID: r.ID, UserID: r.UserID, Hash: r.Hash, CreatedAt: r.CreatedAt.UTC(),
		LastUsedAt: utcPtr(r.LastUsedAt), RevokedAt: utcPtr(r.RevokedAt)}
	if r.TeamID != nil {
		t.TeamID = *r.TeamID
	}
	if r.TeamName != nil {
		t.TeamName = *r.TeamName
	}
	return t
}

// feedUseEvery is how often a fetch is noted in last_used_at: calendar
// apps poll every few minutes, and the profile only needs to show that the
// feed is read.
const feedUseEvery = 15 * time.Minute

// CreateFeedToken makes a new token for a feed and revokes the active one
// it replaces. The plain token is returned once and never stored.
func (db *DB) CreateFeedToken(ctx context.Context, userID, teamID int64, now time.Time, by models.Actor) (*models.FeedToken, string, error) {
	plain, hash, err := models.NewFeedSecret()
	if err != nil {
		return nil, "", err
	}
	row := feedTokenRow{UserID: userID, Hash: hash, CreatedAt: utc(now)}
	if teamID != 0 {
		row.TeamID = &teamID
	}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		old := tx.Model(&feedTokenRow{}).Where("user_id = ? AND revoked_at IS NULL", userID)
		if teamID == 0 {
			old = old.Where("team_id IS NULL")
		} else {
			old = old.Where("team_id = ?", teamID)
		}
		if err := old.Update("revoked_at", utc(now)).Error; err != nil {
			return err
		}
		if err := tx.Omit("team_name").Create(&row).Error; err != nil {
			return err
		}
		return audit(tx, by, models.AuditFeedCreate, "feed", row.ID, map[string]any{"user_id": userID, "team_id": teamID})
	})
	if err != nil {
		return nil, "", mapErr(err, "feed")
	}
	t := row.model()
	return &t, plain, nil
}

// FeedTokens lists a user's active feed tokens with their teams' names:
// the own feed first, then by team name.
func (db *DB) FeedTokens(ctx context.Context, userID int64) ([]models.FeedToken, error) {
	var rows []feedTokenRow
	err := db.Gorm.WithContext(ctx).Table("feed_tokens f").Select("f.*, t.name AS team_name").
		Joins("LEFT JOIN teams t ON t.id = f.team_id").Where("f.user_id = ? AND f.revoked_at IS NULL", userID).
		Order("CASE WHEN f.team_id IS NULL THEN 0 ELSE 1 END, t.name, f.id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: feed tokens: %w", err)
	}
	out := make([]models.FeedToken, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
}

// RevokeFeedToken ends one of userID's active feed tokens; another user's
// token, or one already revoked, is ENOTFOUND.
func (db *DB) RevokeFeedToken(ctx context.Context, userID, id int64, now time.Time, by models.Actor) error {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&feedTokenRow{}).Where("id = ? AND user_id = ? AND revoked_at IS NULL", id, userID).Update("revoked_at", utc(now))
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		return audit(tx, by, models.AuditFeedRevoke, "feed", id, nil)
	})
	return mapErr(err, "feed")
}

// FeedOwner returns the active token plain stands for and its owner, in
// one query, and notes the fetch at most every feedUseEvery.
func (db *DB) FeedOwner(ctx context.Context, plain string, now time.Time) (*models.FeedToken, *models.User, error) {
	var r struct {
		User     userRow    `gorm:"embedded"`
		FeedID   int64      `gorm:"column:feed_id"`
		FeedTeam *int64     `gorm:"column:feed_team_id"`
		FeedMade time.Time  `gorm:"column:feed_created_at"`
		FeedUsed *time.Time `gorm:"column:feed_last_used_at"`
		TeamName *string    `gorm:"column:team_name"`
	}
	hash := models.HashToken(plain)
	err := db.Gorm.WithContext(ctx).Table("feed_tokens f").
		Select("u.*, f.id AS feed_id, f.team_id AS feed_team_id, f.created_at AS feed_created_at, f.last_used_at AS feed_last_used_at, t.name AS team_name").
		Joins("JOIN users u ON u.id = f.user_id").Joins("LEFT JOIN teams t ON t.id = f.team_id").
		Where("f.token_hash = ? AND f.revoked_at IS NULL AND u.disabled_at IS NULL", hash).Take(&r).Error
	if err != nil {
		return nil, nil, mapErr(err, "feed")
	}
	tok := feedTokenRow{ID: r.FeedID, UserID: r.User.ID, TeamID: r.FeedTeam, Hash: hash, CreatedAt: r.FeedMade,
		LastUsedAt: r.FeedUsed, TeamName: r.TeamName}.model()
	if tok.LastUsedAt == nil || now.Sub(*tok.LastUsedAt) >= feedUseEvery {
		if err := db.Gorm.WithContext(ctx).Model(&feedTokenRow{}).Where("id = ?", tok.ID).Update("last_used_at", utc(now)).Error; err != nil {
			return nil, nil, fmt.Errorf("store: feed last used: %w", err)
		}
		tok.LastUsedAt = utcPtr(&now)
	}
	return &tok, r.User.model(), nil
}

// sequenceActions are the audit actions that change a booking's time or
// status: each one bumps the event's SEQUENCE.
var sequenceActions = []string{models.AuditBookingCancel, models.AuditBookingRelease, models.AuditBookingExtend,
	models.AuditBookingPreempt, models.AuditBookingService}

// FeedEvents reads a feed's bookings (cancelled ones too) with their
// change counts: two queries for the bookings, one per 500 for the counts.
func (db *DB) FeedEvents(ctx context.Context, f models.FeedFilter) ([]models.FeedEvent, error) {
	bs, err := db.Bookings(ctx, models.BookingFilter{From: f.From, UserID: f.UserID, TeamID: f.TeamID, IncludeCancelled: true})
	if err != nil {
		return nil, err
	}
	seq := make(map[string]int, len(bs))
	for lo := 0; lo < len(bs); lo += 500 {
		ids := make([]string, 0, 500)
		for _, b := range bs[lo:min(lo+500, len(bs))] {
			ids = append(ids, strconv.FormatInt(b.ID, 10))
		}
		var counts []struct {
			TargetID string `gorm:"column:target_id"`
			N        int    `gorm:"column:n"`
		}
		err := db.Gorm.WithContext(ctx).Table("audit_events").Select("target_id, COUNT(*) AS n").
			Where("target_type = ? AND target_id IN ? AND action IN ?", "booking", ids, sequenceActions).
			Group("target_id").Find(&counts).Error
		if err != nil {
			return nil, fmt.Errorf("store: feed sequences: %w", err)
		}
		for _, c := range counts {
			seq[c.TargetID] = c.N
		}
	}
	out := make([]models.FeedEvent, len(bs))
	for i, b := range bs {
		out[i] = models.FeedEvent{Booking: b, Sequence: seq[strconv.FormatInt(b.ID, 10)]}
	}
	return out, nil
}
