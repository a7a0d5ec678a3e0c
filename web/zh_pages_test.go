package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// latinAllowed are the Latin tokens a Chinese page may show: product and
// hardware names, units, codes and the fixture's own names and emails.
var latinAllowed = map[string]bool{
	"gpubook": true, "GPU": true, "ID": true, "UUID": true, "UTC": true, "API": true, "CSV": true, "JSON": true,
	"SSO": true, "OIDC": true, "ssh": true, "Unix": true, "GiB": true, "MiB": true, "NVIDIA": true, "English": true,
	"Alice": true, "Admin": true, "Bob": true, "Builder": true, "Etc": true, "IP": true,
	"root": true,             // the Unix name no one may take (the Unix login form's help)
	"AA":   true, "BB": true, // the fixture's initials on narrow calendar bars
}

// latinToken is a word in Latin letters; node names, model names and
// emails are recognised before it and allowed as a whole.
var (
	latinToken = regexp.MustCompile(`[A-Za-z][A-Za-z]+`)
	latinWhole = regexp.MustCompile(`[\w.+-]+@[\w.-]+|node-[a-z]|[A-Z]\d{2,3}[\w-]*|HBM\d|SXM\d[\w-]*|\d+GB|gpubook \w+ \w+`)
	rawKey     = regexp.MustCompile(`\b[a-z]+\.[a-z_]+\b`)
	// asciiColon is a label's ASCII colon after Chinese text: Chinese
	// takes the full-width ： (common.colon).
	asciiColon = regexp.MustCompile(`\p{Han}\s*:`)
)

// The main pages in zh-CN show no English word and no raw catalog key.
func TestChinesePagesHaveNoEnglish(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	a1 := f.gpu(t, "node-a", 1)
	b := f.book(t, f.bob, []int64{a1}, 1, 3, "")
	f.book(t, f.bob, []int64{f.gpu(t, "node-a", 0)}, -1, 2, "")
	for _, u := range []string{"bob", "alice"} {
		user := f.bob
		if u == "alice" {
			user = f.alice
		}
		c := f.signedIn(user)
		c.Header.Set("Accept-Language", "zh-CN")
		pages := []string{"/", "/bookings", "/limits", "/profile", "/usage", "/status", "/bookings/new", "/bookings/new?node=" + itoa(f.nodes[0].ID) + "&start=2026-06-03T12:00Z&end=2026-06-03T13:00Z",
			"/calendar", "/calendar?view=day&date=2026-06-03"}
		if u == "alice" { // after bob's cancel, so that the audit log has his changes
			pages = append(pages, "/admin/policies", "/admin/audit", "/admin/audit?action=booking.", "/admin/users/"+itoa(f.bob.ID))
		}
		if u == "bob" {
			c.Get("/bookings")
			confirm := c.Post("/bookings/"+itoa(b.ID)+"/cancel", nil)
			check(t, u+" cancel confirmation", visibleText(confirm.Doc.Find("main")))
			if res := c.Post("/bookings/"+itoa(b.ID)+"/cancel", url.Values{"confirm": {"yes"}}); res.Code != http.StatusSeeOther {
				t.Fatalf("cancel: %d", res.Code)
			}
		}
		for _, pg := range pages {
			res := c.Get(pg)
			res.Doc.Find("script, style, code").Remove()
			check(t, u+" "+pg, visibleText(res.Doc.Find("main")))
		}
	}
}

// Calendar headings and buttons read naturally in both languages: the
// year only when it is not this one, paging named by what it pages.
func TestCalendarTitlesAndPaging(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite) // today is 2026-06-03, a Wednesday
	c := f.signedIn(f.bob)
	tests := []struct {
		lang, path, title, prev, next string
	}{
		{"zh-CN", "/calendar?view=day&date=2026-06-03", "6月3日 周三", "← 前一天", "后一天 →"},
		{"zh-CN", "/calendar?view=day&date=2027-01-04", "2027年1月4日 周一", "← 前一天", "后一天 →"},
		{"zh-CN", "/calendar?date=2026-06-03", "2026年6月1日 这一周", "← 上一周", "下一周 →"},
		{"en", "/calendar?view=day&date=2026-06-03", "Wed 3 Jun", "← Previous day", "Next day →"},
		{"en", "/calendar?view=day&date=2027-01-04", "Mon 4 Jan 2027", "← Previous day", "Next day →"},
		{"en", "/calendar?date=2026-06-03", "", "← Previous week", "Next week →"},
	}
	for _, tt := range tests {
		t.Run(tt.lang+" "+tt.path, func(t *testing.T) {
			c.Header.Set("Accept-Language", tt.lang)
			doc := c.Get(tt.path).Doc
			norm := func(id string) string { return strings.Join(strings.Fields(doc.Find(testid(id)).Text()), " ") }
			if got := norm("cal-title"); tt.title != "" && got != tt.title {
				t.Errorf("title %q, want %q", got, tt.title)
			}
			if got := norm("cal-prev"); got != tt.prev {
				t.Errorf("prev %q, want %q", got, tt.prev)
			}
			if got := norm("cal-next"); got != tt.next {
				t.Errorf("next %q, want %q", got, tt.next)
			}
		})
	}
}

// visibleText is the text of sel's nodes, each apart, so that two cells
// never run together into one word.
func visibleText(sel *goquery.Selection) string {
	var parts []string
	sel.Find("*").AddBack().Contents().Each(func(_ int, n *goquery.Selection) {
		if n.Get(0).Type == html.TextNode {
			parts = append(parts, n.Get(0).Data)
		}
	})
	return strings.Join(parts, " ")
}

func check(t *testing.T, page, text string) {
	t.Helper()
	text = latinWhole.ReplaceAllString(text, " ")
	bad := map[string]bool{}
	for _, w := range latinToken.FindAllString(text, -1) {
		if !latinAllowed[w] {
			bad[w] = true
		}
	}
	if strings.Contains(text, "{{") || rawKey.MatchString(text) {
		t.Errorf("%s: a raw key or template shows: %q", page, text)
	}
	if m := asciiColon.FindStringIndex(text); m != nil {
		before := []rune(text[:m[1]])
		t.Errorf("%s: an ASCII colon after Chinese text (%q); a Chinese label takes ：", page, string(before[max(0, len(before)-20):]))
	}
	if len(bad) > 0 {
		words := make([]string, 0, len(bad))
		for w := range bad {
			words = append(words, w)
		}
		sort.Strings(words)
		t.Errorf("%s: English words on a zh-CN page: %v", page, words)
	}
}

// The sign-in flash is in the signed-in user's language, not the
// anonymous visitor's.
func TestSignInFlashInUsersLanguage(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	u := *f.bob
	u.Language = "zh-CN"
	if err := f.env.DB.UpdateUser(t.Context(), &u, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	c := f.env.Client()
	c.Get("/login")
	res := c.Post("/login/dev", url.Values{"email": {u.Email}})
	if res.Code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", res.Code)
	}
	if got := c.Get(res.Header().Get("Location")).Doc.Find(testid("flash")).Text(); got != "已登录为 Bob Builder。" {
		t.Errorf("sign-in flash = %q", got)
	}
}
