package web_test

import (
	"encoding/csv"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
)

// testIP is the peer address httptest gives every request; with no
// trusted proxies it is the client's address (clientip.go).
const testIP = "192.0.2.1"

// auditRows returns the sentence and IP of each row of an audit page.
func auditRows(doc *goquery.Document) (sentences, ips, actions []string) {
	doc.Find(testid("audit-row")).Each(func(_ int, s *goquery.Selection) {
		sentences = append(sentences, strings.Join(strings.Fields(s.Find(testid("audit-sentence")).Text()), " "))
		ips = append(ips, s.Find(testid("audit-ip")).Text())
		a, _ := s.Attr("data-action")
		actions = append(actions, a)
	})
	return sentences, ips, actions
}

// TestAuditLogSentences: booking changes made through the pages read as
// sentences with names and links, in English and Chinese, with the
// client's address for cancel, release and extend; the filters and the
// CSV select the same events.
func TestAuditLogSentences(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			a0, a1, a2, b0 := f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1), f.gpu(t, "node-a", 2), f.gpu(t, "node-b", 0)
			active := f.book(t, f.bob, []int64{a0}, -1, 2, "")
			upcoming := f.book(t, f.bob, []int64{a1}, 5, 7, "")
			later := f.book(t, f.bob, []int64{a2}, 3, 4, "")
			other := f.book(t, f.bob, []int64{b0}, 5, 6, "")
			bob, admin := f.signedIn(f.bob), f.signedIn(f.alice)
			for path, form := range map[string]url.Values{
				"/bookings/" + itoa(active.ID) + "/release":  {"confirm": {"yes"}},
				"/bookings/" + itoa(upcoming.ID) + "/cancel": {"confirm": {"yes"}},
				"/bookings/" + itoa(later.ID) + "/extend":    {"ends_at": {"2026-06-03T15:00"}},
			} {
				if res := bob.Post(path, form); res.Code != http.StatusSeeOther {
					t.Fatalf("%s: %d %s", path, res.Code, res.Body.String())
				}
			}
			if res := admin.Post("/bookings/"+itoa(other.ID)+"/cancel", url.Values{"confirm": {"yes"}}); res.Code != http.StatusSeeOther {
				t.Fatalf("admin cancel: %d", res.Code)
			}

			res := admin.Get("/admin/audit?action=booking.")
			if res.Code != http.StatusOK {
				t.Fatalf("audit: %d", res.Code)
			}
			sentences, ips, actions := auditRows(res.Doc)
			want := map[string]string{ // newest first
				models.AuditBookingCancel + "#admin": "Alice Admin cancelled the booking #" + itoa(other.ID) + " of Bob Builder.",
				models.AuditBookingExtend:            "Bob Builder extended the booking #" + itoa(later.ID) + " until 2026-06-03 15:00 UTC.",
				models.AuditBookingCancel:            "Bob Builder cancelled the booking #" + itoa(upcoming.ID) + ".",
				models.AuditBookingRelease:           "Bob Builder released the booking #" + itoa(active.ID) + " early.",
			}
			got := map[string]string{}
			for i, a := range actions {
				if a == models.AuditBookingCreate {
					continue // made by the fixture on the command line
				}
				if ips[i] != testIP {
					t.Errorf("%s: IP %q, want %q", sentences[i], ips[i], testIP)
				}
				if strings.HasPrefix(sentences[i], "Alice") {
					a += "#admin"
				}
				got[a] = sentences[i]
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s: %q, want %q", k, got[k], w)
				}
			}
			if n := len(actions); n != 8 {
				t.Errorf("%d booking events, want 8 (4 made, 4 changed): %v", n, sentences)
			}
			link := res.Doc.Find(testid("audit-sentence") + ` a[href="/admin/users/` + itoa(f.bob.ID) + `"]`)
			if link.Length() == 0 || link.First().Text() != "Bob Builder" {
				t.Errorf("no link to Bob's user page")
			}
			if res.Doc.Find(`a[href="/admin/audit?target_id=`+itoa(other.ID)+`&target_type=booking"]`).Length() == 0 {
				t.Errorf("no link to the booking's history")
			}
			if strings.Contains(res.Doc.Find(testid("audit-table")).Text(), "{") {
				t.Errorf("JSON on the page: %q", res.Doc.Find(testid("audit-table")).Text())
			}

			// A booking's history: its own events only.
			hist, _, _ := auditRows(admin.Get("/admin/audit?target_type=booking&target_id=" + itoa(later.ID)).Doc)
			if len(hist) != 2 || hist[0] != want[models.AuditBookingExtend] {
				t.Errorf("history of booking %d: %q", later.ID, hist)
			}

			// Filters: the action, the user (by or about), the dates.
			_, _, acts := auditRows(admin.Get("/admin/audit?action=" + models.AuditBookingCancel).Doc)
			if len(acts) != 2 || acts[0] != models.AuditBookingCancel || acts[1] != models.AuditBookingCancel {
				t.Errorf("cancel filter: %v", acts)
			}
			byAlice, _, _ := auditRows(admin.Get("/admin/audit?action=booking.&user=" + url.QueryEscape("ALICE@example.org")).Doc)
			if len(byAlice) != 1 || byAlice[0] != want[models.AuditBookingCancel+"#admin"] {
				t.Errorf("alice's booking events: %q", byAlice)
			}
			aboutBob, _, _ := auditRows(admin.Get("/admin/audit?action=booking.&user=bob@example.org").Doc)
			if len(aboutBob) != 8 {
				t.Errorf("events by or about bob: %d, want 8", len(aboutBob))
			}
			today := time.Now().UTC()
			day := func(d int) string { return today.AddDate(0, 0, d).Format("2006-01-02") }
			for q, n := range map[string]int{"since=" + day(0) + "&until=" + day(0): 8, "since=" + day(1): 0, "until=" + day(-1): 0} {
				rows, _, _ := auditRows(admin.Get("/admin/audit?action=booking.&" + q).Doc)
				if len(rows) != n {
					t.Errorf("%s: %d rows, want %d", q, len(rows), n)
				}
			}

			// The CSV: the same events, parsed as CSV, sentences and IPs.
			csvRes := admin.Get("/admin/audit?action=booking.&format=csv")
			if ct := csvRes.Header().Get("Content-Type"); csvRes.Code != http.StatusOK || !strings.HasPrefix(ct, "text/csv") {
				t.Fatalf("csv: %d %s", csvRes.Code, ct)
			}
			records, err := csv.NewReader(strings.NewReader(csvRes.Body.String())).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(records) != 9 || records[0][1] != "Event" || records[0][3] != "IP" {
				t.Fatalf("csv: %d records, head %q", len(records), records[0])
			}
			if r := records[1]; r[1] != want[models.AuditBookingCancel+"#admin"] || r[3] != testIP || r[5] != models.AuditBookingCancel || r[2] != "Booking cancelled" {
				t.Errorf("csv newest row: %q", r)
			}

			// In Chinese: the same events as Chinese sentences.
			admin.Header.Set("Accept-Language", "zh-CN")
			zh, _, _ := auditRows(admin.Get("/admin/audit?action=booking.&user=alice@example.org").Doc)
			if wantZH := "Alice Admin 取消了 Bob Builder 的预订 #" + itoa(other.ID) + "。"; len(zh) != 1 || zh[0] != wantZH {
				t.Errorf("zh-CN: %q, want %q", zh, wantZH)
			}
			zh, _, _ = auditRows(admin.Get("/admin/audit?action=" + models.AuditBookingExtend).Doc)
			if wantZH := "Bob Builder 将预订 #" + itoa(later.ID) + " 延长至 2026-06-03 15:00 UTC。"; len(zh) != 1 || zh[0] != wantZH {
				t.Errorf("zh-CN extend: %q, want %q", zh, wantZH)
			}
			zh, _, _ = auditRows(admin.Get("/admin/audit?target_type=booking&action=" + models.AuditBookingCreate + "&target_id=" + itoa(later.ID)).Doc)
			if wantZH := "命令行为 Bob Builder 创建了预订 #" + itoa(later.ID) + "。"; len(zh) != 1 || zh[0] != wantZH {
				t.Errorf("zh-CN by the command line: %q, want %q", zh, wantZH)
			}
			zhCSV, err := csv.NewReader(strings.NewReader(admin.Get("/admin/audit?action=" + models.AuditBookingRelease + "&format=csv").Body.String())).ReadAll()
			if err != nil || len(zhCSV) != 2 || zhCSV[0][1] != "事件" || !strings.Contains(zhCSV[1][1], "提前释放了预订") {
				t.Errorf("zh-CN csv: %q %v", zhCSV, err)
			}
		})
	}
}

