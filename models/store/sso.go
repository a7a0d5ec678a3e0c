package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

type groupMappingRow struct {
	ID        int64     `gorm:"column:id;primaryKey"`
	Group     string    `gorm:"column:group_name"`
	TeamID    int64     `gorm:"column:team_id"`
	Role      string    `gorm:"column:role"`
	CreatedAt time.Time `gorm:"column:created_at"`
	TeamName  string    `gorm:"column:team_name;->"`
}

func (groupMappingRow) TableName() string { return "group_mappings" }

// GroupMappings lists the admin-defined group → team mappings, by group.
func (db *DB) GroupMappings(ctx context.Context) ([]models.GroupMapping, error) {
	var rows []groupMappingRow
	err := db.Gorm.WithContext(ctx).Table("group_mappings g").Select("g.*, t.name AS team_name").
		Joins("JOIN teams t ON t.id = g.team_id").Order("g.group_name").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: group mappings: %w", err)
	}
	out := make([]models.GroupMapping, len(rows))
	for i, r := range rows {
		out[i] = models.GroupMapping{ID: r.ID, Group: r.Group, TeamID: r.TeamID, Role: r.Role, TeamName: r.TeamName}
	}
	return out, nil
}

// CreateGroupMapping maps an IdP group to a team and role.
func (db *DB) CreateGroupMapping(ctx context.Context, g *models.GroupMapping, by models.Actor) error {
	if err := g.Validate(); err != nil {
		return err
	}
	row := groupMappingRow{Group: g.Group, TeamID: g.TeamID, Role: g.Role, CreatedAt: utc(time.Now())}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Omit("team_name").Create(&row).Error; err != nil {
			return err
		}
		return audit(tx, by, models.AuditGroupMapping, "team", g.TeamID, map[string]any{"group": g.Group, "role": g.Role})
	})
	if err != nil {
		return mapErr(err, "group mapping")
	}
	g.ID = row.ID
	return nil
}

// DeleteGroupMapping removes a mapping; memberships it made go at each member's next sign-in.
func (db *DB) DeleteGroupMapping(ctx context.Context, id int64, by models.Actor) error {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Delete(&groupMappingRow{}, "id = ?", id)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		return audit(tx, by, models.AuditGroupMappingRemove, "group_mapping", id, nil)
	})
	return mapErr(err, "group mapping")
}

// SignInSSO creates or updates the user an ID token describes and brings
// their teams and admin role in line with their groups, in one transaction.
func (db *DB) SignInSSO(ctx context.Context, id models.SSOIdentity, rules models.GroupRules, now time.Time, ip string) (*models.User, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	var userID int64
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		u, err := upsertSSOUser(tx, id, rules.LinkUnverified, now, ip)
		if err != nil {
			return err
		}
		if u.DisabledAt != nil { // rolls back whatever the upsert changed
			return models.NewError(models.EFORBIDDEN, models.M("err.account_disabled"))
		}
		userID = u.ID
		by := models.Actor{UserID: u.ID, Label: "sso:" + u.Email, IP: ip}
		if err := syncSSOUnix(tx, u.ID, id.Unix, by); err != nil {
			return err
		}
		if err := syncSSOAdmin(tx, u, rules, id.Groups, by); err != nil {
			return err
		}
		return syncSSOTeams(tx, u.ID, rules, id.Groups, now, by)
	})
	if err != nil {
		return nil, mapErr(err, "user")
	}
	return db.User(ctx, userID)
}

// upsertSSOUser finds the account of id's subject; for a subject it has not
// seen, the account with id's email if models.CanLinkSSO allows it, else a
// new account. The lookup by email takes every account, linked or not, so
// that a second subject with a known email ends on a page that says so.
func upsertSSOUser(tx *gorm.DB, id models.SSOIdentity, policy models.SSOLinkPolicy, now time.Time, ip string) (*userRow, error) {
	groups, _ := json.Marshal(id.Groups)
	var u userRow
	err := tx.Where("oidc_subject = ?", id.Subject).Take(&u).Error
	if err == gorm.ErrRecordNotFound {
		if err = tx.Where("email = ?", id.Email).Take(&u).Error; err == nil {
			if err := models.CanLinkSSO(u.model(), id, policy); err != nil {
				return nil, err
			}
			if err := audit(tx, models.Actor{UserID: u.ID, Label: "sso:" + id.Email, IP: ip}, models.AuditUserSSOLink, "user", u.ID,
				map[string]any{"email": id.Email, "email_verified": id.EmailVerified}); err != nil {
				return nil, err
			}
		}
	}
	switch {
	case err == gorm.ErrRecordNotFound:
		u = newUserRow(&models.User{Subject: id.Subject, Email: id.Email, Name: id.Name, CreatedAt: now, UpdatedAt: now})
		if err := tx.Create(&u).Error; err != nil {
			return nil, ssoEmailErr(err)
		}
		if err := audit(tx, models.Actor{UserID: u.ID, Label: "sso:" + id.Email, IP: ip}, models.AuditUserCreate, "user", u.ID, map[string]any{"email": id.Email, "source": "sso"}); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	}
	err = tx.Model(&userRow{}).Where("id = ?", u.ID).Updates(map[string]any{"oidc_subject": id.Subject, "email": id.Email, "name": id.Name,
		"idp_groups": string(groups), "last_sign_in_at": utc(now), "updated_at": utc(now)}).Error
	if err != nil {
		return nil, ssoEmailErr(err)
	}
	return &u, nil
}

