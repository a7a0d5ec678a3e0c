package web_test

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web/webtest"
)

// adminEnv signs in an admin (the first user) and a plain user.
func adminEnv(t *testing.T, dialect string) (*webtest.Env, *webtest.Client, *webtest.Client) {
	t.Helper()
	env := webtest.New(t, dialect)
	admin := env.Client()
	admin.SignIn("root@example.org", "Root Admin")
	user := env.Client()
	user.SignIn("user@example.org", "Plain User")
	return env, admin, user
}

func TestAdminPagesAreAdminOnly(t *testing.T) {
	t.Parallel()
	env, admin, user := adminEnv(t, "sqlite")
	anon := env.Client()
	for _, path := range []string{"/admin", "/admin/nodes", "/admin/users", "/admin/teams", "/admin/audit"} {
		t.Run(path, func(t *testing.T) {
			if res := admin.Get(path); res.Code != http.StatusOK {
				t.Errorf("admin: %d", res.Code)
			}
			if res := user.Get(path); res.Code != http.StatusForbidden {
				t.Errorf("user: %d, want 403", res.Code)
			}
			if res := anon.Get(path); res.Code != http.StatusSeeOther || !strings.HasPrefix(res.Header().Get("Location"), "/login") {
				t.Errorf("anonymous: %d %q, want redirect to sign-in", res.Code, res.Header().Get("Location"))
			}
		})
	}
	if res := user.Post("/admin/nodes", url.Values{"name": {"x"}, "gpus": {"1"}, "model": {"m"}, "memory_mib": {"1"}}); res.Code != http.StatusForbidden {
		t.Errorf("user POST /admin/nodes: %d", res.Code)
	}
}

func TestAdminNodes(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env, admin, _ := adminEnv(t, d)
			admin.Get("/admin/nodes")
			bad := []struct {
				name  string
				form  url.Values
				field string
			}{
				{"zero gpus", url.Values{"name": {"gpu01"}, "gpus": {"0"}, "model": {"A100"}, "memory_mib": {"81920"}}, "gpus"},
				{"not a number", url.Values{"name": {"gpu01"}, "gpus": {"eight"}, "model": {"A100"}, "memory_mib": {"81920"}}, "gpus"},
				{"negative memory", url.Values{"name": {"gpu01"}, "gpus": {"8"}, "model": {"A100"}, "memory_mib": {"-1"}}, "memory_mib"},
				{"no model", url.Values{"name": {"gpu01"}, "gpus": {"8"}, "model": {""}, "memory_mib": {"1"}}, "model"},
				{"bad host", url.Values{"name": {"gpu 01!"}, "gpus": {"8"}, "model": {"A100"}, "memory_mib": {"1"}}, "name"},
			}
			for _, tt := range bad {
				t.Run(tt.name, func(t *testing.T) {
					res := admin.Post("/admin/nodes", tt.form)
					if res.Code != http.StatusUnprocessableEntity || res.Doc.Find(`[data-testid="error-`+tt.field+`"]`).Length() != 1 {
						t.Errorf("status %d, error for %s shown: %d", res.Code, tt.field, res.Doc.Find(`[data-testid="error-`+tt.field+`"]`).Length())
					}
					if v, _ := res.Doc.Find("#node-name").Attr("value"); v != tt.form.Get("name") {
						t.Errorf("form forgot the name: %q", v)
					}
				})
			}
			if nodes, _ := env.DB.Nodes(t.Context()); len(nodes) != 0 {
				t.Fatalf("bad input wrote %d nodes", len(nodes))
			}
			res := admin.Post("/admin/nodes", url.Values{"name": {"gpu01"}, "gpus": {"4"}, "model": {"NVIDIA A100-SXM4-80GB"}, "memory_mib": {"81920"}})
			if res.Code != http.StatusSeeOther {
				t.Fatalf("add node: %d %s", res.Code, res.Body.String())
			}
			page := admin.Get("/admin/nodes")
			if page.Doc.Find(`[data-testid="node-gpu01"] tbody tr`).Length() != 4 || page.Doc.Find(`[data-testid="flash"]`).Length() != 1 {
				t.Errorf("node list after add: %s", page.Doc.Find("main").Text())
			}
			if res := admin.Post("/admin/nodes", url.Values{"name": {"gpu01"}, "gpus": {"1"}, "model": {"X"}, "memory_mib": {"1"}}); res.Code != http.StatusUnprocessableEntity {
				t.Errorf("duplicate node: %d", res.Code)
			}
			nodes, _ := env.DB.Nodes(t.Context())
			g := nodes[0].GPUs[2]
			if res := admin.Post("/admin/gpus/"+itoa(g.ID)+"/service", url.Values{"in_service": {"false"}, "reason": {""}}); res.Code != http.StatusUnprocessableEntity {
				t.Errorf("out of service without reason: %d", res.Code)
			}
			if res := admin.Post("/admin/gpus/"+itoa(g.ID)+"/service", url.Values{"in_service": {"false"}, "reason": {"ECC errors"}}); res.Code != http.StatusSeeOther {
				t.Errorf("out of service: %d", res.Code)
			}
			page = admin.Get("/admin/nodes")
			row := page.Doc.Find(`[data-testid="gpu-row-` + itoa(g.ID) + `"]`)
			if !row.HasClass("row-out") || !strings.Contains(row.Text(), "ECC errors") {
				t.Errorf("GPU row after out of service: %q", row.Text())
			}
			if res := admin.Post("/admin/nodes/"+itoa(nodes[0].ID)+"/rename", url.Values{"name": {"gpu-a100-01"}}); res.Code != http.StatusSeeOther {
				t.Errorf("rename: %d", res.Code)
			}
			if res := admin.Post("/admin/nodes/999/rename", url.Values{"name": {"x"}}); res.Code != http.StatusNotFound {
				t.Errorf("rename missing node: %d", res.Code)
			}
		})
	}
}

