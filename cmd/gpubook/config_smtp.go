package main

import (
	"fmt"
	netmail "net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models/mail"
)

// SMTPSettings is the outgoing mail part of the configuration (env only:
// it is set once per deployment and holds a secret). Without a host, mail
// is still queued in the outbox and waits until SMTP is configured.
type SMTPSettings struct {
	mail.Settings
	// ResendUnconfirmedAfter is GPUBOOK_SMTP_RESEND_UNCONFIRMED_AFTER: the
	// admin's opt-in to send unconfirmed mail again (a possible duplicate)
	// this long after, once the server has since worked. Zero: never.
	ResendUnconfirmedAfter time.Duration
}

// Enabled reports whether an SMTP server is configured.
func (s SMTPSettings) Enabled() bool { return s.Host != "" }

// resolveSMTP reads GPUBOOK_SMTP_*; every bad value is one line naming its variable.
func resolveSMTP(getenv func(string) string, cfg *Config) error {
	s := &cfg.SMTP.Settings
	s.Host = strings.TrimSpace(getenv("GPUBOOK_SMTP_HOST"))
	if s.Host == "" {
		return nil
	}
	if strings.ContainsAny(s.Host, " /:") {
		return fmt.Errorf("GPUBOOK_SMTP_HOST: %q is not a host name (give the port in GPUBOOK_SMTP_PORT)", s.Host)
	}
	if err := resolveSMTPTLS(getenv, s); err != nil {
		return err
	}
	from := strings.TrimSpace(getenv("GPUBOOK_SMTP_FROM"))
	if from == "" {
		return fmt.Errorf("GPUBOOK_SMTP_FROM: required when GPUBOOK_SMTP_HOST is set (e.g. \"gpubook <gpubook@example.org>\")")
	}
	if a, err := netmail.ParseAddress(from); err != nil || !strings.Contains(a.Address, "@") {
		return fmt.Errorf("GPUBOOK_SMTP_FROM: %q is not an email address (e.g. \"gpubook <gpubook@example.org>\")", from)
	}
	s.From = from
	if err := resolveSMTPAuth(getenv, s); err != nil {
		return err
	}
	timeout, err := smtpTimeout(getenv("GPUBOOK_SMTP_TIMEOUT"))
	if err != nil {
		return err
	}
	s.Timeout = timeout
	raw := strings.TrimSpace(getenv("GPUBOOK_SMTP_RESEND_UNCONFIRMED_AFTER"))
	if raw != "" && raw != "0" {
		d, err := time.ParseDuration(raw)
		if err != nil || d < 10*time.Minute {
			return fmt.Errorf("GPUBOOK_SMTP_RESEND_UNCONFIRMED_AFTER: %q is not a duration of at least 10m (e.g. 6h), or 0 for never", raw)
		}
		cfg.SMTP.ResendUnconfirmedAfter = d
	}
	return nil
}

// resolveSMTPTLS reads the TLS mode and the port, whose default follows it:
// 465 for implicit TLS, else 587 (submission).
func resolveSMTPTLS(getenv func(string) string, s *mail.Settings) error {
	mode := strings.ToLower(strings.TrimSpace(getenv("GPUBOOK_SMTP_TLS")))
	switch mode {
	case "":
		mode = mail.TLSStartTLS
	case mail.TLSStartTLS, mail.TLSImplicit, mail.TLSNone:
	default:
		return fmt.Errorf("GPUBOOK_SMTP_TLS: %q is not one of starttls, tls, none", mode)
	}
	s.TLS, s.Port = mode, 587
	if mode == mail.TLSImplicit {
		s.Port = 465
	}
	if raw := strings.TrimSpace(getenv("GPUBOOK_SMTP_PORT")); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("GPUBOOK_SMTP_PORT: %q is not a port (1-65535)", raw)
		}
		s.Port = n
	}
	return nil
}

func resolveSMTPAuth(getenv func(string) string, s *mail.Settings) error {
	s.Username = strings.TrimSpace(getenv("GPUBOOK_SMTP_USERNAME"))
	pass, from, err := secretEnv(getenv, "GPUBOOK_SMTP_PASSWORD")
	if err != nil {
		return err
	}
	switch {
	case s.Username != "" && pass == "":
		return fmt.Errorf("GPUBOOK_SMTP_PASSWORD: required when GPUBOOK_SMTP_USERNAME is set (or use GPUBOOK_SMTP_PASSWORD_FILE)")
	case s.Username == "" && pass != "":
		return fmt.Errorf("%s: set, but GPUBOOK_SMTP_USERNAME is empty", from)
	}
	s.Password = pass
	return nil
}

// smtpTimeout parses GPUBOOK_SMTP_TIMEOUT: a Go duration or whole seconds.
func smtpTimeout(raw string) (time.Duration, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return 10 * time.Second, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil {
		if n, nerr := strconv.Atoi(raw); nerr == nil {
			d, err = time.Duration(n)*time.Second, nil
		}
	}
	if err != nil || d < time.Second || d > 5*time.Minute {
		return 0, fmt.Errorf("GPUBOOK_SMTP_TIMEOUT: %q is not a duration between 1s and 5m (e.g. 10s)", raw)
	}
	return d, nil
}
