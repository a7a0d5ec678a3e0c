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

// TestSendWeekLateMinutes sends the fixture's week and the week after it
// while ann's late Sunday minutes are in the database but not yet in the
// hourly sums (issue 37, point 1), on both databases. Her booking from
// Sunday 22:00 to Monday 02:00 was used until midnight: the week after
// must not freeze it as a no-show, the email must say so, and each sent
// week must equal a recomputation once every hour is summed (an empty
// diff of every figure the surfaces show).
func TestSendWeekLateMinutes(t *testing.T) {
	for _, c := range fairweek.Weeks {
		t.Run(c.Week, func(t *testing.T) {
			t.Parallel()
			lateMinutes(t, c)
		})
	}
}

func lateMinutes(t *testing.T, c fairweek.Case) {
	w := c.Parse()
	next := w.Next()
	now := next.End.Add(8 * time.Hour) // Monday 08:00 after the next week: both are due
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		id := fairweek.Build(t, db, w)
		fairweek.HoldBackLate(t, db, w)
		keep := w.Start.AddDate(0, 0, -60)
		if _, err := db.RollUsage(ctx, now.Add(-time.Hour), keep, models.DefaultReportRules.BusyUtilPct); err != nil {
			t.Fatal(err)
		}
		fairweek.SendLate(t, db, w, now.Add(-30*time.Minute)) // after the sums: unsummed until the next roll
		run := &reports.Weekly{Store: db, Mail: &views.Mail{I18n: i18n.MustLoad(), BaseURL: "https://gpubook.example.org", Location: fairweek.Berlin}, Location: fairweek.Berlin,
			Now: func() time.Time { return now }}
		for _, week := range []models.Week{w, next} {
			if _, err := run.SendWeek(ctx, week); err != nil {
				t.Fatalf("send %s: %v", week, err)
			}
		}
		srv := smtptest.Start(t, smtptest.Options{})
		deliverOnce(t, runnerOn(t, db, srv.Port, clockwork.NewFakeClockAt(time.Now())))
		msgs := srv.Wait(2*len(fairweek.Names), 5*time.Second)
		checkLateMail(t, msgs, next)

		// Every hour summed, each sent week recomputed: nothing changes.
		if _, err := db.RollUsage(ctx, now.Add(time.Hour), keep, models.DefaultReportRules.BusyUtilPct); err != nil {
			t.Fatal(err)
		}
		for _, week := range []models.Week{w, next} {
			_, after, ch, err := db.RecomputeWeek(ctx, week, now, models.ReportRules{}, models.CLIActor, views.WeekDiff(i18n.MustLoad().For("en")))
			if err != nil {
				t.Fatal(err)
			}
			if len(ch) != 0 {
				t.Errorf("%s: the sent week differs from its recomputation from complete data: %+v", week, ch)
			}
			if f := after.WeekFigures(id.Ann); week == next && (f.NoShows != 0 || f.BookedSec != 2*3600) {
				t.Errorf("%s recomputed: ann %+v, want 2 h booked and no no-show", week, f)
			}
		}
	})
}

// checkLateMail reads ann's email of the week after the fixture's, both
// parts, against the hand-worked rows of fairweek.LateNext.
func checkLateMail(t *testing.T, msgs []smtptest.Message, next models.Week) {
	t.Helper()
	found := false
	for _, m := range msgs {
		msg, err := netmail.ReadMessage(strings.NewReader(string(m.Data)))
		must(t, err)
		if m.To[0] != fairweek.Email("ann") || !strings.Contains(msg.Header.Get("Subject"), next.String()) {
			continue
		}
		found = true
		text, html := mailParts(t, msg)
		text = strings.ReplaceAll(text, "\r\n", "\n")
		got, ok := fairweek.TextTable(text, fairweek.FiguresHead)
		if !ok {
			t.Fatalf("no figures table in ann's email of %s:\n%s", next, text)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
		must(t, err)
		hgot, _ := fairweek.HTMLTable(doc, fairweek.FiguresHead)
		rows, hrows := map[string]string{}, map[string]string{}
		for _, r := range got.Rows {
			rows[r[0]] = r[len(r)-1]
		}
		for _, r := range hgot.Rows {
			hrows[r[0]] = r[len(r)-1]
		}
		en := i18n.MustLoad().For("en")
		for _, want := range fairweek.LateNext {
			label := en.T(want[0])
			if rows[label] != want[1] {
				t.Errorf("ann's email of %s, text: %s is %q, want %q", next, label, rows[label], want[1])
			}
			if hrows[label] != want[1] {
				t.Errorf("ann's email of %s, HTML: %s is %q, want %q", next, label, hrows[label], want[1])
			}
		}
	}
	if !found {
		t.Errorf("no email for ann of %s", next)
	}
}
