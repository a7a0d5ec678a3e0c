package mail_test

import (
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/mail"
	"github.com/gpubook/gpubook/models/mail/smtptest"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestOutcomes: an unknown outcome is recorded unconfirmed and never
// resent; a 550 fails at once; a server that stays down fails the message
// after the last retry.
func TestOutcomes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("no reply after data", func(t *testing.T) {
			hang := smtptest.Start(t, smtptest.Options{HangAfterData: 3 * time.Second})
			m, _ := mail.New(mail.Settings{Host: "127.0.0.1", Port: hang.Port, From: "g@example.org", TLS: mail.TLSNone, Timeout: 300 * time.Millisecond}, nil)
			clock := clockwork.NewFakeClockAt(t0)
			r := newOutbox(t, db, m, clock, nil)
			enqueue(t, db, 1, t0)
			if got := deliverDown(t, r); got.Unconfirmed != 1 {
				t.Fatalf("round %+v", got)
			}
			clock.Advance(72 * time.Hour)
			if got := deliver(t, r); got.Claimed != 0 {
				t.Fatalf("resent: %+v", got)
			}
			if n := len(hang.Messages()); n != 1 {
				t.Errorf("server got %d copies", n)
			}
			dropAll(t, db)
		})
		t.Run("550 fails at once", func(t *testing.T) {
			srv := smtptest.Start(t, smtptest.Options{Reject: func(string) error {
				return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
			}})
			r := newOutbox(t, db, newMailer(t, srv.Port, nil), clockwork.NewFakeClockAt(t0), nil)
			enqueue(t, db, 1, t0)
			if got := deliver(t, r); got.Failed != 1 {
				t.Fatalf("round %+v", got)
			}
			msg := only(t, db)
			if msg.Status != models.OutboxFailed || msg.Attempts != 1 || !strings.Contains(msg.LastError, "no such user") {
				t.Errorf("row %+v", msg)
			}
			dropAll(t, db)
		})
		t.Run("down for good", func(t *testing.T) {
			_, port := smtptest.FreeAddr(t)
			clock := clockwork.NewFakeClockAt(t0)
			r := newOutbox(t, db, newMailer(t, port, nil), clock, func(c *mail.OutboxConfig) {
				c.Policy = models.OutboxPolicy{MaxAttempts: 3, BaseDelay: time.Minute, MaxDelay: time.Hour}
			})
			enqueue(t, db, 1, t0)
			var rounds []mail.Round
			for range 5 {
				round, _ := r.DeliverOnce(ctx) // an error while the server is down
				rounds = append(rounds, round)
				clock.Advance(time.Hour)
			}
			if rounds[0].Retry != 1 || rounds[1].Retry != 1 || rounds[2].Failed != 1 || rounds[3].Claimed != 0 {
				t.Errorf("rounds %+v", rounds)
			}
			if msg := only(t, db); msg.Status != models.OutboxFailed || msg.Attempts != 3 {
				t.Errorf("row %+v", msg)
			}
			dropAll(t, db)
		})
	})
}

func only(t *testing.T, db *store.DB) *models.OutboxMessage {
	t.Helper()
	var id int64
	if err := db.Gorm.Raw("SELECT id FROM outbox").Scan(&id).Error; err != nil {
		t.Fatal(err)
	}
	m, err := db.OutboxMessage(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func dropAll(t *testing.T, db *store.DB) {
	t.Helper()
	if err := db.Gorm.Exec("DELETE FROM outbox").Error; err != nil {
		t.Fatal(err)
	}
}
