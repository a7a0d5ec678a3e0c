package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// peakLimits is the example: by day 2 GPUs and 4 h per booking.
func setPeakLimits(t *testing.T, f *calFixture) {
	t.Helper()
	admin := f.signedIn(f.alice)
	admin.Get("/admin/policies")
	res := admin.Post("/admin/policies/limits", url.Values{"scope": {"global"}, "max_gpus.peak": {"2"}, "max_length.peak": {"4"},
		"max_gpus.offpeak": {"8"}, "max_length.offpeak": {"48"}})
	if res.Code != http.StatusSeeOther {
		t.Fatalf("save limits: %d %s", res.Code, res.Body.String())
	}
}

func TestAdminPolicyPage(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			setPeakLimits(t, f)
			admin := f.signedIn(f.alice)
			page := admin.Get("/admin/policies?user=" + itoa(f.bob.ID))
			if page.Code != http.StatusOK || page.Doc.Find(testid("policy-limits")+" tbody tr").Length() != 4 {
				t.Fatalf("policy page: %d\n%s", page.Code, page.Body.String())
			}
			if got := page.Doc.Find(testid("effective-max_gpus.peak")).Text(); !strings.Contains(got, "2 GPUs") || !strings.Contains(got, "cluster-wide") {
				t.Errorf("effective row = %q", got)
			}
			if got := page.Doc.Find(testid("effective-max_length")).Text(); !strings.Contains(got, "built-in default") {
				t.Errorf("default row = %q", got)
			}
			// Bad input: 422, every problem shown, nothing written.
			bad := admin.Post("/admin/policies/limits", url.Values{"scope": {"user:" + itoa(f.bob.ID)}, "max_gpus": {"1.5"}, "max_length": {"9999"}, "min_notice": {"-1"}})
			if bad.Code != http.StatusUnprocessableEntity {
				t.Fatalf("bad limits: %d", bad.Code)
			}
			for _, id := range []string{"error-max_gpus", "error-max_length", "error-min_notice"} {
				if bad.Doc.Find(testid(id)).Length() != 1 {
					t.Errorf("missing %s", id)
				}
			}
			ls, _ := f.env.DB.PolicyLimits(context.Background())
			if len(ls) != 4 {
				t.Errorf("limits after a refused save: %d", len(ls))
			}
			badPeak := admin.Post("/admin/policies/settings", url.Values{"peak_enabled": {"1"}, "peak_day": {"1"}, "peak_from": {"19:00"}, "peak_to": {"09:00"}})
			if badPeak.Code != http.StatusUnprocessableEntity || badPeak.Doc.Find(testid("error-peak_to")).Length() != 1 {
				t.Errorf("bad peak: %d", badPeak.Code)
			}
			ok := admin.Post("/admin/policies/settings", url.Values{"peak_enabled": {"1"}, "peak_day": {"1", "2"}, "peak_from": {"08:00"}, "peak_to": {"20:00"}})
			if ok.Code != http.StatusSeeOther {
				t.Fatalf("save peak: %d", ok.Code)
			}
			s, _ := f.env.DB.PolicySettings(context.Background())
			if s.Peak.String() != "1,2 08:00-20:00" || s.AdminExempt {
				t.Errorf("settings = %s", s.Peak)
			}
			evs, _ := f.env.DB.AuditEvents(context.Background(), models.AuditFilter{Action: "policy."})
			if len(evs) != 2 {
				t.Errorf("policy audit events = %d, want 2", len(evs))
			}
			if res := f.signedIn(f.bob).Post("/admin/policies/limits", url.Values{"scope": {"global"}}); res.Code != http.StatusForbidden {
				t.Errorf("non-admin save: %d", res.Code)
			}
		})
	}
}

