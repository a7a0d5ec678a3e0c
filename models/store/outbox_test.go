package store_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

var t0 = time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)

func mail(key string) models.OutboxMessage {
	return models.OutboxMessage{Kind: "test", DedupKey: key, ToEmail: "ada@example.org", Lang: "en",
		Subject: "Subject " + key, TextBody: "Text " + key, HTMLBody: "<p>" + key + "</p>", NextAttemptAt: t0, CreatedAt: t0}
}

func enqueue(t *testing.T, db *store.DB, n int) {
	t.Helper()
	for i := range n {
		if created, err := db.EnqueueMail(ctx, mail(fmt.Sprintf("test:%03d", i))); err != nil || !created {
			t.Fatalf("enqueue %d: %v, %v", i, created, err)
		}
	}
}

func TestEnqueueMailDedup(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1)
		m := mail("preempted:booking:42")
		m.ToUserID = &u.ID
		m.UnsubscribeURL = "https://gpubook.example.org/profile#email"
		created, err := db.EnqueueMail(ctx, m)
		if err != nil || !created {
			t.Fatalf("first enqueue: %v, %v", created, err)
		}
		m.Subject = "a different rendering"
		if created, err := db.EnqueueMail(ctx, m); err != nil || created {
			t.Fatalf("second enqueue: created %v, %v; want a no-op", created, err)
		}
		got, err := at(db, t0).ClaimMail(ctx, "w1", 10, time.Minute)
		if err != nil || len(got) != 1 {
			t.Fatalf("claim: %v, %v", got, err)
		}
		g := got[0]
		if g.Kind != "test" || g.DedupKey != m.DedupKey || g.ToUserID == nil || *g.ToUserID != u.ID || g.ToEmail != m.ToEmail ||
			g.Lang != "en" || g.Subject != "Subject preempted:booking:42" || g.TextBody != m.TextBody || g.HTMLBody != m.HTMLBody ||
			g.UnsubscribeURL != m.UnsubscribeURL || g.Status != models.OutboxSending || g.Attempts != 0 || g.AttemptStartedAt != nil ||
			g.LeaseOwner != "w1" || g.LeaseUntil == nil || !g.LeaseUntil.Equal(t0.Add(time.Minute)) || g.SentAt != nil ||
			!g.CreatedAt.Equal(t0) || !g.NextAttemptAt.Equal(t0) {
			t.Errorf("claimed %+v", g)
		}
		bad := mail("bad")
		bad.ToEmail = "not an address"
		if _, err := db.EnqueueMail(ctx, bad); models.ErrorCode(err) != models.EINVALID {
			t.Errorf("bad address: %v, want invalid", err)
		}
	})
}

func TestClaimMailOnlyDue(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		later := mail("later")
		later.NextAttemptAt = t0.Add(time.Hour)
		if _, err := db.EnqueueMail(ctx, later); err != nil {
			t.Fatal(err)
		}
		enqueue(t, db, 3)
		got, err := at(db, t0).ClaimMail(ctx, "w1", 2, time.Minute)
		if err != nil || len(got) != 2 || got[0].DedupKey != "test:000" || got[1].DedupKey != "test:001" {
			t.Fatalf("claim 2: %+v, %v", got, err)
		}
		got, _ = at(db, t0).ClaimMail(ctx, "w1", 10, time.Minute)
		if len(got) != 1 || got[0].DedupKey != "test:002" {
			t.Fatalf("claim rest: %+v", got)
		}
		if got, err := at(db, t0.Add(59*time.Minute)).ClaimMail(ctx, "w1", 10, time.Minute); err != nil || len(got) != 0 {
			t.Fatalf("claimed a message not yet due: %+v, %v", got, err)
		}
		if got, _ := at(db, t0.Add(time.Hour)).ClaimMail(ctx, "w1", 10, time.Minute); len(got) != 1 || got[0].DedupKey != "later" {
			t.Fatalf("due message: %+v", got)
		}
	})
}

