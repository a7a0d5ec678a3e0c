package main

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/mail/smtptest"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// gpubookEnv runs the command line with extra environment variables.
func gpubookEnv(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut syncBuffer
	err = run(ctx, append([]string{"gpubook"}, args...), envOf(env), &out, &errOut)
	return out.String(), errOut.String(), err
}

func smtpEnv(url string, port int) map[string]string {
	return map[string]string{
		"GPUBOOK_DATABASE_URL": url, "GPUBOOK_TIMEZONE": "Asia/Shanghai", "GPUBOOK_BASE_URL": "https://gpubook.example.org",
		"GPUBOOK_SMTP_HOST": "127.0.0.1", "GPUBOOK_SMTP_PORT": strconv.Itoa(port), "GPUBOOK_SMTP_TLS": "none",
		"GPUBOOK_SMTP_FROM": "gpubook <gpubook@example.org>", "GPUBOOK_SMTP_TIMEOUT": "2s",
		"GPUBOOK_SMTP_USERNAME": "relay", "GPUBOOK_SMTP_PASSWORD": "s3cret",
	}
}

func TestMailTestAgainstARealSMTPServer(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.SQLite)
	srv := smtptest.Start(t, smtptest.Options{Username: "relay", Password: "s3cret"})
	env := smtpEnv(url, srv.Port)
	mustGpubook(t, url, "user", "add", "--email", "li@example.org", "--name", "Li Lei", "--language", "zh-CN")

	out, errOut, err := gpubookEnv(t, env, "mail", "test", "--to", "ada@example.org", "--now")
	if err != nil || !strings.Contains(out, "sent test email #1 to ada@example.org via 127.0.0.1:"+strconv.Itoa(srv.Port)) {
		t.Fatalf("mail test --now: %q, %v\n%s", out, err, errOut)
	}
	if out, _, err = gpubookEnv(t, env, "mail", "test", "--to", "li@example.org", "--now"); err != nil {
		t.Fatalf("zh-CN user: %q, %v", out, err)
	}
	got := srv.Wait(2, 5*time.Second)
	if len(got) != 2 {
		t.Fatalf("server received %d messages", len(got))
	}
	wants := []struct{ subject, text string }{
		{"gpubook test email", "Hello,"},
		{"gpubook 测试邮件", "Li Lei，您好："},
	}
	for i, w := range wants {
		p, err := smtptest.Parse(got[i].Data)
		if err != nil {
			t.Fatal(err)
		}
		if p.Subject != w.subject || !strings.Contains(p.Parts["text/plain"], w.text) || p.Parts["text/html"] == "" ||
			!strings.Contains(p.Parts["text/plain"], "https://gpubook.example.org/profile#email") {
			t.Errorf("message %d: subject %q, parts %v", i, p.Subject, p.Parts)
		}
	}
	out, _, err = gpubookEnv(t, env, "mail", "test", "--to", "queued@example.org")
	if err != nil || !strings.Contains(out, "queued test email #3") {
		t.Fatalf("mail test without --now: %q, %v", out, err)
	}
	out, _, err = gpubookEnv(t, env, "mail", "status")
	if err != nil || !regexpLine(out, "pending", "1") || !regexpLine(out, "sent", "2") || !regexpLine(out, "unconfirmed", "0") {
		t.Errorf("mail status:\n%s (%v)", out, err)
	}
}

// regexpLine reports whether out has a row starting with status and count.
func regexpLine(out, status, count string) bool {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == status && f[1] == count {
			return true
		}
	}
	return false
}

func TestMailTestServerDown(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.SQLite)
	_, port := smtptest.FreeAddr(t)
	_, _, err := gpubookEnv(t, smtpEnv(url, port), "mail", "test", "--to", "ada@example.org", "--now")
	if err == nil || !strings.Contains(err.Error(), "(retry)") || !strings.Contains(err.Error(), "retries it at") {
		t.Fatalf("server down: %v", err)
	}
	out, _, _ := gpubookEnv(t, smtpEnv(url, port), "mail", "status")
	if !regexpLine(out, "pending", "1") {
		t.Errorf("status after a failed send:\n%s", out)
	}
	noSMTP := map[string]string{"GPUBOOK_DATABASE_URL": url}
	if _, _, err := gpubookEnv(t, noSMTP, "mail", "test", "--to", "ada@example.org", "--now"); err == nil || !strings.Contains(err.Error(), "GPUBOOK_SMTP_HOST") {
		t.Errorf("--now without SMTP: %v", err)
	}
	if _, _, err := gpubookEnv(t, noSMTP, "mail", "test", "--to", "not an address"); err == nil || !strings.Contains(err.Error(), "--to") {
		t.Errorf("bad --to: %v", err)
	}
}