func TestBookingOutsidePolicy(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			setPeakLimits(t, f)
			bob := f.signedIn(f.bob)
			bob.Get("/bookings/new")
			form := url.Values{"gpu": {itoa(f.gpu(t, "node-a", 0)), itoa(f.gpu(t, "node-a", 1)), itoa(f.gpu(t, "node-a", 2))},
				"starts_at": {"2026-06-03T11:00"}, "ends_at": {"2026-06-03T13:00"}, "note": {"train"}}
			check := bob.Post("/bookings/check", form)
			if check.Code != http.StatusOK || check.Doc.Find(testid("breach-max_gpus.peak")).Length() != 1 {
				t.Fatalf("check: %d %s", check.Code, check.Body.String())
			}
			if href, _ := check.Doc.Find(testid("as-priority")).Attr("href"); !strings.HasPrefix(href, "/requests/new?") {
				t.Errorf("priority link = %q", href)
			}
			res := bob.Post("/bookings", form)
			if res.Code != http.StatusUnprocessableEntity {
				t.Fatalf("over-limit booking: %d", res.Code)
			}
			if got := res.Doc.Find(testid("breach-max_gpus.peak")).Text(); !strings.Contains(got, "at most 2 GPUs") || !strings.Contains(got, "cluster-wide") {
				t.Errorf("breach text = %q", got)
			}
			if res.Doc.Find(testid("as-priority")).Length() != 1 {
				t.Error("no priority request option on the refused form")
			}
			// Two GPUs are fine, and the check says so.
			form["gpu"] = form["gpu"][:2]
			if ok := bob.Post("/bookings/check", form); !strings.Contains(ok.Doc.Find(testid("policy-verdict")).Text(), "Within policy") {
				t.Errorf("check of a fine booking: %s", ok.Body.String())
			}
			if ok := bob.Post("/bookings", form); ok.Code != http.StatusSeeOther {
				t.Fatalf("booking within policy: %d", ok.Code)
			}
			// The API refuses the same way, with code "policy".
			api := f.env.API(f.bob)
			ar := api.Post("/api/v1/bookings", map[string]any{"gpu_ids": []int64{f.gpu(t, "node-b", 0), f.gpu(t, "node-b", 1)},
				"starts_at": "2026-06-04T10:00:00Z", "ends_at": "2026-06-04T16:00:00Z"})
			var body struct {
				Error struct {
					Code   string            `json:"code"`
					Fields map[string]string `json:"fields"`
				} `json:"error"`
			}
			ar.Decode(&body)
			if ar.Code != http.StatusUnprocessableEntity || body.Error.Code != "policy" || !strings.Contains(body.Error.Fields["max_length.peak"], "at most 4 h") {
				t.Errorf("API: %d %+v", ar.Code, body)
			}
		})
	}
}

func TestLimitsPage(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, "sqlite")
	setPeakLimits(t, f)
	admin := f.signedIn(f.alice)
	admin.Get("/admin/policies")
	admin.Post("/admin/policies/limits", url.Values{"scope": {"user:" + itoa(f.bob.ID)}, "max_gpu_hours_week": {"20"}})
	f.book(t, f.bob, []int64{f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1)}, 1, 4, "")
	bob := f.signedIn(f.bob)
	page := bob.Get("/limits?at=2026-06-06T12:00")
	if page.Code != http.StatusOK {
		t.Fatalf("limits: %d", page.Code)
	}
	if got := page.Doc.Find(testid("week-left")).Text(); !strings.Contains(got, "count 6 GPU-hours of your 20 GPU-hour limit") || !strings.Contains(got, "14 GPU-hours left") {
		t.Errorf("week = %q", got)
	}
	if got := page.Doc.Find(testid("limit-max_gpu_hours_week")).Text(); !strings.Contains(got, "your own limit") {
		t.Errorf("weekly row = %q", got)
	}
	if got := page.Doc.Find(testid("at-period")).Text(); !strings.Contains(got, "off-peak") {
		t.Errorf("Saturday noon: %q", got)
	}
	if page.Doc.Find(testid("limits-explain")+" p").Length() < 4 {
		t.Error("no explanation")
	}
	bob.Header.Set("Accept-Language", "zh-CN")
	zh := bob.Get("/limits")
	if got := zh.Doc.Find(testid("week-left")).Text(); !strings.Contains(got, "计入额度 6 / 20 GPU 小时") {
		t.Errorf("zh week = %q", got)
	}
	if got := zh.Doc.Find(testid("at-period")).Text(); !strings.Contains(got, "高峰时段") {
		t.Errorf("zh now (Wednesday 10:12) = %q", got)
	}
}

