package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/mail"
	"github.com/gpubook/gpubook/models/mail/smtptest"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// prioWeb is calFixture with a team: Bob and Erin are members, Carol and
// Dan lead it; Alice is an admin outside it.
type prioWeb struct {
	*calFixture
	carol, dan, erin *models.User
	team             *models.Team
}

func newPrioWeb(t *testing.T, dialect string) *prioWeb {
	t.Helper()
	f := &prioWeb{calFixture: newCalFixture(t, dialect)}
	ctx := context.Background()
	f.carol = f.env.AddUser("carol@example.org", "Carol Lead", false)
	f.dan = f.env.AddUser("dan@example.org", "Dan Lead", false)
	f.erin = f.env.AddUser("erin@example.org", "Erin Member", false)
	f.erin.Language = "zh-CN"
	if err := f.env.DB.UpdateUser(ctx, f.erin, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	f.team = &models.Team{Name: "vision"}
	if err := f.env.DB.CreateTeam(ctx, f.team, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	for u, role := range map[*models.User]string{f.bob: models.RoleMember, f.erin: models.RoleMember, f.carol: models.RoleLead, f.dan: models.RoleLead} {
		if err := f.env.DB.SetMembership(ctx, &models.Membership{TeamID: f.team.ID, UserID: u.ID, Role: role}, models.CLIActor); err != nil {
			t.Fatal(err)
		}
	}
	setPeakLimits(t, f.calFixture)
	return f
}

func TestPriorityApprovalFlow(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newPrioWeb(t, d)
			erinsBooking := f.book(t, f.erin, []int64{f.gpu(t, "node-a", 2)}, 1.5, 4, "erin's run")
			bob := f.signedIn(f.bob)
			bob.Get("/bookings/new")
			form := url.Values{"gpu": {itoa(f.gpu(t, "node-a", 0)), itoa(f.gpu(t, "node-a", 1)), itoa(f.gpu(t, "node-a", 2))},
				"starts_at": {"2026-06-03T11:00"}, "ends_at": {"2026-06-03T13:00"}}
			refused := bob.Post("/bookings", form)
			link, _ := refused.Doc.Find(testid("as-priority")).Attr("href")
			if refused.Code != http.StatusUnprocessableEntity || link == "" {
				t.Fatalf("refusal: %d, link %q", refused.Code, link)
			}
			page := bob.Get(link)
			if page.Code != http.StatusOK || page.Doc.Find(testid("breach-max_gpus.peak")).Length() != 1 || page.Doc.Find(`input[name="gpu"][checked]`).Length() != 3 {
				t.Fatalf("request form: %d\n%s", page.Code, page.Body.String())
			}
			missing := bob.Post("/requests", form)
			if missing.Code != http.StatusUnprocessableEntity || missing.Doc.Find(testid("error-purpose")).Length() != 1 {
				t.Fatalf("request without justification: %d", missing.Code)
			}
			form.Set("purpose", "NeurIPS rebuttal")
			form.Set("urgency", "deadline tomorrow 12:00")
			form.Set("plan", "3 ablations, 2 h")
			form.Set("give_back", "13:00 today")
			form.Set("preempt", "1")
			created := bob.Post("/requests", form)
			if created.Code != http.StatusSeeOther {
				t.Fatalf("file request: %d %s", created.Code, created.Body.String())
			}
			reqPath := created.Header().Get("Location")
			// Nothing is held yet: Erin's booking stands, the slot is only requested.
			if b, _ := f.env.DB.Booking(context.Background(), erinsBooking.ID); b.Status != models.StatusConfirmed {
				t.Fatal("a pending request changed a booking")
			}
			carol := f.signedIn(f.carol)
			home := carol.Get("/approvals")
			if got := home.Doc.Find(testid("pending-count")).Text(); got != "1" {
				t.Errorf("nav count for the lead = %q", got)
			}
			if home.Doc.Find(testid("preempt-plan")+" tbody tr").Length() != 1 || home.Doc.Find(testid("approve-form")).Length() != 1 {
				t.Errorf("queue item lacks what it would pre-empt or the approve form")
			}
			if got := bob.Get("/approvals").Doc.Find(testid("pending-count")).Length(); got != 0 {
				t.Error("the requester sees a count for their own request")
			}
			erin := f.signedIn(f.erin)
			if res := erin.Post(reqPath+"/approve", nil); res.Code != http.StatusForbidden {
				t.Errorf("non-lead approves: %d", res.Code)
			}
			if res := erin.Get(reqPath); res.Code != http.StatusNotFound {
				t.Errorf("non-lead reads the request: %d", res.Code)
			}
			if res := bob.Post(reqPath+"/approve", nil); res.Code != http.StatusForbidden {
				t.Errorf("requester approves own: %d", res.Code)
			}
			preview := carol.Get(reqPath)
			plan, _ := preview.Doc.Find(testid("approve-form") + ` input[name="plan"]`).Attr("value")
			row := preview.Doc.Find(testid("plan-row-" + itoa(erinsBooking.ID)))
			if plan == "" || !strings.Contains(row.Text(), "Erin Member") || !strings.Contains(row.Text(), "vision") ||
				strings.TrimSpace(row.Find(testid("plan-what")).Text()) != "moved: GPU 2 → GPU 3" || strings.TrimSpace(row.Find(testid("plan-loss")).Text()) != "0 GPU-hours" ||
				strings.TrimSpace(preview.Doc.Find(testid("plan-total")).Text()) != "0 GPU-hours" {
				t.Fatalf("preview: plan %q, row %q", plan, row.Text())
			}
			if res := carol.Post(reqPath+"/approve", url.Values{"comment": {"ok, hand back at 13:00"}}); res.Code != http.StatusConflict {
				t.Errorf("approve without the previewed plan: %d", res.Code)
			}
			if res := carol.Post(reqPath+"/approve", url.Values{"comment": {"ok, hand back at 13:00"}, "plan": {plan}}); res.Code != http.StatusSeeOther {
				t.Fatalf("lead approves: %d %s", res.Code, res.Body.String())
			}
			if res := f.signedIn(f.dan).Post(reqPath+"/approve", nil); res.Code != http.StatusConflict {
				t.Errorf("second lead approves: %d", res.Code)
			}
			if b, _ := f.env.DB.Booking(context.Background(), erinsBooking.ID); b.Status != models.StatusConfirmed || len(b.GPUIDs) != 1 || b.GPUIDs[0] != f.gpu(t, "node-a", 3) {
				t.Errorf("Erin's booking after pre-emption: %s on %v, want moved to GPU 3", b.Status, b.GPUIDs)
			}
			show := bob.Get(reqPath)
			if got := show.Doc.Find(testid("request-status")).Text(); got != "approved" {
				t.Errorf("status = %q", got)
			}
			history := show.Doc.Find(testid("request-history") + " li")
			if got := history.Length(); got != 2 {
				t.Errorf("history has %d events, want created and approved", got)
			}
			if got := history.Last().Text(); !strings.Contains(got, "Carol Lead approved the request. 1 booking(s) gave way, 0 GPU-hours lost in all. Comment: “ok, hand back at 13:00”") ||
				strings.Contains(got, "{") || strings.Contains(got, "booking_id") {
				t.Errorf("history line = %q", got)
			}
			if got := show.Doc.Find(testid("in-way")).Length(); got != 0 {
				t.Errorf("the approved request lists %d bookings in its way (its own)", got)
			}
			if res := f.signedIn(f.alice).Get(reqPath); res.Code != http.StatusOK {
				t.Errorf("admin reads the request: %d", res.Code)
			}
			checkMail(t, f)
		})
	}
}

