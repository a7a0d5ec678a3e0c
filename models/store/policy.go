package store

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

type policyLimitRow struct {
	Scope     string    `gorm:"column:scope;primaryKey"`
	ScopeID   int64     `gorm:"column:scope_id;primaryKey"`
	Rule      string    `gorm:"column:rule;primaryKey"`
	Period    string    `gorm:"column:period;primaryKey"`
	Value     int64     `gorm:"column:value"`
	UpdatedAt time.Time `gorm:"column:updated_at"`
}

func (policyLimitRow) TableName() string { return "policy_limits" }

type policySettingRow struct {
	Key       string    `gorm:"column:key;primaryKey"`
	Value     string    `gorm:"column:value"`
	UpdatedAt time.Time `gorm:"column:updated_at"`
}

func (policySettingRow) TableName() string { return "policy_settings" }

type modelTeamRow struct {
	Model  string `gorm:"column:model;primaryKey"`
	TeamID int64  `gorm:"column:team_id;primaryKey"`
}

func (modelTeamRow) TableName() string { return "policy_model_teams" }

// Keys of policy_settings.
const (
	settingPeak        = "peak_schedule"
	settingAdminExempt = "admin_exempt"
)

// PolicyLimits returns every limit an admin set, in display order.
func (db *DB) PolicyLimits(ctx context.Context) ([]models.PolicyLimit, error) {
	return limitsWhere(db.Gorm.WithContext(ctx), "1 = 1")
}

func limitsWhere(tx *gorm.DB, where string, args ...any) ([]models.PolicyLimit, error) {
	var rows []policyLimitRow
	if err := tx.Where(where, args...).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: policy limits: %w", err)
	}
	out := make([]models.PolicyLimit, len(rows))
	for i, r := range rows {
		out[i] = models.PolicyLimit{Scope: r.Scope, ScopeID: r.ScopeID, Rule: r.Rule, Period: r.Period, Value: r.Value, UpdatedAt: r.UpdatedAt.UTC()}
	}
	models.SortLimits(out)
	return out, nil
}

// PolicySettings returns the cluster-wide settings, defaults filling what
// no admin set.
func (db *DB) PolicySettings(ctx context.Context) (models.PolicySettings, error) {
	return policySettings(db.Gorm.WithContext(ctx))
}

func policySettings(tx *gorm.DB) (models.PolicySettings, error) {
	var rows []policySettingRow
	if err := tx.Find(&rows).Error; err != nil {
		return models.DefaultPolicySettings(), fmt.Errorf("store: policy settings: %w", err)
	}
	return settingsFrom(rows), nil
}

// settingsFrom reads the settings rows, defaults filling what no admin set.
func settingsFrom(rows []policySettingRow) models.PolicySettings {
	s := models.DefaultPolicySettings()
	for _, r := range rows {
		switch r.Key {
		case settingPeak:
			if p, ok := models.ParsePeakSchedule(r.Value); ok {
				s.Peak = p
			}
		case settingAdminExempt:
			s.AdminExempt = r.Value == "true"
		}
	}
	return s
}

// ModelTeams returns, per restricted GPU model, the teams that may book it.
func (db *DB) ModelTeams(ctx context.Context) (map[string][]int64, error) {
	return modelTeams(db.Gorm.WithContext(ctx))
}

func modelTeams(tx *gorm.DB) (map[string][]int64, error) {
	var rows []modelTeamRow
	if err := tx.Order("model, team_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: model teams: %w", err)
	}
	out := map[string][]int64{}
	for _, r := range rows {
		out[r.Model] = append(out[r.Model], r.TeamID)
	}
	return out, nil
}

// SaveScopeLimits replaces every limit of one scope (global, a team or a
// user) with limits, so that the admin form is the whole truth for it.
func (db *DB) SaveScopeLimits(ctx context.Context, scope string, scopeID int64, limits []models.PolicyLimit, now time.Time, by models.Actor) error {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		old, err := limitsWhere(tx, "scope = ? AND scope_id = ?", scope, scopeID)
		if err != nil {
			return err
		}
		if err := tx.Where("scope = ? AND scope_id = ?", scope, scopeID).Delete(&policyLimitRow{}).Error; err != nil {
			return fmt.Errorf("store: clear policy limits: %w", err)
		}
		for _, l := range limits {
			row := policyLimitRow{Scope: scope, ScopeID: scopeID, Rule: l.Rule, Period: l.Period, Value: l.Value, UpdatedAt: utc(now)}
			if err := tx.Create(&row).Error; err != nil {
				return fmt.Errorf("store: save policy limit: %w", err)
			}
		}
		return audit(tx, by, models.AuditPolicyLimits, "policy_"+scope, scopeID, map[string]any{
			"old": limitMap(old), "new": limitMap(limits)})
	})
	return mapErr(err, "policy")
}

func limitMap(ls []models.PolicyLimit) map[string]int64 {
	m := make(map[string]int64, len(ls))
	for _, l := range ls {
		m[models.Key(l.Rule, l.Period)] = l.Value
	}
	return m
}

// SavePolicySettings writes the peak schedule and the admin exemption.
func (db *DB) SavePolicySettings(ctx context.Context, s models.PolicySettings, now time.Time, by models.Actor) error {
	if err := s.Peak.Validate(); err != nil {
		return err
	}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for k, v := range map[string]string{settingPeak: s.Peak.String(), settingAdminExempt: strconv.FormatBool(s.AdminExempt)} {
			if err := tx.Where("key = ?", k).Delete(&policySettingRow{}).Error; err != nil {
				return fmt.Errorf("store: policy setting: %w", err)
			}
			if err := tx.Create(&policySettingRow{Key: k, Value: v, UpdatedAt: utc(now)}).Error; err != nil {
				return fmt.Errorf("store: policy setting: %w", err)
			}
		}
		return audit(tx, by, models.AuditPolicySettings, "policy", 0, map[string]any{
			"peak_schedule": s.Peak.String(), "admin_exempt": s.AdminExempt})
	})
	return mapErr(err, "policy")
}

// SetModelTeams says which teams may book a GPU model; no teams lifts the restriction.
func (db *DB) SetModelTeams(ctx context.Context, model string, teamIDs []int64, by models.Actor) error {
	model, err := models.CleanModel(model)
	if err != nil {
		return err
	}
	sort.Slice(teamIDs, func(i, j int) bool { return teamIDs[i] < teamIDs[j] })
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("model = ?", model).Delete(&modelTeamRow{}).Error; err != nil {
			return fmt.Errorf("store: clear model teams: %w", err)
		}
		for _, id := range teamIDs {
			if err := tx.Create(&modelTeamRow{Model: model, TeamID: id}).Error; err != nil {
				return fmt.Errorf("store: model team: %w", err)
			}
		}
		return audit(tx, by, models.AuditPolicyModels, "gpu_model", 0, map[string]any{"model": model, "team_ids": teamIDs})
	})
	return mapErr(err, "team")
}