// Lending through the ledger page: lend to a colleague, give to the pool,
// draw from it; the limits page counts it and a loan over what is left is
// refused with 422.
func TestLendingLedger(t *testing.T) {
	t.Parallel()
	f := newPrioWeb(t, "sqlite")
	admin := f.signedIn(f.alice)
	admin.Get("/admin/policies")
	admin.Post("/admin/policies/limits", url.Values{"scope": {"global"}, "max_gpu_hours_week": {"10"}})
	bob := f.signedIn(f.bob)
	bob.Get("/limits/ledger")
	team := itoa(f.team.ID)
	for _, form := range []url.Values{
		{"action": {"lend"}, "to": {itoa(f.erin.ID)}, "hours": {"3"}, "note": {"for the demo"}},
		{"action": {"pool"}, "team": {team}, "hours": {"2"}},
	} {
		if res := bob.Post("/limits/lend", form); res.Code != http.StatusSeeOther {
			t.Fatalf("lend %v: %d %s", form, res.Code, res.Body.String())
		}
	}
	tooMuch := bob.Post("/limits/lend", url.Values{"action": {"lend"}, "to": {itoa(f.erin.ID)}, "hours": {"6"}})
	if tooMuch.Code != http.StatusUnprocessableEntity || tooMuch.Doc.Find(testid("error-hours")).Length() != 1 {
		t.Fatalf("over-lending: %d", tooMuch.Code)
	}
	erin := f.signedIn(f.erin)
	erin.Get("/limits/ledger")
	if res := erin.Post("/limits/lend", url.Values{"action": {"draw"}, "team": {team}, "hours": {"1.5"}}); res.Code != http.StatusSeeOther {
		t.Fatalf("draw: %d", res.Code)
	}
	ledger := erin.Get("/limits/ledger")
	if n := ledger.Doc.Find(testid("ledger") + " tbody tr").Length(); n != 3 {
		t.Errorf("ledger rows = %d, want 3", n)
	}
	if got := ledger.Doc.Find(testid("pool-" + team)).Text(); !strings.Contains(got, "0.5 GPU 小时") {
		t.Errorf("pool = %q", got)
	}
	if got := erin.Get("/limits").Doc.Find(testid("week-left")).Text(); !strings.Contains(got, "/ 14.5 GPU 小时") {
		t.Errorf("Erin's week = %q", got)
	}
	if got := bob.Get("/limits").Doc.Find(testid("week-left")).Text(); !strings.Contains(got, "of your 5 GPU-hour limit") {
		t.Errorf("Bob's week = %q", got)
	}
}

// A script whose booking is refused with code "policy" files the same
// values as a priority request through the API.
func TestAPIPriorityRequest(t *testing.T) {
	t.Parallel()
	f := newPrioWeb(t, "sqlite")
	api := f.env.API(f.bob)
	body := map[string]any{"gpu_ids": []int64{f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1), f.gpu(t, "node-a", 2)},
		"starts_at": "2026-06-03T11:00:00Z", "ends_at": "2026-06-03T13:00:00Z"}
	if res := api.Post("/api/v1/bookings", body); res.Code != http.StatusUnprocessableEntity {
		t.Fatalf("over-limit booking: %d", res.Code)
	}
	body["purpose"], body["urgency"], body["plan"], body["give_back"], body["preempt"] = "p", "u", "pl", "g", true
	res := api.Post("/api/v1/requests", body)
	var got struct {
		ID      int64  `json:"id"`
		Status  string `json:"status"`
		Preempt bool   `json:"preempt"`
		TeamID  *int64 `json:"team_id"`
	}
	res.Decode(&got)
	if res.Code != http.StatusCreated || got.Status != "pending" || !got.Preempt || got.TeamID == nil || *got.TeamID != f.team.ID {
		t.Fatalf("create: %d %+v", res.Code, got)
	}
	if res := api.Get("/api/v1/requests/" + itoa(got.ID)); res.Code != http.StatusOK {
		t.Errorf("show own: %d", res.Code)
	}
	if res := f.env.API(f.erin).Get("/api/v1/requests/" + itoa(got.ID)); res.Code != http.StatusNotFound {
		t.Errorf("show someone else's: %d", res.Code)
	}
	body["preempt"] = "yes"
	if res := api.Post("/api/v1/requests", body); res.Code != http.StatusUnprocessableEntity {
		t.Errorf("bad preempt: %d", res.Code)
	}
}