func TestBadSMTPSettingsNameTheVariable(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(secret, []byte("from-file\n"), 0o600)
	tests := map[string]map[string]string{
		"GPUBOOK_SMTP_FROM: required":                {"GPUBOOK_SMTP_HOST": "smtp.example.org"},
		"GPUBOOK_SMTP_FROM: \"nobody\"":              {"GPUBOOK_SMTP_HOST": "smtp.example.org", "GPUBOOK_SMTP_FROM": "nobody"},
		"GPUBOOK_SMTP_PORT: \"70000\"":               {"GPUBOOK_SMTP_HOST": "smtp.example.org", "GPUBOOK_SMTP_FROM": "a@example.org", "GPUBOOK_SMTP_PORT": "70000"},
		"GPUBOOK_SMTP_TLS: \"ssl\"":                  {"GPUBOOK_SMTP_HOST": "smtp.example.org", "GPUBOOK_SMTP_FROM": "a@example.org", "GPUBOOK_SMTP_TLS": "ssl"},
		"GPUBOOK_SMTP_TIMEOUT: \"0s\"":               {"GPUBOOK_SMTP_HOST": "smtp.example.org", "GPUBOOK_SMTP_FROM": "a@example.org", "GPUBOOK_SMTP_TIMEOUT": "0s"},
		"GPUBOOK_SMTP_HOST: \"smtp.example.org:25\"": {"GPUBOOK_SMTP_HOST": "smtp.example.org:25"},
		"GPUBOOK_SMTP_RESEND_UNCONFIRMED_AFTER: \"1m\"": {"GPUBOOK_SMTP_HOST": "smtp.example.org", "GPUBOOK_SMTP_FROM": "a@example.org",
			"GPUBOOK_SMTP_RESEND_UNCONFIRMED_AFTER": "1m"},
		"GPUBOOK_SMTP_PASSWORD: required": {"GPUBOOK_SMTP_HOST": "smtp.example.org", "GPUBOOK_SMTP_FROM": "a@example.org", "GPUBOOK_SMTP_USERNAME": "u"},
		"GPUBOOK_SMTP_PASSWORD and GPUBOOK_SMTP_PASSWORD_FILE are both set": {"GPUBOOK_SMTP_HOST": "smtp.example.org", "GPUBOOK_SMTP_FROM": "a@example.org",
			"GPUBOOK_SMTP_USERNAME": "u", "GPUBOOK_SMTP_PASSWORD": "p", "GPUBOOK_SMTP_PASSWORD_FILE": secret},
	}
	for want, env := range tests {
		t.Run(want, func(t *testing.T) {
			env["GPUBOOK_DATABASE_URL"] = "sqlite:" + filepath.Join(t.TempDir(), "g.db")
			_, _, err := gpubookEnv(t, env, "mail", "status")
			if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want one line starting %q", err, want)
			}
		})
	}
}