// TestClaimMailConcurrent has two workers on their own database handles
// (their own connections) drain 200 messages: each is claimed exactly once.
func TestClaimMailConcurrent(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			url := storetest.MigratedURL(t, dialect)
			dbs := [2]*store.DB{at(storetest.OpenURL(t, url), t0), at(storetest.OpenURL(t, url), t0)}
			enqueue(t, dbs[0], 200)
			var mu sync.Mutex
			claims := map[int64][]string{}
			var wg sync.WaitGroup
			for w, db := range dbs {
				wg.Go(func() {
					owner := fmt.Sprintf("worker-%d", w)
					for {
						got, err := db.ClaimMail(ctx, owner, 7, time.Minute)
						if err != nil {
							t.Error(err)
							return
						}
						if len(got) == 0 {
							return
						}
						mu.Lock()
						for _, m := range got {
							claims[m.ID] = append(claims[m.ID], owner)
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if len(claims) != 200 {
				t.Errorf("%d messages claimed, want 200", len(claims))
			}
			for id, owners := range claims {
				if len(owners) != 1 {
					t.Errorf("message %d claimed by %v", id, owners)
				}
			}
		})
	}
}

func TestMarkFailedBackoffAndGiveUp(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		enqueue(t, db, 1)
		m := startOne(t, db, "w1", t0)
		if err := db.MarkFailed(ctx, m.ID, "w2", errors.New("x"), t0); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("mark by another owner: %v, want not_found", err)
		}
		retry := t0.Add(2 * time.Minute)
		if err := db.MarkFailed(ctx, m.ID, "w1", errors.New("dial tcp: connection refused"), retry); err != nil {
			t.Fatal(err)
		}
		got := message(t, db, m.ID)
		if got.Status != models.OutboxPending || got.Attempts != 1 || !got.NextAttemptAt.Equal(retry) ||
			got.LastError != "dial tcp: connection refused" || got.LeaseUntil != nil {
			t.Errorf("after a transient failure: %+v", got)
		}
		if got, err := at(db, retry.Add(-time.Second)).ClaimMail(ctx, "w1", 10, time.Minute); err != nil || len(got) != 0 {
			t.Errorf("claimed before its retry time: %+v, %v", got, err)
		}
		m = startOne(t, db, "w1", retry)
		if m.Attempts != 2 {
			t.Errorf("attempts %d, want 2", m.Attempts)
		}
		if err := db.MarkFailed(ctx, m.ID, "w1", errors.New("550 no such user"), time.Time{}); err != nil {
			t.Fatal(err)
		}
		if got := message(t, db, m.ID); got.Status != models.OutboxFailed || got.LastError != "550 no such user" {
			t.Errorf("after giving up: %+v", got)
		}
		if got, err := at(db, t0.Add(48*time.Hour)).ClaimMail(ctx, "w1", 10, time.Minute); err != nil || len(got) != 0 {
			t.Errorf("claimed a failed message: %+v, %v", got, err)
		}
	})
}

// at sets db's clock to now, as the database's clock would read, and
// returns db for a call.
func at(db *store.DB, now time.Time) *store.DB {
	db.Clock = func() time.Time { return now }
	return db
}

func claimOne(t *testing.T, db *store.DB, owner string, now time.Time) models.OutboxMessage {
	t.Helper()
	got, err := at(db, now).ClaimMail(ctx, owner, 1, time.Minute)
	if err != nil || len(got) != 1 {
		t.Fatalf("claim: %+v, %v", got, err)
	}
	return got[0]
}

// startOne claims one message and starts its attempt, as the worker does
// just before the SMTP transaction.
func startOne(t *testing.T, db *store.DB, owner string, now time.Time) *models.OutboxMessage {
	t.Helper()
	m := claimOne(t, db, owner, now)
	if err := db.StartAttempt(ctx, m.ID, owner, 0); err != nil {
		t.Fatal(err)
	}
	return message(t, db, m.ID)
}

func message(t *testing.T, db *store.DB, id int64) *models.OutboxMessage {
	t.Helper()
	m, err := db.OutboxMessage(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMarkFailedLongError: an SMTP reply longer than last_error keeps is
// cut at a character boundary, so that recording the failure never fails
// on PostgreSQL's UTF-8 check and the message stays retryable.
func TestMarkFailedLongError(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		enqueue(t, db, 1)
		m := claimOne(t, db, "w1", t0)
		reply := "451  " + strings.Repeat("请稍后再试", 100) // 5 + 1500 bytes: the limit falls inside a character
		if err := db.MarkFailed(ctx, m.ID, "w1", errors.New(reply), t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		got := message(t, db, m.ID)
		if want := reply[:5+3*331]; got.Status != models.OutboxPending || got.LastError != want {
			t.Errorf("after a long failure: status %s, last error %q; want pending, %q", got.Status, got.LastError, want)
		}
	})
}