// syncSSOUnix makes the IdP's login claim the user's primary Unix login at
// each sign-in, keeping the extra names an admin gave them (even one the
// name rule now refuses: it is the admin's to replace, not a reason to lock
// the person out). A login that belongs to another user, set or assumed,
// refuses the sign-in (ErrUnixNameTaken, ErrUnixNameAssumed): letting it
// through would open that person's bookings to this one and take them
// from the person.
func syncSSOUnix(tx *gorm.DB, userID int64, login string, by models.Actor) error {
	if login == "" {
		return nil
	}
	var extra []unixNameRow
	if err := tx.Where("user_id = ? AND NOT is_primary", userID).Order("name").Find(&extra).Error; err != nil {
		return err
	}
	x := models.UnixIdentity{Name: login, Source: models.UnixSourceSSO}
	for _, r := range extra {
		x.Extra = append(x.Extra, r.Name)
	}
	if err := x.ValidateKeeping(x.Extra); err != nil {
		return err
	}
	return setUnixLogin(tx, userID, x, by)
}

// ssoEmailErr explains the one conflict a sign-in can hit: another account
// already uses the email address the IdP reports.
func ssoEmailErr(err error) error {
	if models.ErrorCode(mapErr(err, "user")) == models.ECONFLICT {
		return &models.Error{Code: models.ECONFLICT, Msg: models.M("err.sso_email_taken"), Err: err}
	}
	return err
}

func syncSSOAdmin(tx *gorm.DB, u *userRow, rules models.GroupRules, groups []string, by models.Actor) error {
	if len(rules.AdminGroups) == 0 {
		return nil
	}
	want := rules.IsAdmin(groups)
	var set map[string]any
	switch {
	case want && !u.IsAdmin:
		set = map[string]any{"is_admin": true, "admin_source": "idp"}
	case !want && u.IsAdmin && u.AdminSource == "idp":
		set = map[string]any{"is_admin": false, "admin_source": ""}
	default:
		return nil
	}
	if err := tx.Model(&userRow{}).Where("id = ?", u.ID).Updates(set).Error; err != nil {
		return err
	}
	return audit(tx, by, models.AuditUserAdmin, "user", u.ID, map[string]any{"admin": want, "source": "idp"})
}

// syncSSOTeams brings the user's IdP memberships in line with groups. A
// group names a team whatever its case (models.TeamNamed): gpu-team-vision
// joins an existing "Vision" rather than making "vision" beside it.
func syncSSOTeams(tx *gorm.DB, userID int64, rules models.GroupRules, groups []string, now time.Time, by models.Actor) error {
	byID, byName := rules.DesiredTeams(groups)
	var teams []models.Team
	if len(byName) > 0 {
		var err error
		if teams, err = teamNames(tx); err != nil {
			return err
		}
	}
	for name, role := range byName {
		t, ok := models.TeamNamed(teams, name)
		if !ok {
			row := teamRow{Name: name, CreatedAt: utc(now)}
			if err := tx.Create(&row).Error; err != nil {
				return err
			}
			if err := audit(tx, by, models.AuditTeamCreate, "team", row.ID, map[string]any{"name": name, "source": "idp"}); err != nil {
				return err
			}
			t = *row.model()
		}
		byID[t.ID] = models.StrongerRole(byID[t.ID], role)
	}
	var current []membershipRow
	if err := tx.Where("user_id = ?", userID).Find(&current).Error; err != nil {
		return err
	}
	cur := make([]models.Membership, len(current))
	for i, m := range current {
		cur[i] = m.model()
	}
	plan := models.PlanMembershipSync(userID, cur, byID)
	for _, m := range plan.Upsert {
		row := membershipRow{TeamID: m.TeamID, UserID: userID, Role: m.Role, Source: models.SourceIdP, CreatedAt: utc(now)}
		if err := upsertMembership(tx, &row); err != nil {
			return err
		}
		if err := audit(tx, by, models.AuditMemberSet, "team", m.TeamID, map[string]any{"user_id": userID, "role": m.Role, "source": "idp"}); err != nil {
			return err
		}
	}
	for _, teamID := range plan.Remove {
		if err := tx.Where("team_id = ? AND user_id = ?", teamID, userID).Delete(&membershipRow{}).Error; err != nil {
			return err
		}
		if err := audit(tx, by, models.AuditMemberRemove, "team", teamID, map[string]any{"user_id": userID, "source": "idp"}); err != nil {
			return err
		}
	}
	return nil
}
