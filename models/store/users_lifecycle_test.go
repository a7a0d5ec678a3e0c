package store_test

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestDisabledUserCannotSignInBySSO: the IdP still vouches for a person
// who left, but their deactivated account stays closed, and the refused
// sign-in changes nothing (their admin group is not synced); reactivated,
// they sign in again under the same account.
func TestDisabledUserCannotSignInBySSO(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
		rules := models.GroupRules{AdminGroups: []string{"gpu-admins"}}
		id := models.SSOIdentity{Subject: "sub-1", Email: "li.na@example.org", EmailVerified: true, Name: "Li Na"}
		u, err := db.SignInSSO(ctx, id, rules, now, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.DisableUser(ctx, u.ID, models.CLIActor, now, nil); err != nil {
			t.Fatal(err)
		}
		id.Groups = []string{"gpu-admins"}
		if _, err := db.SignInSSO(ctx, id, rules, now.Add(time.Hour), ""); models.ErrorCode(err) != models.EFORBIDDEN {
			t.Fatalf("sign-in of a deactivated user: %v, want EFORBIDDEN", err)
		}
		if got, _ := db.User(ctx, u.ID); got.IsAdmin || !got.Disabled() {
			t.Errorf("after the refused sign-in: admin %v, disabled %v", got.IsAdmin, got.Disabled())
		}
		if err := db.EnableUser(ctx, u.ID, models.CLIActor, now); err != nil {
			t.Fatal(err)
		}
		again, err := db.SignInSSO(ctx, id, rules, now.Add(2*time.Hour), "")
		if err != nil || again.ID != u.ID || again.Disabled() {
			t.Errorf("after reactivation: %v, %+v", err, again)
		}
	})
}

// TestDisableWithdrawsPendingRequests: a request of a person who left is
// withdrawn, so that no lead approves (and pre-empts others for) it later.
func TestDisableWithdrawsPendingRequests(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
		team := &models.Team{Name: "Vision"}
		if err := db.CreateTeam(ctx, team, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		u := &models.User{Email: "li.na@example.org", Name: "Li Na"}
		if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if err := db.SetMembership(ctx, &models.Membership{TeamID: team.ID, UserID: u.ID, Role: models.RoleMember}, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		gpus, _ := models.NewNodeGPUs("node-a", 2, "A100", 81920)
		n := &models.Node{Name: "node-a"}
		if err := db.CreateNode(ctx, n, gpus, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		nodes, _ := db.Nodes(ctx)
		r := &models.PriorityRequest{UserID: u.ID, TeamID: &team.ID, GPUIDs: []int64{nodes[0].GPUs[0].ID}, StartsAt: now.Add(2 * time.Hour),
			EndsAt: now.Add(5 * time.Hour), Purpose: "p", Urgency: "u", Plan: "p", GiveBack: "g"}
		if err := db.CreateRequest(ctx, r, models.DefaultBookingLimits, now, models.CLIActor, nil); err != nil {
			t.Fatal(err)
		}
		res, err := db.DisableUser(ctx, u.ID, models.CLIActor, now, nil)
		if err != nil || res.Requests != 1 {
			t.Fatalf("disable: %+v, %v; want 1 request withdrawn", res, err)
		}
		if got, err := db.Request(ctx, r.ID); err != nil || got.Status != models.RequestWithdrawn {
			t.Errorf("request after disable: %v, %v; want withdrawn", got.Status, err)
		}
	})
}