func TestSMTPSettingsDefaultsAndFile(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(secret, []byte("from-file\n"), 0o600)
	cfg, err := parseConfig(envOf(map[string]string{"GPUBOOK_SMTP_HOST": "smtp.example.org", "GPUBOOK_SMTP_FROM": "gpubook <g@example.org>",
		"GPUBOOK_SMTP_USERNAME": "u", "GPUBOOK_SMTP_PASSWORD_FILE": secret}), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.SMTP
	if !s.Enabled() || s.Port != 587 || s.TLS != "starttls" || s.Timeout != 10*time.Second || s.Password != "from-file" || s.Username != "u" ||
		s.ResendUnconfirmedAfter != 0 {
		t.Errorf("settings %+v", s)
	}
	cfg, err = parseConfig(envOf(map[string]string{"GPUBOOK_SMTP_HOST": "smtp.example.org", "GPUBOOK_SMTP_FROM": "g@example.org",
		"GPUBOOK_SMTP_RESEND_UNCONFIRMED_AFTER": "6h"}), nil)
	if err != nil || cfg.SMTP.ResendUnconfirmedAfter != 6*time.Hour {
		t.Errorf("resend after: %v, %v; want 6h", cfg.SMTP.ResendUnconfirmedAfter, err)
	}
	cfg, _ = parseConfig(envOf(map[string]string{"GPUBOOK_SMTP_HOST": "smtp.example.org", "GPUBOOK_SMTP_FROM": "g@example.org", "GPUBOOK_SMTP_TLS": "tls"}), nil)
	if cfg.SMTP.Port != 465 {
		t.Errorf("implicit TLS port %d, want 465", cfg.SMTP.Port)
	}
	if cfg, _ := parseConfig(envOf(nil), nil); cfg.SMTP.Enabled() {
		t.Error("SMTP on without a host")
	}
}

// TestServeRunsTheOutboxWorker: serve sends queued mail in the background
// and stops its jobs with the server.
func TestServeRunsTheOutboxWorker(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.SQLite)
	srv := smtptest.Start(t, smtptest.Options{Username: "relay", Password: "s3cret"})
	env := smtpEnv(url, srv.Port)
	if _, _, err := gpubookEnv(t, env, "mail", "test", "--to", "ada@example.org"); err != nil {
		t.Fatal(err)
	}
	env["GPUBOOK_LISTEN"] = "127.0.0.1:0"
	sctx, cancel := context.WithCancel(ctx)
	ready := make(chan net.Addr, 1)
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() { done <- runWith(sctx, []string{"gpubook", "serve"}, envOf(env), &out, &errOut, ready) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("serve: %v\n%s", err, errOut.String())
	}
	if got := srv.Wait(1, 10*time.Second); len(got) != 1 {
		t.Errorf("server received %d messages while serving\n%s", len(got), errOut.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve returned %v", err)
	}
	if !strings.Contains(errOut.String(), "background jobs stopped") {
		t.Errorf("jobs not stopped:\n%s", errOut.String())
	}
}

// TestMailRequeue: unconfirmed mail goes back to pending only when the
// operator asks, by ID or all at once, and each re-queue is audited.
func TestMailRequeue(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.SQLite)
	db := storetest.OpenURL(t, url)
	if _, err := db.MigrateUp(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range 3 {
		m := models.OutboxMessage{Kind: "test", DedupKey: "requeue:" + strconv.Itoa(i), ToEmail: "ada@example.org", Subject: "s", TextBody: "t"}
		if _, err := db.EnqueueMail(ctx, m); err != nil {
			t.Fatal(err)
		}
		got, err := db.ClaimMail(ctx, "dead", 1, time.Minute)
		if err != nil || len(got) != 1 {
			t.Fatalf("claim: %v, %v", got, err)
		}
		if err := db.StartAttempt(ctx, got[0].ID, "dead", 0); err != nil {
			t.Fatal(err)
		}
		if err := db.MarkUnconfirmed(ctx, got[0].ID, "dead", errors.New("connection reset after DATA")); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got[0].ID)
	}
	env := map[string]string{"GPUBOOK_DATABASE_URL": url}
	if _, _, err := gpubookEnv(t, env, "mail", "requeue"); err == nil || !strings.Contains(err.Error(), "give message IDs or --all-unconfirmed") {
		t.Errorf("no arguments: %v", err)
	}
	if _, _, err := gpubookEnv(t, env, "mail", "requeue", "abc"); err == nil || !strings.Contains(err.Error(), `"abc" is not a message ID`) {
		t.Errorf("bad id: %v", err)
	}
	out, _, err := gpubookEnv(t, env, "mail", "requeue", strconv.FormatInt(ids[0], 10))
	if err != nil || !strings.Contains(out, "queued 1 unconfirmed message(s) again") {
		t.Fatalf("requeue one: %q, %v", out, err)
	}
	if m, _ := db.OutboxMessage(ctx, ids[0]); m == nil || m.Status != models.OutboxPending {
		t.Errorf("after requeue: %+v", m)
	}
	if _, _, err := gpubookEnv(t, env, "mail", "requeue", strconv.FormatInt(ids[0], 10)); err == nil {
		t.Error("re-queued a message that is no longer unconfirmed")
	}
	out, _, err = gpubookEnv(t, env, "mail", "requeue", "--all-unconfirmed")
	if err != nil || !strings.Contains(out, "queued 2 unconfirmed message(s) again") {
		t.Fatalf("requeue all: %q, %v", out, err)
	}
	ev, err := db.AuditEvents(ctx, models.AuditFilter{Action: models.AuditMailRequeue})
	if err != nil || len(ev) != 3 || ev[0].ActorLabel != "cli" {
		t.Errorf("audit: %+v, %v", ev, err)
	}
}