// TestAuditLogFilterErrors: a bad filter value gets its field's message
// and a 422, never a 500 or an empty page that looks like "no events".
func TestAuditLogFilterErrors(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			_, admin, _ := adminEnv(t, d)
			for q, field := range map[string]string{
				"since=yesterday":                     "since",
				"until=2026-13-01":                    "until",
				"since=2026-06-05&until=2026-06-04":   "until",
				"action=booking.explode":              "action",
				"user=nobody@example.org":             "user",
				"page=-1":                             "page",
				"page=x":                              "page",
				"target_type=booking&target_id=abc":   "target_id",
				"format=csv&since=2026-06-05&until=1": "until",
			} {
				res := admin.Get("/admin/audit?" + q)
				if res.Code != http.StatusUnprocessableEntity || res.Doc.Find(testid("error-"+field)).Length() != 1 {
					t.Errorf("%s: %d, error for %s shown %d times", q, res.Code, field, res.Doc.Find(testid("error-"+field)).Length())
				}
			}
			res := admin.Get("/admin/audit?user=nobody@example.org")
			if got := res.Doc.Find(testid("error-user")).Text(); got != "No user has the email nobody@example.org." {
				t.Errorf("user error = %q", got)
			}
		})
	}
}

// TestAuditLogPagesAndCSVInjection: fifty events a page with links both
// ways; the CSV holds every event the filter selects, not one page, and a
// name that a spreadsheet would run as a formula reaches it as text.
func TestAuditLogPagesAndCSVInjection(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env, admin, _ := adminEnv(t, d)
			evil := env.AddUser("evil@example.org", "=HYPERLINK(\"http://x\")", false)
			for i := range 55 {
				e := models.AuditEvent{At: time.Date(2026, 6, 1, 0, i, 0, 0, time.UTC), ActorID: &evil.ID, ActorLabel: evil.Email,
					Action: models.AuditSignOut, TargetType: "user", TargetID: itoa(evil.ID), IP: testIP}
				if err := env.DB.RecordAudit(t.Context(), e); err != nil {
					t.Fatal(err)
				}
			}
			first := admin.Get("/admin/audit?action=" + models.AuditSignOut)
			rows, _, _ := auditRows(first.Doc)
			next, ok := first.Doc.Find(`a[rel="next"]`).Attr("href")
			if len(rows) != 50 || !ok || first.Doc.Find(`a[rel="prev"]`).Length() != 0 {
				t.Fatalf("first page: %d rows, next %q", len(rows), next)
			}
			if rows[0] != `=HYPERLINK("http://x") signed out.` {
				t.Errorf("row = %q", rows[0])
			}
			second := admin.Get(next)
			rows, _, _ = auditRows(second.Doc)
			if len(rows) != 5 || second.Doc.Find(`a[rel="prev"]`).Length() != 1 || second.Doc.Find(`a[rel="next"]`).Length() != 0 {
				t.Errorf("second page: %d rows", len(rows))
			}
			records, err := csv.NewReader(strings.NewReader(admin.Get("/admin/audit?format=csv&action=" + models.AuditSignOut).Body.String())).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(records) != 56 {
				t.Fatalf("csv: %d records, want 56", len(records))
			}
			if got, want := records[1][1], `'=HYPERLINK("http://x") signed out.`; got != want {
				t.Errorf("csv sentence = %q, want %q", got, want)
			}
			if got, want := records[1][0], "2026-06-01T00:54:00Z"; got != want {
				t.Errorf("csv time = %q, want %q", got, want)
			}
		})
	}
}