func TestAdminUsersAndTeams(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env, admin, _ := adminEnv(t, d)
			plain, _ := env.DB.UserByEmail(t.Context(), "user@example.org")
			me, _ := env.DB.UserByEmail(t.Context(), "root@example.org")
			admin.Get("/admin/users")
			if res := admin.Post("/admin/users/"+itoa(me.ID)+"/admin", url.Values{"admin": {"false"}}); res.Code != http.StatusUnprocessableEntity {
				t.Errorf("self-demotion: %d", res.Code)
			}
			if res := admin.Post("/admin/users/"+itoa(plain.ID)+"/admin", url.Values{"admin": {"true"}}); res.Code != http.StatusSeeOther {
				t.Errorf("make admin: %d", res.Code)
			}
			if u, _ := env.DB.User(t.Context(), plain.ID); !u.IsAdmin {
				t.Error("make admin did not stick")
			}
			if res := admin.Post("/admin/teams", url.Values{"name": {"  "}}); res.Code != http.StatusUnprocessableEntity {
				t.Errorf("empty team name: %d", res.Code)
			}
			res := admin.Post("/admin/teams", url.Values{"name": {"Vision"}})
			if res.Code != http.StatusSeeOther {
				t.Fatalf("create team: %d", res.Code)
			}
			teamURL := res.Header().Get("Location")
			if res := admin.Post("/admin/teams", url.Values{"name": {"Vision"}}); res.Code != http.StatusUnprocessableEntity {
				t.Errorf("duplicate team: %d", res.Code)
			}
			admin.Get(teamURL)
			if res := admin.Post(teamURL+"/members", url.Values{"user_id": {itoa(plain.ID)}, "role": {"boss"}}); res.Code != http.StatusUnprocessableEntity {
				t.Errorf("bad role: %d", res.Code)
			}
			if res := admin.Post(teamURL+"/members", url.Values{"user_id": {itoa(plain.ID)}, "role": {"lead"}}); res.Code != http.StatusSeeOther {
				t.Errorf("add lead: %d", res.Code)
			}
			page := admin.Get(teamURL)
			row := page.Doc.Find(`[data-testid="member-user@example.org"]`)
			if !strings.Contains(row.Text(), "lead") || !strings.Contains(row.Text(), "set by hand") {
				t.Errorf("member row: %q", row.Text())
			}
			list := admin.Get("/admin/teams")
			if !strings.Contains(list.Doc.Find(`[data-testid="team-Vision"]`).Text(), "Plain User") {
				t.Errorf("teams list lacks the lead: %q", list.Doc.Find(`[data-testid="teams-table"]`).Text())
			}
			// The team's share weight: shown, validated, saved.
			if v, _ := admin.Get(teamURL).Doc.Find(`#share-weight`).Attr("value"); v != "1" {
				t.Errorf("share weight field %q, want the default 1", v)
			}
			if res := admin.Post(teamURL+"/share-weight", url.Values{"share_weight": {"0"}}); res.Code != http.StatusUnprocessableEntity {
				t.Errorf("weight 0: %d", res.Code)
			}
			if res := admin.Post(teamURL+"/share-weight", url.Values{"share_weight": {"2.5"}}); res.Code != http.StatusSeeOther {
				t.Errorf("weight 2.5: %d", res.Code)
			}
			if v, _ := admin.Get(teamURL).Doc.Find(`#share-weight`).Attr("value"); v != "2.5" {
				t.Errorf("share weight after save %q, want 2.5", v)
			}
			if res := admin.Post(teamURL+"/members/"+itoa(plain.ID)+"/remove", url.Values{"confirm": {"yes"}}); res.Code != http.StatusSeeOther {
				t.Errorf("remove: %d", res.Code)
			}
		})
	}
}

