package models

import (
	"sort"
	"strings"
)

// GroupMapping maps one identity-provider group to a team and a role, as an
// admin set it up ("ml-vision" → Vision member, "ml-vision-leads" → Vision lead).
type GroupMapping struct {
	ID       int64
	Group    string
	TeamID   int64
	Role     string
	TeamName string // filled by queries, for display
}

// Validate checks a mapping before it is written.
func (g *GroupMapping) Validate() error {
	fe := FieldErrors{}
	if fe.Check("group", &g.Group, GroupText) && g.Group == "" {
		fe.Add("group", M("err.group_required"))
	}
	if g.TeamID <= 0 {
		fe.Add("team_id", M("err.team_required"))
	}
	if g.Role != RoleMember && g.Role != RoleLead {
		fe.Add("role", M("err.role_invalid"))
	}
	return fe.Err()
}

// GroupRules are the SSO settings that decide what a sign-in may do: turn
// groups into teams and admins, and link a new subject to an existing account.
type GroupRules struct {
	Mappings    []GroupMapping
	TeamPrefix  string // "gpu-team-": group gpu-team-vision → team "vision"
	LeadSuffix  string // "-leads": gpu-team-vision-leads → lead of "vision"
	AdminGroups []string
	// LinkUnverified is the policy for emails the IdP has not verified.
	LinkUnverified SSOLinkPolicy
}

// DesiredTeams says which teams (by name for prefix rules, by id for
// mappings) a user with groups belongs to according to the IdP, and in which
// role; lead wins over member when several groups name one team. Names that
// differ only in case (gpu-team-vision, gpu-team-VISION-leads) are one team,
// under the first spelling (SameTeamName).
func (r GroupRules) DesiredTeams(groups []string) (byID map[int64]string, byName map[string]string) {
	byID, byName = map[int64]string{}, map[string]string{}
	spelled := map[string]string{} // TeamNameKey → the first spelling
	in := map[string]bool{}
	for _, g := range groups {
		in[g] = true
	}
	for _, m := range r.Mappings {
		if in[m.Group] {
			byID[m.TeamID] = StrongerRole(byID[m.TeamID], m.Role)
		}
	}
	if r.TeamPrefix == "" {
		return byID, byName
	}
	for _, g := range groups {
		name, ok := strings.CutPrefix(g, r.TeamPrefix)
		if !ok || name == "" {
			continue
		}
		role := RoleMember
		if r.LeadSuffix != "" {
			if base, lead := strings.CutSuffix(name, r.LeadSuffix); lead && base != "" {
				name, role = base, RoleLead
			}
		}
		if s, msg := TeamText.Clean(name); msg != nil || s != name {
			continue // a group that cannot be a team name, like a form could not make it
		}
		if first, ok := spelled[TeamNameKey(name)]; ok {
			name = first
		} else {
			spelled[TeamNameKey(name)] = name
		}
		byName[name] = StrongerRole(byName[name], role)
	}
	return byID, byName
}

// IsAdmin reports whether groups include one of the admin groups.
func (r GroupRules) IsAdmin(groups []string) bool {
	for _, g := range groups {
		for _, a := range r.AdminGroups {
			if g == a {
				return true
			}
		}
	}
	return false
}

// StrongerRole is the role of someone two rules give a and b: lead wins.
func StrongerRole(a, b string) string {
	if a == RoleLead || b == RoleLead {
		return RoleLead
	}
	return RoleMember
}

// MembershipSync is what a sign-in changes in a user's teams.
type MembershipSync struct {
	Upsert []Membership // role changes and new IdP memberships
	Remove []int64      // team ids of IdP memberships the groups no longer grant
}

// PlanMembershipSync compares a user's memberships with what the IdP says
// (team id → role). IdP memberships follow the groups; memberships set by
// hand are never changed or removed.
func PlanMembershipSync(userID int64, current []Membership, desired map[int64]string) MembershipSync {
	var s MembershipSync
	have := map[int64]Membership{}
	for _, m := range current {
		have[m.TeamID] = m
	}
	teams := make([]int64, 0, len(desired))
	for id := range desired {
		teams = append(teams, id)
	}
	sort.Slice(teams, func(i, j int) bool { return teams[i] < teams[j] })
	for _, id := range teams {
		m, ok := have[id]
		switch {
		case ok && m.Source == SourceManual:
		case ok && m.Role == desired[id]:
		default:
			s.Upsert = append(s.Upsert, Membership{TeamID: id, UserID: userID, Role: desired[id], Source: SourceIdP})
		}
	}
	for _, m := range current {
		if _, ok := desired[m.TeamID]; !ok && m.Source == SourceIdP {
			s.Remove = append(s.Remove, m.TeamID)
		}
	}
	sort.Slice(s.Remove, func(i, j int) bool { return s.Remove[i] < s.Remove[j] })
	return s
}

