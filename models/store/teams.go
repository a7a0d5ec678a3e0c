package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gpubook/gpubook/models"
)

type teamRow struct {
	ID        int64     `gorm:"column:id;primaryKey"`
	Name      string    `gorm:"column:name"`
	Weight    float64   `gorm:"column:share_weight;default:1"` // 0 takes the default: every writer of a team gets an equal share
	Whole     bool      `gorm:"column:whole_bookings"`
	CreatedAt time.Time `gorm:"column:created_at"`
}

func (teamRow) TableName() string { return "teams" }

func (r teamRow) model() *models.Team {
	return &models.Team{ID: r.ID, Name: r.Name, ShareWeight: r.Weight, WholeBookings: r.Whole, CreatedAt: r.CreatedAt.UTC()}
}

type membershipRow struct {
	TeamID    int64     `gorm:"column:team_id;primaryKey"`
	UserID    int64     `gorm:"column:user_id;primaryKey"`
	Role      string    `gorm:"column:role"`
	Source    string    `gorm:"column:source"`
	CreatedAt time.Time `gorm:"column:created_at"`
	TeamName  string    `gorm:"column:team_name;->"`
	UserName  string    `gorm:"column:user_name;->"`
	UserEmail string    `gorm:"column:user_email;->"`
}

func (membershipRow) TableName() string { return "memberships" }

func (r membershipRow) model() models.Membership {
	return models.Membership{TeamID: r.TeamID, UserID: r.UserID, Role: r.Role, Source: r.Source, CreatedAt: r.CreatedAt.UTC(),
		TeamName: r.TeamName, UserName: r.UserName, UserEmail: r.UserEmail}
}

// Team returns the team with id.
func (db *DB) Team(ctx context.Context, id int64) (*models.Team, error) {
	var r teamRow
	if err := db.Gorm.WithContext(ctx).Take(&r, "id = ?", id).Error; err != nil {
		return nil, mapErr(err, "team")
	}
	return r.model(), nil
}

// Teams returns every team, by name.
func (db *DB) Teams(ctx context.Context) ([]models.Team, error) {
	var rows []teamRow
	if err := db.Gorm.WithContext(ctx).Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: teams: %w", err)
	}
	out := make([]models.Team, len(rows))
	for i, r := range rows {
		out[i] = *r.model()
	}
	return out, nil
}

// CreateTeam validates and inserts t. A name that differs from an existing
// team's only in case is refused (models.ErrTeamNameTaken), with the
// existing spelling.
func (db *DB) CreateTeam(ctx context.Context, t *models.Team, by models.Actor) error {
	if err := t.Validate(); err != nil {
		return err
	}
	row := teamRow{Name: t.Name, Weight: models.DefaultTeamWeight, CreatedAt: utc(time.Now())}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		teams, err := teamNames(tx)
		if err != nil {
			return err
		}
		if same, ok := models.TeamNamed(teams, t.Name); ok {
			return models.ErrTeamNameTaken(same.Name)
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return audit(tx, by, models.AuditTeamCreate, "team", row.ID, map[string]any{"name": t.Name})
	})
	if err != nil {
		return mapErr(err, "team")
	}
	t.ID, t.CreatedAt, t.ShareWeight = row.ID, row.CreatedAt, row.Weight
	return nil
}

// teamNames reads every team's id and name, to compare names in Go
// (models.TeamNamed): SQLite's lower() folds ASCII only. Teams are few.
func teamNames(tx *gorm.DB) ([]models.Team, error) {
	var rows []teamRow
	if err := tx.Select("id, name").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]models.Team, len(rows))
	for i, r := range rows {
		out[i] = *r.model()
	}
	return out, nil
}

// SetTeamShareWeight sets team id's weight in the fair-share entitled
// shares; the audit log keeps who changed it, since it moves everyone's share.
func (db *DB) SetTeamShareWeight(ctx context.Context, id int64, w float64, by models.Actor) error {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Table("teams").Where("id = ?", id).Update("share_weight", w)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return models.NewError(models.ENOTFOUND, models.M("err.not_found", "What", "team"))
		}
		return audit(tx, by, models.AuditTeamShareWeight, "team", id, map[string]any{"share_weight": w})
	})
	if err != nil {
		return mapErr(err, "team share weight")
	}
	return nil
}

// SetTeamWholeBookings says whether the team's multi-GPU bookings are all
// or nothing when a priority request pre-empts them.
func (db *DB) SetTeamWholeBookings(ctx context.Context, id int64, on bool, by models.Actor) error {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Table("teams").Where("id = ?", id).Update("whole_bookings", on)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return models.NewError(models.ENOTFOUND, models.M("err.not_found", "What", "team"))
		}
		return audit(tx, by, models.AuditTeamWholeBookings, "team", id, map[string]any{"on": on})
	})
	if err != nil {
		return mapErr(err, "team whole bookings")
	}
	return nil
}

func (db *DB) memberships(ctx context.Context, where string, arg int64) ([]models.Membership, error) {
	return listMemberships(db.Gorm.WithContext(ctx), where, arg)
}

// listMemberships is memberships on g (a transaction, or the pool).
func listMemberships(g *gorm.DB, where string, arg int64) ([]models.Membership, error) {
	var rows []membershipRow
	err := g.Table("memberships m").
		Select("m.*, t.name AS team_name, u.name AS user_name, u.email AS user_email").
		Joins("JOIN teams t ON t.id = m.team_id").Joins("JOIN users u ON u.id = m.user_id").
		Where(where, arg).Order("t.name, CASE m.role WHEN 'lead' THEN 0 ELSE 1 END, u.name").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: memberships: %w", err)
	}
	out := make([]models.Membership, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
}

// Members returns a team's memberships, leads first.
func (db *DB) Members(ctx context.Context, teamID int64) ([]models.Membership, error) {
	return db.memberships(ctx, "m.team_id = ?", teamID)
}

// AllMemberships returns every membership, by team: one query for the admin
// pages that list all teams or all users.
func (db *DB) AllMemberships(ctx context.Context) ([]models.Membership, error) {
	return db.memberships(ctx, "1 = ?", 1)
}

// MembershipsOf returns the teams a user belongs to.
func (db *DB) MembershipsOf(ctx context.Context, userID int64) ([]models.Membership, error) {
	return db.memberships(ctx, "m.user_id = ?", userID)
}

// SetMembership adds a user to a team or changes their role there.
func (db *DB) SetMembership(ctx context.Context, m *models.Membership, by models.Actor) error {
	if err := m.Validate(); err != nil {
		return err
	}
	row := membershipRow{TeamID: m.TeamID, UserID: m.UserID, Role: m.Role, Source: m.Source, CreatedAt: utc(time.Now())}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := upsertMembership(tx, &row); err != nil {
			return err
		}
		return audit(tx, by, models.AuditMemberSet, "team", m.TeamID, map[string]any{"user_id": m.UserID, "role": m.Role, "source": m.Source})
	})
	return mapErr(err, "membership")
}

// RemoveMembership takes a user out of a team.
func (db *DB) RemoveMembership(ctx context.Context, teamID, userID int64, by models.Actor) error {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("team_id = ? AND user_id = ?", teamID, userID).Delete(&membershipRow{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		return audit(tx, by, models.AuditMemberRemove, "team", teamID, map[string]any{"user_id": userID})
	})
	return mapErr(err, "membership")
}

// upsertMembership inserts a membership or updates its role and source.
func upsertMembership(tx *gorm.DB, row *membershipRow) error {
	return tx.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "team_id"}, {Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"role", "source"}),
	}).Omit("team_name", "user_name", "user_email").Create(row).Error
}
