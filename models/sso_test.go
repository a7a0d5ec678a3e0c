package models

import (
	"reflect"
	"strings"
	"testing"
)

func TestDesiredTeams(t *testing.T) {
	rules := GroupRules{
		Mappings: []GroupMapping{
			{Group: "ml-vision", TeamID: 1, Role: RoleMember},
			{Group: "ml-vision-leads", TeamID: 1, Role: RoleLead},
			{Group: "ml-nlp", TeamID: 2, Role: RoleMember},
		},
		TeamPrefix: "gpu-team-", LeadSuffix: "-leads", AdminGroups: []string{"gpu-admins"},
	}
	tests := []struct {
		name     string
		groups   []string
		wantID   map[int64]string
		wantName map[string]string
		admin    bool
	}{
		{"none", nil, map[int64]string{}, map[string]string{}, false},
		{"member", []string{"ml-vision"}, map[int64]string{1: RoleMember}, map[string]string{}, false},
		{"lead wins", []string{"ml-vision", "ml-vision-leads"}, map[int64]string{1: RoleLead}, map[string]string{}, false},
		{"prefix", []string{"gpu-team-robotics", "gpu-team-nlp-leads", "gpu-team-"}, map[int64]string{},
			map[string]string{"robotics": RoleMember, "nlp": RoleLead}, false},
		{"bare suffix is a team name", []string{"gpu-team--leads"}, map[int64]string{}, map[string]string{"-leads": RoleMember}, false},
		{"admin", []string{"gpu-admins", "ml-nlp"}, map[int64]string{2: RoleMember}, map[string]string{}, true},
		{"one team in two cases", []string{"gpu-team-Vision", "gpu-team-VISION-leads", "gpu-team-vision"}, map[int64]string{},
			map[string]string{"Vision": RoleLead}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotID, gotName := rules.DesiredTeams(tt.groups)
			if !reflect.DeepEqual(gotID, tt.wantID) || !reflect.DeepEqual(gotName, tt.wantName) {
				t.Errorf("got %v %v, want %v %v", gotID, gotName, tt.wantID, tt.wantName)
			}
			if got := rules.IsAdmin(tt.groups); got != tt.admin {
				t.Errorf("admin = %v, want %v", got, tt.admin)
			}
		})
	}
}

