package models_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

func TestDescribeAudit(t *testing.T) {
	ada, root := int64(4), int64(1)
	end := time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC)
	actorAda := models.AuditRef{Kind: models.RefUser, ID: 4, Text: "ada@example.org"}
	actorRoot := models.AuditRef{Kind: models.RefUser, ID: 1, Text: "root@example.org"}
	user4 := models.AuditRef{Kind: models.RefUser, ID: 4, Text: "#4"}
	b12 := models.AuditRef{Kind: models.RefBooking, ID: 12, Text: "#12"}
	tests := []struct {
		name string
		e    models.AuditEvent
		key  string
		refs map[string]models.AuditRef
		nums map[string]any
	}{
		{"sign-in", models.AuditEvent{ActorID: &ada, ActorLabel: "ada@example.org", Action: models.AuditSignIn, TargetType: "user", TargetID: "4", Details: `{"method":"dev"}`},
			"audit.s.sign_in", map[string]models.AuditRef{"Actor": actorAda}, map[string]any{}},
		{"failed sign-in names the account", models.AuditEvent{ActorLabel: "anonymous", Action: models.AuditSignInFailed, Details: `{"reason":"state","email":"eve@example.org"}`},
			"audit.s.sign_in_failed_as", map[string]models.AuditRef{"Actor": {Kind: models.RefSystem, Text: "audit.actor.anonymous"}, "Email": {Kind: models.RefText, Text: "eve@example.org"}}, map[string]any{}},
		{"own cancel", models.AuditEvent{ActorID: &ada, ActorLabel: "ada@example.org", Action: models.AuditBookingCancel, TargetType: "booking", TargetID: "12", Details: `{"user_id":4,"gpu_ids":[1]}`},
			"audit.s.booking_cancel", map[string]models.AuditRef{"Actor": actorAda, "Booking": b12}, map[string]any{}},
		{"admin cancels another's booking", models.AuditEvent{ActorID: &root, ActorLabel: "root@example.org", Action: models.AuditBookingCancel, TargetType: "booking", TargetID: "12", Details: `{"user_id":4,"actor_id":1,"as_admin":true}`},
			"audit.s.booking_cancel_of", map[string]models.AuditRef{"Actor": actorRoot, "Booking": b12, "User": user4}, map[string]any{}},
		{"release within its first second frees all", models.AuditEvent{ActorID: &ada, Action: models.AuditBookingRelease, TargetType: "booking", TargetID: "12", Details: `{"user_id":4,"freed_whole_range":true}`},
			"audit.s.booking_release_whole", map[string]models.AuditRef{"Actor": {Kind: models.RefUser, ID: 4}, "Booking": b12}, map[string]any{}},
		{"auto-release", models.AuditEvent{ActorLabel: "gpubook-auto-release", Action: models.AuditBookingRelease, TargetType: "booking", TargetID: "12", Details: `{"user_id":4}`},
			"audit.s.booking_release_of", map[string]models.AuditRef{"Actor": {Kind: models.RefSystem, Text: "audit.actor.auto_release"}, "Booking": b12, "User": user4}, map[string]any{}},
		{"extend names the new end", models.AuditEvent{ActorID: &ada, Action: models.AuditBookingExtend, TargetType: "booking", TargetID: "12", Details: `{"user_id":4,"ends_at":"2026-12-03T18:00:00Z"}`},
			"audit.s.booking_extend", map[string]models.AuditRef{"Actor": {Kind: models.RefUser, ID: 4}, "Booking": b12, "Until": {Kind: models.RefTime, At: end}}, map[string]any{}},
		{"admin made", models.AuditEvent{ActorLabel: "cli", Action: models.AuditUserAdmin, TargetType: "user", TargetID: "4", Details: `{"admin":true}`},
			"audit.s.user_admin_on", map[string]models.AuditRef{"Actor": {Kind: models.RefSystem, Text: "audit.actor.cli"}, "User": user4}, map[string]any{}},
		{"admin removed", models.AuditEvent{ActorLabel: "cli", Action: models.AuditUserAdmin, TargetType: "user", TargetID: "4", Details: `{"admin":false}`},
			"audit.s.user_admin_off", map[string]models.AuditRef{"Actor": {Kind: models.RefSystem, Text: "audit.actor.cli"}, "User": user4}, map[string]any{}},
		{"lead of a team", models.AuditEvent{ActorID: &root, ActorLabel: "root@example.org", Action: models.AuditMemberSet, TargetType: "team", TargetID: "2", Details: `{"user_id":4,"role":"lead"}`},
			"audit.s.member_set_lead", map[string]models.AuditRef{"Actor": actorRoot, "User": user4, "Team": {Kind: models.RefTeam, ID: 2, Text: "#2"}}, map[string]any{}},
		{"node with a GPU count for the plural", models.AuditEvent{ActorLabel: "agent:gpu01", Action: models.AuditNodeCreate, TargetType: "node", TargetID: "3", Details: `{"name":"gpu01","gpus":8}`},
			"audit.s.node_create", map[string]models.AuditRef{"Actor": {Kind: models.RefText, Text: "gpubook-agent@gpu01"}, "Node": {Kind: models.RefNode, ID: 3, Text: "gpu01"}}, map[string]any{"Count": int64(8)}},
		{"GPU out of service with the reason", models.AuditEvent{ActorID: &root, ActorLabel: "root@example.org", Action: models.AuditGPUService, TargetType: "gpu", TargetID: "7", Details: `{"in_service":false,"reason":"fan"}`},
			"audit.s.gpu_out_of_service", map[string]models.AuditRef{"Actor": actorRoot, "GPU": {Kind: models.RefGPU, ID: 7, Text: "#7"}, "Reason": {Kind: models.RefText, Text: "fan"}}, map[string]any{}},
		{"cluster limits", models.AuditEvent{ActorID: &root, ActorLabel: "root@example.org", Action: models.AuditPolicyLimits, TargetType: "policy_global"},
			"audit.s.policy_limits_cluster", map[string]models.AuditRef{"Actor": actorRoot}, map[string]any{}},
		{"unreadable details still read", models.AuditEvent{ActorID: &root, ActorLabel: "root@example.org", Action: models.AuditTeamShareWeight, TargetType: "team", TargetID: "2", Details: `{not json`},
			"audit.s.team_share_weight", map[string]models.AuditRef{"Actor": actorRoot, "Team": {Kind: models.RefTeam, ID: 2, Text: "#2"}}, map[string]any{"Weight": "0"}},
		{"own calendar feed", models.AuditEvent{ActorID: &ada, ActorLabel: "ada@example.org", Action: models.AuditFeedCreate, TargetType: "feed", TargetID: "5", Details: `{"user_id":4,"team_id":null}`},
			"audit.s.feed_create", map[string]models.AuditRef{"Actor": actorAda, "User": user4}, map[string]any{}},
		{"a team's calendar feed", models.AuditEvent{ActorID: &ada, ActorLabel: "ada@example.org", Action: models.AuditFeedCreate, TargetType: "feed", TargetID: "6", Details: `{"user_id":4,"team_id":2}`},
			"audit.s.feed_create_team", map[string]models.AuditRef{"Actor": actorAda, "User": user4, "Team": {Kind: models.RefTeam, ID: 2, Text: "#2"}}, map[string]any{}},
		{"feed revoked", models.AuditEvent{ActorID: &ada, ActorLabel: "ada@example.org", Action: models.AuditFeedRevoke, TargetType: "feed", TargetID: "5"},
			"audit.s.feed_revoke", map[string]models.AuditRef{"Actor": actorAda, "Feed": {Kind: models.RefText, Text: "#5"}}, map[string]any{}},
		{"unknown action", models.AuditEvent{ActorLabel: "system", Action: "thing.happened", TargetType: "thing", TargetID: "9"},
			"audit.s.other", map[string]models.AuditRef{"Actor": {Kind: models.RefSystem, Text: "audit.actor.system"}, "Action": {Kind: models.RefText, Text: "thing.happened"}, "Target": {Kind: models.RefText, Text: "thing 9"}}, map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := models.DescribeAudit(tt.e)
			if got.Key != tt.key {
				t.Errorf("key = %q, want %q", got.Key, tt.key)
			}
			if !reflect.DeepEqual(got.Refs, tt.refs) {
				t.Errorf("refs = %+v\nwant %+v", got.Refs, tt.refs)
			}
			if !reflect.DeepEqual(got.Nums, tt.nums) {
				t.Errorf("nums = %+v, want %+v", got.Nums, tt.nums)
			}
		})
	}
}

func TestAuditActions(t *testing.T) {
	for _, a := range []string{"booking.", models.AuditBookingCancel, models.AuditSignIn} {
		if !models.ValidAuditAction(a) {
			t.Errorf("%q refused", a)
		}
	}
	for _, a := range []string{"", "booking", "booking.cancelled", "x."} {
		if models.ValidAuditAction(a) {
			t.Errorf("%q accepted", a)
		}
	}
	if got, want := models.AuditActionKey("booking."), "audit.action.booking"; got != want {
		t.Errorf("area key = %q, want %q", got, want)
	}
	if got, want := models.AuditActionKey(models.AuditSignInFailed), "audit.action.auth_sign_in_failed"; got != want {
		t.Errorf("action key = %q, want %q", got, want)
	}
}
