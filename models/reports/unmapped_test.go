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

// TestReportEmailUnmappedForAdmins: the fixture's Unix account "gus",
// which belongs to no gpubook user, is named with its 1.0 GPU-hour in the
// weekly email of the admin (fay), text and HTML, with the link to map
// it; nobody else's email mentions it. A week that ended before the
// first booking or usage is neither sent nor frozen.
func TestReportEmailUnmappedForAdmins(t *testing.T) {
	t.Parallel()
	w := fairweek.Weeks[1].Parse()
	now := w.End.Add(8 * time.Hour)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		id := fairweek.Build(t, db, w)
		must(t, db.SetAdmin(ctx, id.Fay, true, models.CLIActor))
		run := &reports.Weekly{Store: db, Mail: &views.Mail{I18n: i18n.MustLoad(), BaseURL: "https://gpubook.example.org", Location: fairweek.Berlin}, Location: fairweek.Berlin,
			Now: func() time.Time { return now }}
		early := w.Prev(2) // ends a week before the fixture's first booking
		res, err := run.SendWeek(ctx, early)
		if err != nil || !res.BeforePortal || res.Enqueued != 0 {
			t.Fatalf("send %s: %+v, %v; want nothing sent", early, res, err)
		}
		if d, err := db.ReportWeekAt(ctx, early, now, models.DefaultReportRules, false); err != nil || d.State == models.WeekFrozen {
			t.Errorf("%s after the send: %v, %v; want not frozen", early, d.State, err)
		}
		if res, err := run.SendWeek(ctx, w); err != nil || res.Enqueued != len(fairweek.Names) {
			t.Fatalf("send: %+v, %v", res, err)
		}
		srv := smtptest.Start(t, smtptest.Options{})
		deliverOnce(t, runnerOn(t, db, srv.Port, clockwork.NewFakeClockAt(time.Now())))
		for _, m := range srv.Wait(len(fairweek.Names), 5*time.Second) {
			name := strings.TrimSuffix(m.To[0], "@example.org")
			msg, err := netmail.ReadMessage(strings.NewReader(string(m.Data)))
			must(t, err)
			text, html := mailParts(t, msg)
			text = strings.ReplaceAll(text, "\r\n", "\n")
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
			must(t, err)
			head := []string{"Unix account", "GPU-hours"}
			want := fairweek.Table{Head: head, Rows: [][]string{{"gus", "1.0"}}}
			link := "https://gpubook.example.org/admin/usage?week=" + w.String()
			got, inText := fairweek.TextTable(text, head)
			gotHTML, inHTML := fairweek.HTMLTable(doc, head)
			if name != "fay" {
				if inText || inHTML || strings.Contains(text, "gus") {
					t.Errorf("%s, no admin, is told of the unmapped accounts", name)
				}
				continue
			}
			if !inText || !inHTML || !strings.Contains(text, link) || !strings.Contains(html, link) {
				t.Fatalf("fay's email lacks the unmapped accounts or the link:\n%s", text)
			}
			fairweek.Check(t, "fay text unmapped", got, want)
			fairweek.Check(t, "fay HTML unmapped", gotHTML, want)
		}
	})
}