func TestPlanMembershipSync(t *testing.T) {
	current := []Membership{
		{TeamID: 1, UserID: 7, Role: RoleMember, Source: SourceIdP},
		{TeamID: 2, UserID: 7, Role: RoleMember, Source: SourceManual},
		{TeamID: 3, UserID: 7, Role: RoleLead, Source: SourceIdP},
		{TeamID: 4, UserID: 7, Role: RoleLead, Source: SourceManual},
	}
	tests := []struct {
		name    string
		desired map[int64]string
		want    MembershipSync
	}{
		{"groups gone: idp memberships go, manual stay", map[int64]string{},
			MembershipSync{Remove: []int64{1, 3}}},
		{"promotion and a new team", map[int64]string{1: RoleLead, 3: RoleLead, 5: RoleMember},
			MembershipSync{Upsert: []Membership{{TeamID: 1, UserID: 7, Role: RoleLead, Source: SourceIdP}, {TeamID: 5, UserID: 7, Role: RoleMember, Source: SourceIdP}}}},
		{"manual membership is never touched", map[int64]string{1: RoleMember, 2: RoleLead, 3: RoleLead},
			MembershipSync{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlanMembershipSync(7, current, tt.desired)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSSOIdentityValidate(t *testing.T) {
	tests := []struct {
		name     string
		in       SSOIdentity
		wantErr  string // field with a problem
		wantName string
	}{
		{"complete", SSOIdentity{Subject: "s1", Email: "A@B.org", Name: "Ann"}, "", "Ann"},
		{"name from email", SSOIdentity{Subject: "s1", Email: "li.na@example.org"}, "", "li.na"},
		{"no email", SSOIdentity{Subject: "s1", Name: "X"}, "email", "X"},
		{"no subject", SSOIdentity{Email: "a@b.org"}, "sub", "a"},
		{"subject with NUL", SSOIdentity{Subject: "s\x001", Email: "a@b.org"}, "sub", "a"},
		{"subject over 255", SSOIdentity{Subject: strings.Repeat("s", 256), Email: "a@b.org"}, "sub", "a"},
		{"email that is not an email", SSOIdentity{Subject: "s1", Email: "not an email", Name: "X"}, "email", "X"},
		{"email with CR LF", SSOIdentity{Subject: "s1", Email: "a@b.org\r\nBcc: c@d.org", Name: "X"}, "email", "X"},
		{"email with NUL", SSOIdentity{Subject: "s1", Email: "a\x00@b.org", Name: "X"}, "email", "X"},
		{"name with CR LF squashed", SSOIdentity{Subject: "s1", Email: "a@b.org", Name: "Ann\r\nAdmin\x00 "}, "", "Ann Admin"},
		{"5,000-character name cut", SSOIdentity{Subject: "s1", Email: "a@b.org", Name: strings.Repeat("名", 5000)}, "", strings.Repeat("名", 200)},
		{"name of control characters only", SSOIdentity{Subject: "s1", Email: "li@b.org", Name: "\x00\x01"}, "", "li"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := tt.in
			err := id.Validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && AsError(err).Fields[tt.wantErr].Key == "" {
				t.Errorf("err = %v, want problem with %q", err, tt.wantErr)
			}
			if id.Name != tt.wantName {
				t.Errorf("name = %q, want %q", id.Name, tt.wantName)
			}
		})
	}
}

func TestSSOIdentityDropsUnusableGroups(t *testing.T) {
	id := SSOIdentity{Subject: "s", Email: "a@b.org", Groups: []string{"ok", "", "bad\x00", "cr\nlf", strings.Repeat("g", 201), " padded "}}
	if err := id.Validate(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(id.Groups, []string{"ok"}) {
		t.Errorf("groups = %q", id.Groups)
	}
}

func TestDesiredTeamsSkipsNamesNoFormAccepts(t *testing.T) {
	r := GroupRules{TeamPrefix: "t-", LeadSuffix: "-leads"}
	_, byName := r.DesiredTeams([]string{"t-" + strings.Repeat("x", 101), "t-" + strings.Repeat("x", 100), "t- spaced", "t-ok-leads"})
	want := map[string]string{strings.Repeat("x", 100): RoleMember, "ok": RoleLead}
	if !reflect.DeepEqual(byName, want) {
		t.Errorf("teams = %v, want %v", byName, want)
	}
}

func TestCanLinkSSO(t *testing.T) {
	handMade := &User{ID: 1, Email: "root@example.org"}
	linked := &User{ID: 1, Email: "root@example.org", Subject: "real-admin"}
	tests := []struct {
		name     string
		existing *User
		id       SSOIdentity
		policy   SSOLinkPolicy
		want     string // error code, "" to link
		wantKey  string
	}{
		{"verified email links a hand-made account", handMade, SSOIdentity{Subject: "s", EmailVerified: true}, LinkUnverifiedNever, "", ""},
		{"unverified email never links", handMade, SSOIdentity{Subject: "s"}, LinkUnverifiedNever, EFORBIDDEN, "err.sso_email_unverified"},
		{"empty policy is never", handMade, SSOIdentity{Subject: "s"}, "", EFORBIDDEN, "err.sso_email_unverified"},
		{"operator trusts the IdP", handMade, SSOIdentity{Subject: "s"}, LinkUnverifiedAlways, "", ""},
		{"another subject never takes a linked account", linked, SSOIdentity{Subject: "s", EmailVerified: true}, LinkUnverifiedAlways, ECONFLICT, "err.sso_account_linked"},
		{"the same subject is its own account", linked, SSOIdentity{Subject: "real-admin"}, LinkUnverifiedNever, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CanLinkSSO(tt.existing, tt.id, tt.policy)
			if got := ErrorCode(err); got != tt.want {
				t.Fatalf("code = %q, want %q (%v)", got, tt.want, err)
			}
			if err != nil && AsError(err).Msg.Key != tt.wantKey {
				t.Errorf("key = %q, want %q", AsError(err).Msg.Key, tt.wantKey)
			}
		})
	}
}