// TestAuditIPBehindProxy: behind a trusted proxy, the address recorded for
// a cancel, release or extend is the client's from X-Forwarded-For, as for
// a sign-in, through the pages and through the API alike.
func TestAuditIPBehindProxy(t *testing.T) {
	t.Parallel()
	_, proxies, _ := net.ParseCIDR("192.0.2.0/28") // httptest's peer 192.0.2.1 is the proxy
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d, func(c *web.Config) { c.TrustedProxies = []*net.IPNet{proxies} })
			a0, a1, a2 := f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1), f.gpu(t, "node-a", 2)
			page := f.book(t, f.bob, []int64{a0}, 5, 6, "")
			active := f.book(t, f.bob, []int64{a1}, -1, 2, "")
			api := f.book(t, f.bob, []int64{a2}, 3, 4, "")
			c := f.signedIn(f.bob)
			c.Header.Set("X-Forwarded-For", "203.0.113.66, 198.51.100.7")
			if res := c.Post("/bookings/"+itoa(page.ID)+"/cancel", url.Values{"confirm": {"yes"}}); res.Code != http.StatusSeeOther {
				t.Fatalf("cancel: %d", res.Code)
			}
			script := f.env.API(f.bob)
			script.Header.Set("X-Forwarded-For", "198.51.100.9")
			if res := script.Post("/api/v1/bookings/"+itoa(active.ID)+"/release", nil); res.Code != http.StatusOK {
				t.Fatalf("API release: %d %s", res.Code, res.Body.String())
			}
			if res := script.Post("/api/v1/bookings/"+itoa(api.ID)+"/extend", map[string]string{"ends_at": "2026-06-03T15:00:00Z"}); res.Code != http.StatusOK {
				t.Fatalf("API extend: %d %s", res.Code, res.Body.String())
			}
			for id, want := range map[int64]string{page.ID: "198.51.100.7", active.ID: "198.51.100.9", api.ID: "198.51.100.9"} {
				events, err := f.env.DB.AuditEvents(t.Context(), models.AuditFilter{TargetType: "booking", TargetID: itoa(id), Action: "booking."})
				if err != nil || len(events) != 2 { // made, then changed
					t.Fatalf("booking %d: %v, %v", id, events, err)
				}
				if got := events[0].IP; got != want {
					t.Errorf("booking %d %s: IP %q, want %q", id, events[0].Action, got, want)
				}
			}
		})
	}
}
