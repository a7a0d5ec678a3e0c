package reports_test

import (
	"context"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/mail"
	"github.com/gpubook/gpubook/models/mail/smtptest"
	"github.com/gpubook/gpubook/models/reports"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/views"
	"github.com/gpubook/gpubook/views/i18n"
)

var shanghai, _ = time.LoadLocation("Asia/Shanghai")

// deliveryWeek is a finished week: two weeks before today.
func deliveryWeek() models.Week { return models.WeekOf(time.Now(), shanghai).Prev(2) }

// deliveryData: ann (English) used a 1-hour booking of the week; ben
// (Chinese) did nothing; cat stopped the email. Two emails are due.
func deliveryData(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	for _, u := range []*models.User{{Email: "ann@example.org", Name: "Ann"}, {Email: "ben@example.org", Name: "Ben", Language: "zh-CN"},
		{Email: "cat@example.org", Name: "Cat"}} {
		must(t, db.CreateUser(ctx, u, models.CLIActor))
	}
	cat, _ := db.UserByEmail(ctx, "cat@example.org")
	must(t, db.SetReportEmail(ctx, cat.ID, false))
	gpus, _ := models.NewNodeGPUs("n1", 1, "A100", 81920)
	must(t, db.CreateNode(ctx, &models.Node{Name: "n1"}, gpus, models.CLIActor))
	from := deliveryWeek().Start.Add(30 * time.Hour).UTC()
	exec := func(q string, args ...any) { must(t, db.Gorm.Exec(q, args...).Error) }
	exec(`INSERT INTO bookings (user_id, node_id, starts_at, ends_at, created_at, updated_at)
		VALUES ((SELECT id FROM users WHERE email = 'ann@example.org'), (SELECT MIN(id) FROM nodes), ?, ?, ?, ?)`, from, from.Add(time.Hour), from, from)
	exec(`INSERT INTO booking_gpus (booking_id, gpu_id, starts_at, ends_at) VALUES ((SELECT MIN(id) FROM bookings), (SELECT MIN(id) FROM gpus), ?, ?)`,
		from, from.Add(time.Hour))
}

func reportRun(db *store.DB) *reports.Weekly {
	return &reports.Weekly{Store: db, Mail: &views.Mail{I18n: i18n.MustLoad(), BaseURL: "https://gpubook.example.org", Location: shanghai}, Location: shanghai, Now: time.Now}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func runnerOn(t *testing.T, db *store.DB, port int, clock clockwork.Clock) *mail.Outbox {
	t.Helper()
	db.Clock = clock.Now // the database's clock follows the test's
	m, err := mail.New(mail.Settings{Host: "127.0.0.1", Port: port, From: "gpubook@example.org", TLS: mail.TLSNone, Timeout: time.Second}, nil)
	must(t, err)
	o, err := mail.NewOutbox(mail.OutboxConfig{Store: db, Sender: m, Clock: clock, Logger: quietLog(), Owner: jobs.NewOwner(), Jitter: func() float64 { return 0.5 }})
	must(t, err)
	return o
}

func deliverOnce(t *testing.T, o *mail.Outbox) mail.Round {
	t.Helper()
	r, err := o.DeliverOnce(context.Background())
	must(t, err)
	return r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// oneEach checks that the server got exactly one report for ann and one for ben.
func oneEach(t *testing.T, msgs []smtptest.Message) {
	t.Helper()
	got := map[string]int{}
	for _, m := range msgs {
		for _, to := range m.To {
			got[to]++
		}
	}
	if len(msgs) != 2 || got["ann@example.org"] != 1 || got["ben@example.org"] != 1 {
		t.Errorf("server received %d messages: %v, want one each for ann and ben (cat opted out)", len(msgs), got)
	}
}

// TestReportRunsAtOnce: two runs of the same week at once (two replicas'
// jobs) enqueue each report once; the server receives one per user.
func TestReportRunsAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		deliveryData(t, db)
		due := deliveryWeek().Next().String() // the job's period: the week in which the report fell due
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = reportRun(db).Job(context.Background(), due) }()
		}
		wg.Wait()
		for _, err := range errs {
			must(t, err)
		}
		srv := smtptest.Start(t, smtptest.Options{})
		if r := deliverOnce(t, runnerOn(t, db, srv.Port, clockwork.NewFakeClockAt(time.Now()))); r.Sent != 2 {
			t.Errorf("round %+v, want 2 sent", r)
		}
		oneEach(t, srv.Wait(2, 5*time.Second))
	})
}