// checkMail delivers the outbox through a real SMTP server and reads what
// each recipient got, in their language.
func checkMail(t *testing.T, f *prioWeb) {
	t.Helper()
	srv := smtptest.Start(t, smtptest.Options{})
	m, err := mail.New(mail.Settings{Host: "127.0.0.1", Port: srv.Port, From: "gpubook@example.org", TLS: mail.TLSNone, Timeout: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := mail.NewOutbox(mail.OutboxConfig{Store: f.env.DB, Sender: m, Clock: clockwork.NewFakeClockAt(time.Now().Add(time.Minute)),
		Owner: jobs.NewOwner(), Jitter: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.DeliverOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[string]*smtptest.Parsed{}
	for _, msg := range srv.Wait(4, 5*time.Second) {
		p, err := smtptest.Parse(msg.Data)
		if err != nil {
			t.Fatal(err)
		}
		got[msg.To[0]+" "+p.Subject] = p
	}
	want := []struct{ key, text, html string }{
		{"carol@example.org Priority request #1 from Bob Builder", "NeurIPS rebuttal", "deadline tomorrow"},
		{"dan@example.org Priority request #1 from Bob Builder", "3 ablations", "13:00 today"},
		{"bob@example.org Your priority request #1 was approved", "ok, hand back at 13:00", "approved"},
		{"erin@example.org 您在 node-a 上的预订为优先申请让路", "已移到同型号的另一块 GPU（GPU 2 → GPU 3），您没有任何损失", "NeurIPS rebuttal"},
	}
	for _, w := range want {
		p, ok := got[w.key]
		if !ok {
			t.Errorf("no email %q; got %v", w.key, keys(got))
			continue
		}
		if !strings.Contains(p.Parts["text/plain"], w.text) || !strings.Contains(p.Parts["text/html"], w.html) {
			t.Errorf("email %q: text %q\nhtml %q", w.key, p.Parts["text/plain"], p.Parts["text/html"])
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
