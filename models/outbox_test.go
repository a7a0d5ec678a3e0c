package models

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestOutboxPolicyNextAttempt(t *testing.T) {
	now := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	p := DefaultOutboxPolicy
	tests := []struct {
		attempts int
		jitter   float64
		want     time.Duration
	}{
		{1, 0.5, 2 * time.Minute},
		{2, 0.5, 4 * time.Minute},
		{3, 0.5, 8 * time.Minute},
		{9, 0.5, 512 * time.Minute},
		{10, 0.5, 12 * time.Hour},
		{11, 0.5, 12 * time.Hour},
		{3, 0, 8 * time.Minute * 8 / 10},
		{3, 0.75, 8 * time.Minute * 11 / 10},
	}
	for _, tt := range tests {
		got := p.NextAttempt(now, tt.attempts, tt.jitter).Sub(now)
		if diff := got - tt.want; diff < -time.Millisecond || diff > time.Millisecond {
			t.Errorf("attempts %d jitter %v: delay %v, want %v", tt.attempts, tt.jitter, got, tt.want)
		}
	}
	if got := p.NextAttempt(now, 12, 0.5); !got.IsZero() {
		t.Errorf("after the last attempt: %v, want zero (give up)", got)
	}
	// The whole schedule spans about two days, so a weekend outage loses nothing.
	var total time.Duration
	for a := 1; a < p.MaxAttempts; a++ {
		total += p.NextAttempt(now, a, 0.5).Sub(now)
	}
	if total < 36*time.Hour || total > 60*time.Hour {
		t.Errorf("total retry span %v, want about two days", total)
	}
}

func TestOutboxMessageValidate(t *testing.T) {
	ok := OutboxMessage{Kind: "test", DedupKey: "test:1", ToEmail: " a@example.org ", Subject: "Hi", TextBody: "Hello"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid message: %v", err)
	}
	if ok.ToEmail != "a@example.org" || ok.Lang != "en" {
		t.Errorf("normalised: email %q lang %q", ok.ToEmail, ok.Lang)
	}
	tests := map[string]func(m *OutboxMessage){
		"kind":      func(m *OutboxMessage) { m.Kind = "" },
		"dedup_key": func(m *OutboxMessage) { m.DedupKey = strings.Repeat("x", 401) },
		"to_email":  func(m *OutboxMessage) { m.ToEmail = "Ada <a@example.org>" },
		"subject":   func(m *OutboxMessage) { m.Subject = "Hi\r\nBcc: x@example.org" },
		"body":      func(m *OutboxMessage) { m.TextBody = "" },
	}
	for field, breakIt := range tests {
		t.Run(field, func(t *testing.T) {
			m := ok
			breakIt(&m)
			e := AsError(m.Validate())
			if e.Code != EINVALID || e.Fields[field].Key == "" {
				t.Errorf("got %v, want EINVALID on %s", e, field)
			}
		})
	}
}

func TestMessageIDIsStableAndDistinct(t *testing.T) {
	a, b := MessageID("report:2026-W49:user:17"), MessageID("report:2026-W49:user:18")
	if a != MessageID("report:2026-W49:user:17") || a == b {
		t.Errorf("ids %q %q", a, b)
	}
	if !strings.HasSuffix(a, "@gpubook") || len(a) != 32+len("@gpubook") {
		t.Errorf("id %q", a)
	}
}

func TestDeliveryOutcome(t *testing.T) {
	base := errors.New("boom")
	for _, o := range []string{DeliveryRetry, DeliveryReject, DeliveryUnknown} {
		err := errors.Join(errors.New("wrapped"), &DeliveryError{Outcome: o, Err: base})
		if got := DeliveryOutcome(err); got != o {
			t.Errorf("outcome %q: got %q", o, got)
		}
		if !errors.Is(err, base) {
			t.Errorf("outcome %q loses its cause", o)
		}
	}
	if got := DeliveryOutcome(base); got != DeliveryRetry {
		t.Errorf("unclassified: %q, want retry", got)
	}
}
