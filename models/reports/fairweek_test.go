package reports_test

import (
	"context"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/mail/smtptest"
	"github.com/gpubook/gpubook/models/reports"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/storetest/fairweek"
	"github.com/gpubook/gpubook/views"
	"github.com/gpubook/gpubook/views/i18n"
)

// TestReportEmailFairWeek sends the fairness fixture's DST week and normal
// week (models/store/storetest/fairweek) to every user through the outbox
// and an SMTP server, on both databases, and checks each cell of the
// figures, days and trend tables and the fair-share sentence in both parts
// of every email as received: the text part's tables, the HTML part's
// tables and its per-day chart ("busy / booked" beside each day's bars).
func TestReportEmailFairWeek(t *testing.T) {
	for _, c := range fairweek.Weeks {
		t.Run(c.Week, func(t *testing.T) {
			t.Parallel()
			emailFairWeek(t, c)
		})
	}
}

func emailFairWeek(t *testing.T, c fairweek.Case) {
	w := c.Parse()
	want := fairweek.Expect(c, models.DefaultReportRules.UnbookedWeight)
	now := w.End.Add(8 * time.Hour) // Monday 08:00, when the schedule sends it
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fairweek.Build(t, db, w)
		run := &reports.Weekly{Store: db, Mail: &views.Mail{I18n: i18n.MustLoad(), BaseURL: "https://gpubook.example.org", Location: fairweek.Berlin}, Location: fairweek.Berlin,
			Now: func() time.Time { return now }}
		res, err := run.SendWeek(context.Background(), w)
		if err != nil || res.Enqueued != len(fairweek.Names) {
			t.Fatalf("send: %+v, %v", res, err)
		}
		srv := smtptest.Start(t, smtptest.Options{})
		deliverOnce(t, runnerOn(t, db, srv.Port, clockwork.NewFakeClockAt(time.Now())))
		msgs := srv.Wait(len(fairweek.Names), 5*time.Second)
		seen := map[string]bool{}
		for _, m := range msgs {
			name := strings.TrimSuffix(m.To[0], "@example.org")
			seen[name] = true
			msg, err := netmail.ReadMessage(strings.NewReader(string(m.Data)))
			must(t, err)
			text, html := mailParts(t, msg)
			text = strings.ReplaceAll(text, "\r\n", "\n") // as sent: CRLF
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
			must(t, err)
			if !strings.Contains(text, want.Sentence[name]+"\n") {
				t.Errorf("%s: the text part lacks %q", name, want.Sentence[name])
			}
			if got := htmlSentence(doc); got != want.Sentence[name] {
				t.Errorf("%s: the HTML part's sentence is %q, want %q", name, got, want.Sentence[name])
			}
			for id, tb := range map[string]fairweek.Table{"figures": want.Figures[name], "days": want.Days[name], "trend": want.Trend[name]} {
				if got, ok := fairweek.TextTable(text, tb.Head); ok {
					fairweek.Check(t, name+" text "+id, got, tb)
				} else {
					t.Errorf("%s: no %s table in the text part:\n%s", name, id, text)
				}
				if id == "days" {
					checkHTMLDays(t, name, doc, tb)
				} else if got, ok := fairweek.HTMLTable(doc, tb.Head); ok {
					fairweek.Check(t, name+" HTML "+id, got, tb)
				} else {
					t.Errorf("%s: no %s table in the HTML part", name, id)
				}
			}
		}
		for _, name := range fairweek.Names {
			if !seen[name] {
				t.Errorf("no email for %s", name)
			}
		}
	})
}

// checkHTMLDays reads the HTML email's per-day chart: a row per day with
// the weekday and "busy / booked" GPU-hours.
func checkHTMLDays(t *testing.T, name string, doc *goquery.Document, days fairweek.Table) {
	t.Helper()
	got := map[string]string{}
	doc.Find("td[width='90']").Each(func(_ int, td *goquery.Selection) {
		day := strings.TrimSpace(td.Parent().ChildrenFiltered("td").First().Text())
		got[day] = strings.Join(strings.Fields(td.Text()), " ")
	})
	if len(got) != 7 {
		t.Errorf("%s HTML days: %d days, want 7: %v", name, len(got), got)
	}
	for _, row := range days.Rows {
		day := strings.Fields(row[0])[0]
		if want := row[2] + " / " + row[1]; got[day] != want {
			t.Errorf("%s HTML days: %s is %q, want %q", name, day, got[day], want)
		}
	}
}

// htmlSentence is the HTML email's paragraph that explains the factor.
func htmlSentence(doc *goquery.Document) string {
	p := doc.Find("p").FilterFunction(func(_ int, p *goquery.Selection) bool {
		return strings.HasPrefix(strings.TrimSpace(p.Text()), "Your fair-share factor")
	})
	return strings.TrimSpace(p.Text())
}