func TestAdminAudit(t *testing.T) {
	t.Parallel()
	env, admin, _ := adminEnv(t, "sqlite")
	admin.Get("/admin/nodes")
	admin.Post("/admin/nodes", url.Values{"name": {"gpu01"}, "gpus": {"2"}, "model": {"L40S"}, "memory_mib": {"46068"}})
	res := admin.Get("/admin/audit?action=node.")
	if res.Code != http.StatusOK || res.Doc.Find(`[data-testid="audit-table"] tbody tr`).Length() != 1 || !strings.Contains(res.Doc.Find(`[data-testid="audit-table"]`).Text(), "Root Admin added the node gpu01 with 2 GPUs.") {
		t.Errorf("node events: %d %q", res.Code, res.Doc.Find("main").Text())
	}
	res = admin.Get("/admin/audit?action=auth.sign_in&user=root@example.org")
	if n := res.Doc.Find(`[data-testid="audit-table"] tbody tr`).Length(); n != 1 {
		t.Errorf("sign-ins of root = %d, want 1", n)
	}
	if res := admin.Get("/admin/audit?since=yesterday"); res.Code != http.StatusUnprocessableEntity {
		t.Errorf("bad date: %d", res.Code)
	}
	if res := admin.Get("/admin/audit?user=nobody@example.org"); res.Code != http.StatusUnprocessableEntity {
		t.Errorf("unknown actor: %d", res.Code)
	}
	_ = env
}

func TestAdminPagesInChinese(t *testing.T) {
	t.Parallel()
	_, admin, _ := adminEnv(t, "sqlite")
	admin.Header.Set("Accept-Language", "zh-CN")
	for path, want := range map[string]string{"/admin/nodes": "添加节点", "/admin/users": "设为管理员", "/admin/teams": "创建团队", "/admin/audit": "审计日志"} {
		res := admin.Get(path)
		if !strings.Contains(res.Doc.Find("main").Text(), want) {
			t.Errorf("%s lacks %q", path, want)
		}
	}
}

// TestAdminRequeueUnconfirmedMail: the admin start page lists unconfirmed
// mail under a duplicate warning; its button queues one again and the
// audit log records who did it.
func TestAdminRequeueUnconfirmedMail(t *testing.T) {
	t.Parallel()
	env, admin, user := adminEnv(t, "sqlite")
	ctx := t.Context()
	m := models.OutboxMessage{Kind: "test", DedupKey: "requeue:web", ToEmail: "ada@example.org", Subject: "Your week", TextBody: "t"}
	if _, err := env.DB.EnqueueMail(ctx, m); err != nil {
		t.Fatal(err)
	}
	claimed, err := env.DB.ClaimMail(ctx, "dead", 1, time.Minute)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v, %v", claimed, err)
	}
	id := claimed[0].ID
	if err := env.DB.StartAttempt(ctx, id, "dead", 0); err != nil {
		t.Fatal(err)
	}
	if err := env.DB.MarkUnconfirmed(ctx, id, "dead", errors.New("connection reset after DATA")); err != nil {
		t.Fatal(err)
	}
	page := admin.Get("/admin")
	row := page.Doc.Find(`[data-testid="unconfirmed-` + strconv.FormatInt(id, 10) + `"]`)
	if row.Length() != 1 || !strings.Contains(row.Text(), "ada@example.org") || !strings.Contains(row.Text(), "Your week") {
		t.Fatalf("unconfirmed row: %q", row.Text())
	}
	if w := page.Doc.Find(`[data-testid="unconfirmed-mail"] .warning`).Text(); !strings.Contains(w, "twice") {
		t.Errorf("warning %q does not say a duplicate is possible", w)
	}
	path := "/admin/mail/" + strconv.FormatInt(id, 10) + "/requeue"
	if res := user.Post(path, nil); res.Code != http.StatusForbidden {
		t.Errorf("user requeue: %d, want 403", res.Code)
	}
	if res := admin.Post(path, nil); res.Code != http.StatusSeeOther {
		t.Fatalf("requeue: %d %s", res.Code, res.Body.String())
	}
	if got, _ := env.DB.OutboxMessage(ctx, id); got == nil || got.Status != models.OutboxPending {
		t.Errorf("after requeue: %+v", got)
	}
	if res := admin.Post(path, nil); res.Code != http.StatusNotFound {
		t.Errorf("second requeue: %d, want 404", res.Code)
	}
	if admin.Get("/admin").Doc.Find(`[data-testid="unconfirmed-mail"]`).Length() != 0 {
		t.Error("the section stays after the last unconfirmed message was re-queued")
	}
	ev, err := env.DB.AuditEvents(ctx, models.AuditFilter{Action: models.AuditMailRequeue})
	if err != nil || len(ev) != 1 || ev[0].ActorID == nil || ev[0].TargetID != strconv.FormatInt(id, 10) {
		t.Errorf("audit: %+v, %v", ev, err)
	}
}
