package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

type userRow struct {
	ID       int64          `gorm:"column:id;primaryKey"`
	Subject  sql.NullString `gorm:"column:oidc_subject"`
	Email    string         `gorm:"column:email"`
	Name     string         `gorm:"column:name"`
	Language string         `gorm:"column:language"`
	TimeZone string         `gorm:"column:time_zone"`
	IsAdmin  bool           `gorm:"column:is_admin"`
	// AdminSource is "manual" or "idp": an IdP only revokes what it granted.
	AdminSource string `gorm:"column:admin_source"`
	// Unix and UnixSource are written only by setUnixLogin, beside unix_names.
	Unix       sql.NullString `gorm:"column:unix_name"`
	UnixSource string         `gorm:"column:unix_source"`
	CreatedAt  time.Time      `gorm:"column:created_at"`
	UpdatedAt  time.Time      `gorm:"column:updated_at"`
	DisabledAt *time.Time     `gorm:"column:disabled_at"`
}

func (userRow) TableName() string { return "users" }

func (r userRow) model() *models.User {
	return &models.User{ID: r.ID, Subject: r.Subject.String, Email: r.Email, Name: r.Name, Language: r.Language,
		TimeZone: r.TimeZone, IsAdmin: r.IsAdmin, Unix: r.Unix.String, UnixSource: r.UnixSource, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), DisabledAt: utcPtr(r.DisabledAt)}
}

func newUserRow(u *models.User) userRow {
	return userRow{ID: u.ID, Subject: sql.NullString{String: u.Subject, Valid: u.Subject != ""}, Email: u.Email,
		Name: u.Name, Language: u.Language, TimeZone: u.TimeZone, IsAdmin: u.IsAdmin, AdminSource: adminSource(u.IsAdmin),
		CreatedAt: utc(u.CreatedAt), UpdatedAt: utc(u.UpdatedAt)}
}

// User returns the user with id.
func (db *DB) User(ctx context.Context, id int64) (*models.User, error) {
	var r userRow
	if err := db.Gorm.WithContext(ctx).Take(&r, "id = ?", id).Error; err != nil {
		return nil, mapErr(err, "user")
	}
	return r.model(), nil
}

// UserByEmail returns the user with the (normalised) email address.
func (db *DB) UserByEmail(ctx context.Context, email string) (*models.User, error) {
	var r userRow
	if err := db.Gorm.WithContext(ctx).Take(&r, "email = ?", models.NormalizeEmail(email)).Error; err != nil {
		return nil, mapErr(err, "user")
	}
	return r.model(), nil
}

// Users returns every user, by name.
func (db *DB) Users(ctx context.Context) ([]models.User, error) {
	return listUsers(db.Gorm.WithContext(ctx))
}

// listUsers is Users on g (a transaction, or the pool).
func listUsers(g *gorm.DB) ([]models.User, error) {
	var rows []userRow
	if err := g.Order("name, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: users: %w", err)
	}
	out := make([]models.User, len(rows))
	for i, r := range rows {
		out[i] = *r.model()
	}
	return out, nil
}

// CountUsers returns how many users exist.
func (db *DB) CountUsers(ctx context.Context) (int64, error) {
	var n int64
	if err := db.Gorm.WithContext(ctx).Model(&userRow{}).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("store: count users: %w", err)
	}
	return n, nil
}

// CreateUser validates and inserts u, setting its ID and times.
func (db *DB) CreateUser(ctx context.Context, u *models.User, by models.Actor) error {
	if err := u.Validate(); err != nil {
		return err
	}
	now := utc(time.Now())
	u.CreatedAt, u.UpdatedAt = now, now
	row := newUserRow(u)
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return audit(tx, by, models.AuditUserCreate, "user", row.ID, map[string]any{"email": u.Email, "admin": u.IsAdmin})
	})
	if err != nil {
		return mapErr(err, "user")
	}
	u.ID = row.ID
	return nil
}

// UpdateUser validates and saves u's profile fields (not its admin flag).
func (db *DB) UpdateUser(ctx context.Context, u *models.User, by models.Actor) error {
	if err := u.Validate(); err != nil {
		return err
	}
	u.UpdatedAt = utc(time.Now())
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		old, err := userInTx(tx, u.ID)
		if err != nil {
			return err
		}
		res := tx.Model(&userRow{}).Where("id = ?", u.ID).Updates(map[string]any{
			"oidc_subject": sql.NullString{String: u.Subject, Valid: u.Subject != ""},
			"email":        u.Email, "name": u.Name, "language": u.Language, "time_zone": u.TimeZone,
			"updated_at": u.UpdatedAt,
		})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		return audit(tx, by, models.AuditUserUpdate, "user", u.ID, map[string]any{"email": u.Email, "name": u.Name, "changed": changedFields(old, u)})
	})
	return mapErr(err, "user")
}

// SetAdmin grants or removes the admin role.
func (db *DB) SetAdmin(ctx context.Context, userID int64, admin bool, by models.Actor) error {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&userRow{}).Where("id = ?", userID).Updates(map[string]any{"is_admin": admin, "admin_source": adminSource(admin), "updated_at": utc(time.Now())})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		return audit(tx, by, models.AuditUserAdmin, "user", userID, map[string]any{"admin": admin})
	})
	return mapErr(err, "user")
}

// adminSource marks an admin role granted by hand (CLI, admin pages).
func adminSource(admin bool) string {
	if admin {
		return "manual"
	}
	return ""
}

// changedFields names what an update changed, so that the audit log says
// "changed the time zone" for a zone click, not "the name or email".
func changedFields(old, u *models.User) []string {
	out := []string{}
	for _, f := range []struct {
		name string
		same bool
	}{{"email", old.Email == u.Email}, {"name", old.Name == u.Name}, {"language", old.Language == u.Language},
		{"time_zone", old.TimeZone == u.TimeZone}, {"sso_subject", old.Subject == u.Subject}} {
		if !f.same {
			out = append(out, f.name)
		}
	}
	return out
}
