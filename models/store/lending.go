package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

type loanRow struct {
	ID         int64     `gorm:"column:id;primaryKey"`
	WeekStart  time.Time `gorm:"column:week_start"`
	FromUser   *int64    `gorm:"column:from_user"`
	ToUser     *int64    `gorm:"column:to_user"`
	TeamID     *int64    `gorm:"column:team_id"`
	GPUMinutes int64     `gorm:"column:gpu_minutes"`
	Note       string    `gorm:"column:note"`
	CreatedAt  time.Time `gorm:"column:created_at"`
	FromName   string    `gorm:"column:from_name;->"`
	ToName     string    `gorm:"column:to_name;->"`
	TeamName   string    `gorm:"column:team_name;->"`
}

func (loanRow) TableName() string { return "quota_loans" }

func (r loanRow) model() models.QuotaLoan {
	return models.QuotaLoan{ID: r.ID, WeekStart: r.WeekStart.UTC(), FromUser: r.FromUser, ToUser: r.ToUser, TeamID: r.TeamID,
		GPUMinutes: r.GPUMinutes, Note: r.Note, CreatedAt: r.CreatedAt.UTC(), FromName: r.FromName, ToName: r.ToName, TeamName: r.TeamName}
}

func loanQuery(tx *gorm.DB) *gorm.DB {
	return tx.Table("quota_loans l").Select("l.*, fu.name AS from_name, tu.name AS to_name, t.name AS team_name").
		Joins("LEFT JOIN users fu ON fu.id = l.from_user").Joins("LEFT JOIN users tu ON tu.id = l.to_user").
		Joins("LEFT JOIN teams t ON t.id = l.team_id")
}

// loansRead reads the loans of the weeks starting in [?1, ?2) that concern
// user ?3 (given twice) or a pool.
var loansRead = newRawSQL(`SELECT l.id, l.week_start, l.from_user, l.to_user, l.team_id, l.gpu_minutes, l.note, l.created_at,
	COALESCE(fu.name, ''), COALESCE(tu.name, ''), COALESCE(t.name, '')
	FROM quota_loans l LEFT JOIN users fu ON fu.id = l.from_user LEFT JOIN users tu ON tu.id = l.to_user
	LEFT JOIN teams t ON t.id = l.team_id
	WHERE l.week_start >= ? AND l.week_start < ? AND (l.from_user = ? OR l.to_user = ? OR l.team_id IS NOT NULL) ORDER BY l.id`)

// loansBetween returns the ledger lines of the weeks starting in [from, to)
// that concern userID or a pool (pools need every line of their team):
// loansRead, without GORM (raw_sql.go), as it runs in every booking that a
// quota judges.
func loansBetween(tx *gorm.DB, from, to time.Time, userID int64) ([]models.QuotaLoan, error) {
	out, err := queryAll(rawTx(tx), loansRead, scanLoan, utc(from), utc(to), userID, userID)
	if err != nil {
		return nil, fmt.Errorf("store: loans: %w", err)
	}
	return out, nil
}

// scanLoan scans a row of loansRead.
func scanLoan(rows *sql.Rows) (models.QuotaLoan, error) {
	var r loanRow
	err := rows.Scan(&r.ID, &r.WeekStart, &r.FromUser, &r.ToUser, &r.TeamID, &r.GPUMinutes, &r.Note, &r.CreatedAt,
		&r.FromName, &r.ToName, &r.TeamName)
	return r.model(), err
}

// Loans returns the ledger of one week for a user and their teams' pools.
func (db *DB) Loans(ctx context.Context, userID int64, teamIDs []int64, weekStart time.Time) ([]models.QuotaLoan, error) {
	var rows []loanRow
	err := loanQuery(db.Gorm.WithContext(ctx)).Where("l.week_start = ? AND (l.from_user = ? OR l.to_user = ? OR l.team_id IN ?)",
		utc(weekStart), userID, userID, append(teamIDs, 0)).Order("l.id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: loans: %w", err)
	}
	out := make([]models.QuotaLoan, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
}

// CreateLoan writes a ledger line for the current quota week after
// checking, in the same transaction, that the lender has the hours left
// and a pool holds what is drawn.
func (db *DB) CreateLoan(ctx context.Context, l *models.QuotaLoan, lim models.BookingLimits, now time.Time, by models.Actor) error {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockUser(tx, by.UserID); err != nil {
			return err
		}
		actor := by.UserID
		in, err := policyInput(tx, actor, now, now, lim)
		if err != nil {
			return err
		}
		ws := models.WeekStart(now, in.Location)
		l.WeekStart = ws
		check := models.LoanCheck{LenderLeft: -1}
		if v, ok := in.Effective(models.RuleMaxGPUHours, models.PeriodAll); ok {
			check.LenderLeft = v.Value + models.LoanBalance(in.Loans, actor, ws) - models.UsedGPUMinutes(in.Held, ws, models.NextWeek(ws))
		}
		if l.TeamID != nil {
			check.PoolLeft = models.PoolBalance(in.Loans, *l.TeamID, ws)
			check.SameTeam = slices.Contains(in.TeamIDs, *l.TeamID)
		}
		if err := models.ValidateLoan(l, check); err != nil {
			return err
		}
		row := loanRow{WeekStart: utc(ws), FromUser: l.FromUser, ToUser: l.ToUser, TeamID: l.TeamID, GPUMinutes: l.GPUMinutes, Note: l.Note, CreatedAt: utc(now)}
		if err := tx.Omit("from_name", "to_name", "team_name").Create(&row).Error; err != nil {
			return fmt.Errorf("store: create loan: %w", err)
		}
		l.ID = row.ID
		return audit(tx, by, models.AuditLoanCreate, "loan", row.ID, map[string]any{"from_user": l.FromUser, "to_user": l.ToUser,
			"team_id": l.TeamID, "gpu_minutes": l.GPUMinutes, "week_start": ws})
	})
	return mapErr(err, "loan")
}
