package mail_test

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/mail"
	"github.com/gpubook/gpubook/models/mail/smtptest"
	"github.com/gpubook/gpubook/models/store"
)

var t0 = time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newOutbox builds an outbox worker on db; mod may change its settings.
func newOutbox(t *testing.T, db *store.DB, sender mail.Sender, clock clockwork.Clock, mod func(*mail.OutboxConfig)) *mail.Outbox {
	t.Helper()
	db.Clock = clock.Now // the database's clock follows the test's
	cfg := mail.OutboxConfig{Store: db, Sender: sender, Clock: clock, Logger: quiet(), Owner: jobs.NewOwner(), Jitter: func() float64 { return 0.5 }}
	if mod != nil {
		mod(&cfg)
	}
	o, err := mail.NewOutbox(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// enqueue adds n messages due at at.
func enqueue(t *testing.T, db *store.DB, n int, at time.Time) {
	t.Helper()
	for i := range n {
		key := fmt.Sprintf("test:%03d", i)
		m := models.OutboxMessage{Kind: "test", DedupKey: key, ToEmail: fmt.Sprintf("user%d@example.org", i),
			Subject: "Subject " + key, TextBody: "Text " + key, HTMLBody: "<p>" + key + "</p>", NextAttemptAt: at, CreatedAt: at}
		if _, err := db.EnqueueMail(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
}

// exactlyOnce checks that the server got every one of n messages once.
func exactlyOnce(t *testing.T, srv *smtptest.Server, n int) {
	t.Helper()
	got := srv.Wait(n, 5*time.Second)
	seen := map[string]int{}
	for _, m := range got {
		p, err := smtptest.Parse(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		seen[p.Header.Get("Message-Id")]++
	}
	for i := range n {
		id := "<" + models.MessageID(fmt.Sprintf("test:%03d", i)) + ">"
		if seen[id] != 1 {
			t.Errorf("message test:%03d arrived %d times", i, seen[id])
		}
	}
	if len(got) != n {
		t.Errorf("server received %d messages, want %d", len(got), n)
	}
}

func stats(t *testing.T, db *store.DB) map[string]int64 {
	t.Helper()
	st, err := db.OutboxStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st.Counts
}

func deliver(t *testing.T, o *mail.Outbox) mail.Round {
	t.Helper()
	round, err := o.DeliverOnce(ctx)
	if err != nil {
		t.Fatalf("deliver: %v", err)
	}
	return round
}

// deliverDown is a round that must fail because the server did: the round
// is an error (the job runner reports it failed) and says ServerDown.
func deliverDown(t *testing.T, o *mail.Outbox) mail.Round {
	t.Helper()
	round, err := o.DeliverOnce(ctx)
	if err == nil || !round.ServerDown {
		t.Fatalf("deliver with the server failing: %+v, %v; want ServerDown and an error", round, err)
	}
	return round
}
