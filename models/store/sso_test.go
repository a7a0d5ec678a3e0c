package store_test

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

func TestSignInSSO(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
		vision := &models.Team{Name: "Vision"}
		if err := db.CreateTeam(ctx, vision, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		manual := &models.Team{Name: "Manual"}
		db.CreateTeam(ctx, manual, models.CLIActor)
		for _, g := range []models.GroupMapping{{Group: "ml-vision", TeamID: vision.ID, Role: models.RoleMember}, {Group: "ml-vision-leads", TeamID: vision.ID, Role: models.RoleLead}} {
			if err := db.CreateGroupMapping(ctx, &g, models.CLIActor); err != nil {
				t.Fatal(err)
			}
		}
		rules := models.GroupRules{TeamPrefix: "gpu-team-", LeadSuffix: "-leads", AdminGroups: []string{"gpu-admins"}}
		var err error
		if rules.Mappings, err = db.GroupMappings(ctx); err != nil || len(rules.Mappings) != 2 {
			t.Fatalf("mappings = %v, %v", rules.Mappings, err)
		}
		id := models.SSOIdentity{Subject: "sub-1", Email: "Li.Na@Example.org", Name: "李娜", Groups: []string{"ml-vision-leads", "gpu-team-robotics", "gpu-admins"}}
		u, err := db.SignInSSO(ctx, id, rules, now, "10.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if u.Subject != "sub-1" || u.Email != "li.na@example.org" || u.Name != "李娜" || !u.IsAdmin {
			t.Errorf("user = %+v", u)
		}
		db.SetMembership(ctx, &models.Membership{TeamID: manual.ID, UserID: u.ID, Role: models.RoleMember}, models.CLIActor)
		ms, _ := db.MembershipsOf(ctx, u.ID)
		got := map[string]string{}
		for _, m := range ms {
			got[m.TeamName] = m.Role + "/" + m.Source
		}
		want := map[string]string{"Vision": "lead/idp", "robotics": "member/idp", "Manual": "member/manual"}
		if len(got) != len(want) || got["Vision"] != want["Vision"] || got["robotics"] != want["robotics"] || got["Manual"] != want["Manual"] {
			t.Errorf("memberships = %v, want %v", got, want)
		}

		// Next sign-in: left the lead group and robotics and the admin group.
		id.Groups, id.Name = []string{"ml-vision"}, "Li Na"
		u2, err := db.SignInSSO(ctx, id, rules, now.Add(time.Hour), "10.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if u2.ID != u.ID || u2.Name != "Li Na" || u2.IsAdmin {
			t.Errorf("second sign-in user = %+v", u2)
		}
		ms, _ = db.MembershipsOf(ctx, u.ID)
		got = map[string]string{}
		for _, m := range ms {
			got[m.TeamName] = m.Role + "/" + m.Source
		}
		if len(got) != 2 || got["Vision"] != "member/idp" || got["Manual"] != "member/manual" {
			t.Errorf("after group change = %v", got)
		}

		// A hand-made admin is linked on a verified email only, and not demoted by the IdP.
		boss := &models.User{Email: "boss@example.org", Name: "Boss", IsAdmin: true}
		db.CreateUser(ctx, boss, models.CLIActor)
		if _, err := db.SignInSSO(ctx, models.SSOIdentity{Subject: "sub-boss", Email: "boss@example.org", Name: "Boss"}, rules, now, ""); models.ErrorCode(err) != models.EFORBIDDEN {
			t.Errorf("linking on an unverified email: %v", err)
		}
		b, err := db.SignInSSO(ctx, models.SSOIdentity{Subject: "sub-boss", Email: "boss@example.org", EmailVerified: true, Name: "Boss"}, rules, now, "")
		if err != nil || b.ID != boss.ID || !b.IsAdmin || b.Subject != "sub-boss" {
			t.Errorf("linking a hand-made admin: %+v, %v", b, err)
		}
		// Another subject with a taken email is refused, nothing made.
		n0, err := db.CountUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SignInSSO(ctx, models.SSOIdentity{Subject: "sub-evil", Email: "li.na@example.org", Name: "X"}, rules, now, ""); models.ErrorCode(err) != models.ECONFLICT {
			t.Errorf("taken email: %v", err)
		}
		if _, err := db.SignInSSO(ctx, models.SSOIdentity{Subject: "sub-2", Name: "No Mail"}, rules, now, ""); models.ErrorCode(err) != models.EINVALID {
			t.Errorf("no email: %v", err)
		}
		if n1, err := db.CountUsers(ctx); err != nil || n1 != n0 {
			t.Errorf("users %d → %d after refused sign-ins (%v)", n0, n1, err)
		}
	})
}
