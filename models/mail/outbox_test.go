package mail_test

import (
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/mail"
	"github.com/gpubook/gpubook/models/mail/smtptest"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestOutboxOutage: the SMTP server is down while 20 messages wait; the
// first refused connection fails the round and backs off the server, the
// other 19 go back to the queue unattempted; the server comes up on the
// same port; after the back-off every message arrives exactly once.
func TestOutboxOutage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		addr, port := smtptest.FreeAddr(t)
		clock := clockwork.NewFakeClockAt(t0)
		r := newOutbox(t, db, newMailer(t, port, nil), clock, nil)
		enqueue(t, db, 20, t0)
		if got := deliverDown(t, r); got.Claimed != 20 || got.Retry != 1 || got.Released != 19 || got.Sent != 0 {
			t.Fatalf("round while down: %+v", got)
		}
		if c := stats(t, db); c["pending"] != 20 {
			t.Fatalf("after the failed round: %v", c)
		}
		srv := smtptest.StartOn(t, addr, smtptest.Options{})
		if got := deliverDown(t, r); got.Claimed != 0 {
			t.Fatalf("retried before the backoff: %+v", got)
		}
		clock.Advance(2 * time.Minute) // the first retry is due after 2 min (jitter 0.5)
		if got := deliver(t, r); got.Sent != 20 {
			t.Fatalf("round after the outage: %+v", got)
		}
		clock.Advance(72 * time.Hour)
		if got := deliver(t, r); got.Claimed != 0 {
			t.Fatalf("a later round claimed %+v", got)
		}
		exactlyOnce(t, srv, 20)
		if c := stats(t, db); c["sent"] != 20 {
			t.Errorf("counts %v", c)
		}
	})
}

// TestTwoRunnersSendConcurrently: two runners (two processes) on their own
// database handles drain one outbox at once; each message arrives once.
func TestTwoRunnersSendConcurrently(t *testing.T) {
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			url := storetest.MigratedURL(t, dialect)
			dbs := [2]*store.DB{storetest.OpenURL(t, url), storetest.OpenURL(t, url)}
			// Each message's answer takes 10 ms, so that a round (4 messages)
			// lasts long enough for the other runner to claim beside it even
			// on a busy machine, where one runner could otherwise drain all
			// 60 before the other's goroutine ran; both start together.
			srv := smtptest.Start(t, smtptest.Options{ReplyDelay: 10 * time.Millisecond})
			enqueue(t, dbs[0], 60, t0)
			clock := clockwork.NewFakeClockAt(t0)
			var wg sync.WaitGroup
			sent := [2]int{}
			start := make(chan struct{})
			for i, db := range dbs {
				r := newOutbox(t, db, newMailer(t, srv.Port, nil), clock, func(c *mail.OutboxConfig) { c.Batch = 4 })
				wg.Go(func() {
					<-start
					for {
						round, err := r.DeliverOnce(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						if round.Claimed == 0 {
							return
						}
						sent[i] += round.Sent
					}
				})
			}
			close(start)
			wg.Wait()
			exactlyOnce(t, srv, 60)
			if sent[0]+sent[1] != 60 || sent[0] == 0 || sent[1] == 0 {
				t.Errorf("sent per runner %v; want 60 in all, shared", sent)
			}
		})
	}
}

// TestCrashBetweenSendAndRecord: a worker claims and sends, then dies
// before recording. After its lease the message is unconfirmed and not
// resent; the server has it exactly once.
func TestCrashBetweenSendAndRecord(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		srv := smtptest.Start(t, smtptest.Options{})
		enqueue(t, db, 1, t0)
		db.Clock = func() time.Time { return t0 }
		claimed, err := db.ClaimMail(ctx, "dead-process", 10, 10*time.Minute)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claim: %v, %v", claimed, err)
		}
		if err := db.StartAttempt(ctx, claimed[0].ID, "dead-process", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := newMailer(t, srv.Port, nil).Send(ctx, claimed[0]); err != nil {
			t.Fatal(err)
		}
		// … and the process dies here, before MarkSent.
		clock := clockwork.NewFakeClockAt(t0.Add(5 * time.Minute))
		r := newOutbox(t, db, newMailer(t, srv.Port, nil), clock, nil)
		if got := deliver(t, r); got.Recovered != 0 || got.Claimed != 0 {
			t.Fatalf("within the dead worker's lease: %+v", got)
		}
		clock.Advance(6 * time.Minute)
		if got := deliver(t, r); got.Recovered != 1 || got.Claimed != 0 {
			t.Fatalf("after the lease: %+v", got)
		}
		clock.Advance(72 * time.Hour)
		deliver(t, r)
		if m, _ := db.OutboxMessage(ctx, claimed[0].ID); m.Status != models.OutboxUnconfirmed {
			t.Errorf("status %q, want unconfirmed", m.Status)
		}
		exactlyOnce(t, srv, 1)
	})
}
