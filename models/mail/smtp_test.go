package mail_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/mail"
	"github.com/gpubook/gpubook/models/mail/smtptest"
	"github.com/gpubook/gpubook/views"
	"github.com/gpubook/gpubook/views/i18n"
)

var ctx = context.Background()

func newMailer(t *testing.T, port int, mod func(*mail.Settings)) *mail.Mailer {
	t.Helper()
	s := mail.Settings{Host: "127.0.0.1", Port: port, From: "gpubook <gpubook@example.org>", TLS: mail.TLSNone, Timeout: 2 * time.Second}
	if mod != nil {
		mod(&s)
	}
	m, err := mail.New(s, func() time.Time { return time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func rendered(t *testing.T, lang string) models.OutboxMessage {
	t.Helper()
	env := views.EmailEnv{T: i18n.MustLoad().For(lang), BaseURL: "https://gpubook.example.org", Location: time.UTC, Name: "Ada"}
	u := &models.User{ID: 17, Email: "ada@example.org"}
	m, err := views.EmailMessage(env, "test", "test:"+lang, u, views.TestEmail{SentAt: time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSendMultipartInBothLanguages(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{Username: "relay", Password: "s3cret"})
	m := newMailer(t, srv.Port, func(s *mail.Settings) { s.Username, s.Password = "relay", "s3cret" })
	tests := []struct{ lang, subject, text, html string }{
		{"en", "gpubook test email", "Mail delivery works", "Hello Ada,"},
		{"zh-CN", "gpubook 测试邮件", "邮件发送正常", "Ada，您好："},
	}
	for i, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			msg := rendered(t, tt.lang)
			if err := m.Send(ctx, msg); err != nil {
				t.Fatalf("send: %v", err)
			}
			got := srv.Wait(i+1, 5*time.Second)
			if len(got) != i+1 {
				t.Fatalf("server has %d messages", len(got))
			}
			rec := got[i]
			if rec.From != "gpubook@example.org" || len(rec.To) != 1 || rec.To[0] != "ada@example.org" {
				t.Errorf("envelope from %q to %v", rec.From, rec.To)
			}
			p, err := smtptest.Parse(rec.Data)
			if err != nil {
				t.Fatal(err)
			}
			h := p.Header
			wantHeaders := map[string]string{
				"Message-Id":       "<" + models.MessageID("test:"+tt.lang) + ">",
				"Auto-Submitted":   "auto-generated",
				"List-Unsubscribe": "<https://gpubook.example.org/profile#email>",
				"Content-Language": tt.lang,
				"To":               "<ada@example.org>",
				"From":             `"gpubook" <gpubook@example.org>`,
				"Date":             "Mon, 07 Dec 2026 08:00:00 +0000",
			}
			for k, v := range wantHeaders {
				if got := h.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if p.Subject != tt.subject || p.TopType != "multipart/alternative" {
				t.Errorf("subject %q, type %q", p.Subject, p.TopType)
			}
			if !strings.Contains(p.Parts["text/plain"], tt.text) || strings.Contains(p.Parts["text/plain"], "<") {
				t.Errorf("text part:\n%s", p.Parts["text/plain"])
			}
			if !strings.Contains(p.Parts["text/html"], tt.html) || !strings.Contains(p.Parts["text/html"], "<table") {
				t.Errorf("html part:\n%s", p.Parts["text/html"])
			}
		})
	}
}

func TestSendFailuresAreClassified(t *testing.T) {
	reject := smtptest.Start(t, smtptest.Options{Reject: func(rcpt string) error {
		if strings.HasPrefix(rcpt, "full") {
			return &smtp.SMTPError{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 2, 2}, Message: "mailbox full"}
		}
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}})
	hang := smtptest.Start(t, smtptest.Options{HangAfterData: 3 * time.Second})
	auth := smtptest.Start(t, smtptest.Options{Username: "relay", Password: "right"})
	_, downPort := smtptest.FreeAddr(t)
	full := rendered(t, "en")
	full.ToEmail = "full@example.org"
	tests := []struct {
		name string
		m    *mail.Mailer
		msg  models.OutboxMessage
		want string
	}{
		{"server down", newMailer(t, downPort, nil), rendered(t, "en"), models.DeliveryRetry},
		{"unknown recipient 550", newMailer(t, reject.Port, nil), rendered(t, "en"), models.DeliveryReject},
		{"mailbox full 452", newMailer(t, reject.Port, nil), full, models.DeliveryRetry},
		{"bad password", newMailer(t, auth.Port, func(s *mail.Settings) { s.Username, s.Password = "relay", "wrong" }), rendered(t, "en"), models.DeliveryRetry},
		{"no reply after data", newMailer(t, hang.Port, func(s *mail.Settings) { s.Timeout = 500 * time.Millisecond }), rendered(t, "en"), models.DeliveryUnknown},
		{"starttls refused by a plain server", newMailer(t, reject.Port, func(s *mail.Settings) { s.TLS = mail.TLSStartTLS }), rendered(t, "en"), models.DeliveryRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.m.Send(ctx, tt.msg)
			if err == nil {
				t.Fatal("send succeeded")
			}
			if got := models.DeliveryOutcome(err); got != tt.want {
				t.Errorf("outcome %q, want %q (%v)", got, tt.want, err)
			}
		})
	}
	if n := len(hang.Messages()); n != 1 {
		t.Errorf("hanging server recorded %d messages, want 1", n)
	}
	if n := len(reject.Messages()); n != 0 {
		t.Errorf("rejecting server recorded %d messages", n)
	}
}

func TestNewRefusesBadSettings(t *testing.T) {
	for name, s := range map[string]mail.Settings{
		"no host": {From: "a@example.org"},
		"no from": {Host: "smtp.example.org"},
		"bad tls": {Host: "smtp.example.org", From: "a@example.org", TLS: "ssl3"},
	} {
		if _, err := mail.New(s, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
