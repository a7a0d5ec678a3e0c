package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
	"github.com/gpubook/gpubook/web/webtest"
)

// TestViolationsNameThePerson: a violation whose login maps to a gpubook
// user shows that person's name, linked to their page for admins, with
// the login beside; on the violation lists and on the live status page's
// flags; an unknown login stays "unknown user"; a violation the agent only
// reported (enforce = off) says so rather than "warned".
func TestViolationsNameThePerson(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d)
			admin := env.Client()
			admin.SignIn("root@example.org", "Root")
			zs := env.AddUser("zhangsan@lab.edu.cn", "Zhang San", false)
			if err := env.DB.SetUnixLogin(t.Context(), zs.ID, models.UnixIdentity{Name: "zs2023", Source: models.UnixSourceAdmin}, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			nodeID, cred := agentNode(t, env, "gpu01", 1)
			uuid := "GPU-00000001-0000-4000-8000-000000000000"
			inv := wire.Inventory{Node: "gpu01", AgentVersion: "test", ReportedAt: time.Now().UTC(),
				GPUs: []wire.GPU{{UUID: uuid, Index: 0, Minor: 0, Model: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920}}}
			if _, err := env.DB.ApplyInventory(t.Context(), nodeID, inv, time.Now()); err != nil {
				t.Fatal(err)
			}
			now := time.Now().UTC().Truncate(time.Second)
			b := wire.ViolationBatch{Node: "gpu01", BatchID: "v1", Violations: []wire.Violation{
				{ID: "a", Kind: wire.ViolationUnbooked, GPUUUID: uuid, User: "zs2023", UID: 7001, PID: 101, MemoryMiB: 1000,
					FirstSeen: now, LastSeen: now, Action: wire.ActionNone},
				{ID: "b", Kind: wire.ViolationUnbooked, GPUUUID: uuid, User: "ghost", UID: 4242, PID: 102, MemoryMiB: 1000,
					FirstSeen: now.Add(-time.Minute), LastSeen: now.Add(-time.Minute), Action: wire.ActionWarned}}}
			postViolationsAs(t, env, cred, b)

			link := "/admin/users/" + strconv.FormatInt(zs.ID, 10)
			for _, page := range []string{"/admin/violations", "/status"} {
				doc := admin.Get(page).Doc
				a := doc.Find(`a[data-testid="violation-person"]`)
				if href, _ := a.Attr("href"); a.Length() != 1 || a.Text() != "Zhang San" || href != link {
					t.Errorf("%s: person %d %q → %q, want one link \"Zhang San\" → %s", page, a.Length(), a.Text(), href, link)
				}
				if got := doc.Find(`[data-testid="violation-login"]`).Text(); got != "(zs2023)" {
					t.Errorf("%s: login %q, want (zs2023)", page, got)
				}
			}
			doc := admin.Get("/admin/violations").Doc
			if got := doc.Find(`[data-testid="owner-unknown"]`).Text(); got != "unknown user ghost (uid 4242)" {
				t.Errorf("unknown owner = %q", got)
			}
			rows := doc.Find(`[data-testid^="violation-"] td:last-child`)
			if rows.Length() != 2 || strings.TrimSpace(rows.Eq(0).Text()) != "reported only" || strings.TrimSpace(rows.Eq(1).Text()) != "warned" {
				t.Errorf("actions = %d %q %q, want \"reported only\" and \"warned\"", rows.Length(), rows.Eq(0).Text(), rows.Eq(1).Text())
			}

			me := env.Client()
			me.SignIn("zhangsan@lab.edu.cn", "Zhang San")
			mine := me.Get("/violations/mine").Doc
			if got := mine.Find(`span[data-testid="violation-person"]`).Text(); got != "Zhang San" || mine.Find(`a[data-testid="violation-person"]`).Length() != 0 {
				t.Errorf("her own page: person %q, links %d; want her name, no admin link", got, mine.Find(`a[data-testid="violation-person"]`).Length())
			}
		})
	}
}

func postViolationsAs(t *testing.T, env *webtest.Env, cred string, b wire.ViolationBatch) {
	t.Helper()
	body, _ := json.Marshal(b)
	req := httptest.NewRequest(http.MethodPost, "/api/agent/v1/violations", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+cred)
	req.Header.Set("Content-Type", "application/json")
	if res := env.Client().Do(req); res.Code >= 300 {
		t.Fatalf("violations: %d %s", res.Code, res.Body.String())
	}
}
