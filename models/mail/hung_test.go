package mail_test

import (
	"net"
	"strings"
	"sync"
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

// silentServer accepts connections and never says a word: an SMTP server
// that never greets. It returns the port.
func silentServer(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().(*net.TCPAddr).Port
}

// TestServerNeverGreets: a batch of 50 to a server that never greets
// costs one timeout, not 50: the first send fails the round, the other 49
// go back to the queue unattempted, and the server is left alone 30 s,
// then 60 s, while it keeps failing.
func TestServerNeverGreets(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		port := silentServer(t)
		clock := clockwork.NewFakeClockAt(t0)
		r := newOutbox(t, db, newMailer(t, port, func(s *mail.Settings) { s.Timeout = time.Second }), clock, nil)
		enqueue(t, db, 50, t0)
		start := time.Now()
		got := deliverDown(t, r)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("the round took %s, want about one timeout (1 s)", took)
		}
		if got.Claimed != 50 || got.Retry != 1 || got.Released != 49 || got.Sent+got.Unconfirmed+got.Failed != 0 {
			t.Errorf("round %+v", got)
		}
		if c := stats(t, db); c["pending"] != 50 {
			t.Errorf("counts %v", c)
		}
		var attempts int64
		if err := db.Gorm.Raw("SELECT COALESCE(SUM(attempts), 0) FROM outbox").Scan(&attempts).Error; err != nil || attempts != 1 {
			t.Errorf("attempts %d, %v; want 1", attempts, err)
		}
		for _, step := range []struct {
			advance time.Duration
			tried   bool
		}{{0, false}, {29 * time.Second, false}, {time.Second, true}, {59 * time.Second, false}, {time.Second, true}} {
			clock.Advance(step.advance)
			got := deliverDown(t, r)
			if tried := got.Claimed > 0; tried != step.tried {
				t.Errorf("%s later: round %+v, want tried %v", clock.Since(t0), got, step.tried)
			}
		}
	})
}

// TestRoundTimeout: a slow but working server does not hold a batch past
// the round's time: the rest is released, and the round is an error.
func TestRoundTimeout(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		srv := smtptest.Start(t, smtptest.Options{ReplyDelay: 300 * time.Millisecond})
		r := newOutbox(t, db, newMailer(t, srv.Port, nil), clockwork.NewFakeClockAt(t0),
			func(c *mail.OutboxConfig) { c.RoundTimeout = time.Second })
		enqueue(t, db, 20, t0)
		start := time.Now()
		got, err := r.DeliverOnce(ctx)
		if err == nil || !strings.Contains(err.Error(), "ran out") {
			t.Errorf("round error %v, want it ran out of time", err)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("the round took %s", took)
		}
		if got.Sent < 1 || got.Sent > 5 || got.Sent+got.Released != 20 || got.ServerDown {
			t.Errorf("round %+v", got)
		}
		if c := stats(t, db); c["pending"] != int64(got.Released) || c["sent"] != int64(got.Sent) {
			t.Errorf("counts %v after %+v", c, got)
		}
	})
}

// TestHangAfterData: a server that takes the first message and never
// answers leaves it unconfirmed and fails the round. With the admin's
// opt-in it is sent again once the resend time passed and the server has
// since sent other mail (a duplicate, accepted knowingly); without it,
// never.
func TestHangAfterData(t *testing.T) {
	for _, optIn := range []bool{false, true} {
		name := map[bool]string{false: "default", true: "opt-in"}[optIn]
		t.Run(name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				srv := smtptest.Start(t, smtptest.Options{HangAfterData: 3 * time.Second, HangAt: 1})
				clock := clockwork.NewFakeClockAt(t0)
				r := newOutbox(t, db, newMailer(t, srv.Port, func(s *mail.Settings) { s.Timeout = 300 * time.Millisecond }), clock,
					func(c *mail.OutboxConfig) {
						if optIn {
							c.ResendUnconfirmedAfter = time.Hour
						}
					})
				enqueue(t, db, 5, t0)
				if got := deliverDown(t, r); got.Unconfirmed != 1 || got.Released != 4 {
					t.Fatalf("round %+v", got)
				}
				// Past the resend time, but the server has not worked since:
				// nothing is resent; the other four go.
				clock.Advance(2 * time.Hour)
				if got := deliver(t, r); got.Resent != 0 || got.Sent != 4 {
					t.Fatalf("round after the back-off %+v", got)
				}
				clock.Advance(2 * time.Hour)
				want := map[bool]mail.Round{false: {}, true: {Resent: 1, Claimed: 1, Sent: 1}}[optIn]
				if got := deliver(t, r); got != want {
					t.Errorf("round %+v, want %+v", got, want)
				}
				first := "<" + models.MessageID("test:000") + ">"
				copies := 0
				for _, m := range srv.Wait(5, 5*time.Second) {
					if p, err := smtptest.Parse(m.Data); err == nil && p.Header.Get("Message-Id") == first {
						copies++
					}
				}
				wantCopies := map[bool]int{false: 1, true: 2}[optIn]
				if copies != wantCopies {
					t.Errorf("the hung message arrived %d times, want %d", copies, wantCopies)
				}
				wantStatus := map[bool]int64{false: 1, true: 0}[optIn]
				if c := stats(t, db); c["unconfirmed"] != wantStatus || c["sent"] != 5-wantStatus {
					t.Errorf("counts %v", c)
				}
			})
		})
	}
}

// TestRecipientRefusalIsNotTheServers: a 4xx for one recipient retries
// that message only; the server answered, so the rest of the batch goes.
func TestRecipientRefusalIsNotTheServers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		srv := smtptest.Start(t, smtptest.Options{Reject: func(rcpt string) error {
			if rcpt == "user0@example.org" {
				return &smtp.SMTPError{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 2, 2}, Message: "mailbox full"}
			}
			return nil
		}})
		r := newOutbox(t, db, newMailer(t, srv.Port, nil), clockwork.NewFakeClockAt(t0), nil)
		enqueue(t, db, 3, t0)
		if got := deliver(t, r); got.Retry != 1 || got.Sent != 2 || got.Released != 0 || got.ServerDown {
			t.Errorf("round %+v", got)
		}
	})
}