// TestReportCrashBetweenSendAndRecord: a worker sends and dies before it
// records; the run is restarted. The outbox marks the send unconfirmed
// and never repeats it, and the restarted run adds nothing.
func TestReportCrashBetweenSendAndRecord(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		deliveryData(t, db)
		ctx := context.Background()
		if _, err := reportRun(db).SendWeek(ctx, deliveryWeek()); err != nil {
			t.Fatal(err)
		}
		srv := smtptest.Start(t, smtptest.Options{})
		now := time.Now()
		db.Clock = func() time.Time { return now }
		claimed, err := db.ClaimMail(ctx, "crashed", 10, time.Minute)
		must(t, err)
		m, _ := mail.New(mail.Settings{Host: "127.0.0.1", Port: srv.Port, From: "gpubook@example.org", TLS: mail.TLSNone, Timeout: time.Second}, nil)
		for _, msg := range claimed {
			must(t, db.StartAttempt(ctx, msg.ID, "crashed", 0))
			must(t, m.Send(ctx, msg)) // … and the process dies before MarkSent
		}
		res, err := reportRun(db).SendWeek(ctx, deliveryWeek())
		if err != nil || res.Enqueued != 0 || res.Queued != 2 {
			t.Errorf("restarted run: %+v, %v", res, err)
		}
		clock := clockwork.NewFakeClockAt(now.Add(10 * time.Minute))
		if r := deliverOnce(t, runnerOn(t, db, srv.Port, clock)); r.Recovered != 2 || r.Sent != 0 {
			t.Errorf("round after the crash %+v, want 2 recovered as unconfirmed, none resent", r)
		}
		clock.Advance(48 * time.Hour)
		deliverOnce(t, runnerOn(t, db, srv.Port, clock))
		oneEach(t, srv.Messages())
	})
}

// TestReportSMTPOutage: the SMTP server is down when the reports go out,
// then comes back; each user gets one email.
func TestReportSMTPOutage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		deliveryData(t, db)
		ctx := context.Background()
		_, err := reportRun(db).SendWeek(ctx, deliveryWeek())
		must(t, err)
		addr, port := smtptest.FreeAddr(t)
		clock := clockwork.NewFakeClockAt(time.Now())
		r := runnerOn(t, db, port, clock)
		// The server is down: the round fails (the job runner reports it)
		// and both reports wait — one attempted, the rest released unsent.
		if round, err := r.DeliverOnce(ctx); err == nil || !round.ServerDown || round.Retry+round.Released != 2 {
			t.Fatalf("round while down %+v, %v; want an error, ServerDown and both waiting", round, err)
		}
		_, err = reportRun(db).SendWeek(ctx, deliveryWeek()) // the next check of the schedule runs it again
		must(t, err)
		srv := smtptest.StartOn(t, addr, smtptest.Options{})
		clock.Advance(time.Hour)
		if round := deliverOnce(t, r); round.Sent != 2 {
			t.Errorf("round after the outage %+v, want 2 sent", round)
		}
		clock.Advance(72 * time.Hour)
		deliverOnce(t, r)
		msgs := srv.Messages()
		oneEach(t, msgs)
		checkReportMail(t, msgs)
	})
}

// checkReportMail: HTML and text parts, the recipient's language, links,
// no SVG or script, and the short report for ben.
func checkReportMail(t *testing.T, msgs []smtptest.Message) {
	t.Helper()
	for _, m := range msgs {
		msg, err := netmail.ReadMessage(strings.NewReader(string(m.Data)))
		must(t, err)
		subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
		text, html := mailParts(t, msg)
		week := deliveryWeek().String()
		switch m.To[0] {
		case "ann@example.org":
			if subject != "Your GPU usage, week "+week || !strings.Contains(text, "GPU-hours booked") || !strings.Contains(html, "<table") {
				t.Errorf("ann's email: %q\n%s", subject, text)
			}
		case "ben@example.org":
			if !strings.Contains(subject, "周报") || !strings.Contains(text, "没有什么可报告的") || strings.Contains(text, "预订的 GPU 小时") {
				t.Errorf("ben's email should be the short one in Chinese: %q\n%s", subject, text)
			}
		}
		for _, want := range []string{"https://gpubook.example.org/usage?week=" + week, "https://gpubook.example.org/profile#email"} {
			if !strings.Contains(text, want) || !strings.Contains(html, want) {
				t.Errorf("%s: no link %s", m.To[0], want)
			}
		}
		if strings.Contains(html, "<svg") || strings.Contains(html, "<script") {
			t.Errorf("%s: SVG or script in the email", m.To[0])
		}
	}
}

func mailParts(t *testing.T, msg *netmail.Message) (text, html string) {
	t.Helper()
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	must(t, err)
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		b, _ := io.ReadAll(p)
		switch {
		case strings.HasPrefix(p.Header.Get("Content-Type"), "text/plain"):
			text = string(b)
		case strings.HasPrefix(p.Header.Get("Content-Type"), "text/html"):
			html = string(b)
		}
	}
	return text, html
}
