package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

type tokenRow struct {
	ID         int64      `gorm:"column:id;primaryKey"`
	UserID     int64      `gorm:"column:user_id"`
	Name       string     `gorm:"column:name"`
	Hash       string     `gorm:"column:token_hash"`
	CreatedAt  time.Time  `gorm:"column:created_at"`
	LastUsedAt *time.Time `gorm:"column:last_used_at"`
	RevokedAt  *time.Time `gorm:"column:revoked_at"`
	UserEmail  string     `gorm:"column:user_email;->"`
}

func (tokenRow) TableName() string { return "api_tokens" }

func (r tokenRow) model() models.APIToken {
	return models.APIToken{ID: r.ID, UserID: r.UserID, Name: r.Name, Hash: r.Hash, CreatedAt: r.CreatedAt.UTC(),
		LastUsedAt: utcPtr(r.LastUsedAt), RevokedAt: utcPtr(r.RevokedAt), UserEmail: r.UserEmail}
}

// CreateToken makes a new personal token for userID. The plain token is
// returned once and never stored.
func (db *DB) CreateToken(ctx context.Context, userID int64, name string, now time.Time, by models.Actor) (*models.APIToken, string, error) {
	name, err := models.ValidateTokenName(name)
	if err != nil {
		return nil, "", err
	}
	plain, hash, err := models.NewTokenSecret()
	if err != nil {
		return nil, "", err
	}
	row := tokenRow{UserID: userID, Name: name, Hash: hash, CreatedAt: utc(now)}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Omit("user_email").Create(&row).Error; err != nil {
			return err
		}
		return audit(tx, by, models.AuditTokenCreate, "token", row.ID, map[string]any{"user_id": userID, "name": name})
	})
	if err != nil {
		return nil, "", mapErr(err, "token")
	}
	t := row.model()
	return &t, plain, nil
}

// Tokens lists a user's tokens (all users' for userID 0), newest first.
func (db *DB) Tokens(ctx context.Context, userID int64) ([]models.APIToken, error) {
	q := db.Gorm.WithContext(ctx).Table("api_tokens t").Select("t.*, u.email AS user_email").Joins("JOIN users u ON u.id = t.user_id")
	if userID != 0 {
		q = q.Where("t.user_id = ?", userID)
	}
	var rows []tokenRow
	if err := q.Order("t.created_at DESC, t.id DESC").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: tokens: %w", err)
	}
	out := make([]models.APIToken, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
}

// RevokeToken ends a token's validity; revoking twice is an ENOTFOUND.
func (db *DB) RevokeToken(ctx context.Context, id int64, now time.Time, by models.Actor) error {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&tokenRow{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", utc(now))
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		return audit(tx, by, models.AuditTokenRevoke, "token", id, nil)
	})
	return mapErr(err, "token")
}

// TokenUserSQL reads a valid token's user and the token's last use in one
// statement, every API call: a revoked token fails at once, in every
// process. Exported for the load scripts' SQL floor, which runs the same.
const TokenUserSQL = `SELECT u.id, u.oidc_subject, u.email, u.name, u.language, u.time_zone, u.is_admin,
	u.unix_name, u.unix_source, u.created_at, u.updated_at, t.id, t.last_used_at
	FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = ? AND t.revoked_at IS NULL AND u.disabled_at IS NULL LIMIT 1`

var tokenUserSQL = newRawSQL(TokenUserSQL)

var tokenUsedSQL = newRawSQL(`UPDATE api_tokens SET last_used_at = ? WHERE id = ?`)

// UserByToken returns the user a valid token belongs to and notes its use
// (at most once a minute, so that API calls do not all write). The token
// and its user come in one query, run without GORM (raw_sql.go).
func (db *DB) UserByToken(ctx context.Context, plain string, now time.Time) (*models.User, error) {
	ctx, err := uncancelled(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: user by token: %w", err)
	}
	var (
		u        userRow
		tokenID  int64
		lastUsed sql.NullTime
		conn     = db.raw(ctx)
	)
	err = conn.queryRow(tokenUserSQL, models.HashToken(plain)).Scan(&u.ID, &u.Subject, &u.Email, &u.Name, &u.Language,
		&u.TimeZone, &u.IsAdmin, &u.Unix, &u.UnixSource, &u.CreatedAt, &u.UpdatedAt, &tokenID, &lastUsed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &models.Error{Code: models.EUNAUTHORIZED, Msg: models.M("err.token_invalid"), Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("store: user by token: %w", err)
	}
	if !lastUsed.Valid || now.Sub(lastUsed.Time) > time.Minute {
		if _, err := conn.exec(tokenUsedSQL, utc(now), tokenID); err != nil {
			return nil, fmt.Errorf("store: token last used: %w", err)
		}
	}
	return u.model(), nil
}