// SSOIdentity is what a verified ID token says about a person.
type SSOIdentity struct {
	Subject string
	Email   string
	// EmailVerified is the IdP's email_verified claim: whether the IdP
	// checked that the person controls Email. Many IdPs let people type any
	// address, so only a verified one may claim an existing account.
	EmailVerified bool
	Name          string
	Groups        []string
	// Unix is the login on the GPU nodes from the claim the admin named
	// (GPUBOOK_OIDC_UNIX_CLAIM); empty when none is configured or sent.
	Unix string
}

// SubjectText bounds the OIDC subject (the spec's 255 ASCII characters).
var SubjectText = TextRule{Max: 255}

// Validate refuses an identity gpubook cannot use, with the same rules as
// the forms and the CLI: without a usable email address there is nowhere to
// send reports, so no user is made at all; a look-alike address
// (LookalikeEmail) is not usable. The display name is the one
// thing an IdP sends that a person cannot correct at sign-in, so instead of
// locking them out it is made to fit: control characters become spaces and
// an over-long name is cut at NameText.Max characters. Groups that could
// never name a mapping or a team are dropped.
func (id *SSOIdentity) Validate() error {
	fe := FieldErrors{}
	raw := strings.TrimSpace(strings.ToLower(id.Email))
	id.Email = NormalizeEmail(id.Email)
	if id.Email != raw {
		// The IdP verified another string (fullwidth ａdmin@, folded to
		// admin@): it vouches for nothing about the address it became.
		id.EmailVerified = false
	}
	id.Name = NameText.Squash(id.Name)
	if fe.Check("sub", &id.Subject, SubjectText) && id.Subject == "" {
		fe.Add("sub", M("err.sso_no_subject"))
	}
	switch {
	case id.Email == "":
		fe.Add("email", M("err.sso_no_email"))
	case !ValidEmail(id.Email):
		fe.Add("email", M("err.sso_email_invalid"))
	case id.Name == "":
		id.Name = NameText.Squash(id.Email[:strings.IndexByte(id.Email, '@')])
	}
	groups := id.Groups[:0:0]
	for _, g := range id.Groups {
		if s, msg := GroupText.Clean(g); msg == nil && s == g && s != "" {
			groups = append(groups, g)
		}
	}
	id.Groups = groups
	if !ValidUnixName(id.Unix) {
		id.Unix = "" // a bad claim leaves the login as it was rather than lock the person out
	}
	return fe.Err()
}

// SSOLinkPolicy says whether an email the IdP has not verified may link a
// new subject to an account that already has that email.
type SSOLinkPolicy string

// The link policies. Never is the default: an IdP that lets people choose
// their email would otherwise hand out any account, the admin's included.
// Always is for an IdP that controls every address it asserts but sends no
// email_verified claim (Microsoft Entra ID): the operator vouches for it.
const (
	LinkUnverifiedNever  SSOLinkPolicy = "never"
	LinkUnverifiedAlways SSOLinkPolicy = "always"
)

// CanLinkSSO decides whether a subject gpubook has not seen may sign in as
// existing, the account that already uses the email it presents. An account
// that already has another subject is never re-linked (that would lock out
// its owner); an account made by hand is linked only on a verified email or
// when the operator said the IdP's emails can be trusted. An admin who wants
// a particular subject to get an account sets it in advance
// ("gpubook user add --sso-subject"), which needs no email at all.
func CanLinkSSO(existing *User, id SSOIdentity, policy SSOLinkPolicy) error {
	switch {
	case existing.Subject == id.Subject:
		return nil
	case existing.Subject != "":
		return &Error{Code: ECONFLICT, Msg: M("err.sso_account_linked")}
	case !id.EmailVerified && policy != LinkUnverifiedAlways:
		return &Error{Code: EFORBIDDEN, Msg: M("err.sso_email_unverified")}
	}
	return nil
}
