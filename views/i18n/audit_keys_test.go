package i18n_test

import (
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// TestAuditKeysExist: the audit log builds its keys from action names, so
// the literal-key check cannot see them; every sentence DescribeAudit can
// choose and every action the filter offers must be in both catalogs.
func TestAuditKeysExist(t *testing.T) {
	b := i18n.MustLoad()
	en, zh := set(b.Keys("en")), set(b.Keys("zh-CN"))
	keys := map[string]bool{}
	one := int64(1)
	details := []string{`{}`, `{"user_id":1}`, `{"user_id":2}`, `{"user_id":2,"freed_whole_range":true}`,
		`{"admin":false,"in_service":true,"on":false,"role":"lead","email":"a@b.c"}`}
	for _, g := range models.AuditActionGroups {
		for _, a := range g {
			keys[models.AuditActionKey(a)] = true
			for _, tt := range []string{"", "policy_user", "policy_team"} {
				for _, d := range details {
					e := models.AuditEvent{ActorID: &one, Action: a, TargetType: tt, TargetID: "3", Details: d}
					keys[models.DescribeAudit(e).Key] = true
				}
			}
		}
	}
	for _, label := range []string{"cli", "system", "anonymous", "agent", "dev-login", "gpubook-auto-release"} {
		keys[models.AuditActor(models.AuditEvent{ActorLabel: label}).Text] = true
	}
	if len(keys) < 100 {
		t.Fatalf("only %d keys collected", len(keys))
	}
	for k := range keys {
		if !en[k] || !zh[k] {
			t.Errorf("%q: en %v, zh-CN %v", k, en[k], zh[k])
		}
	}
}
