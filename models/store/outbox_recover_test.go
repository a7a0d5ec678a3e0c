package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestRecoverStaleSends: of a batch whose worker vanished, the messages
// it never started go back to pending; those in an SMTP transaction are
// unconfirmed and never claimed again, though their owner may still
// confirm them.
func TestRecoverStaleSends(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		enqueue(t, db, 3)
		batch, err := at(db, t0).ClaimMail(ctx, "w1", 3, time.Minute)
		if err != nil || len(batch) != 3 {
			t.Fatalf("claim: %+v, %v", batch, err)
		}
		a, b, c := batch[0], batch[1], batch[2]
		for _, m := range []models.OutboxMessage{a, b} {
			if err := db.StartAttempt(ctx, m.ID, "w1", 0); err != nil {
				t.Fatal(err)
			}
		}
		if req, unc, err := at(db, t0.Add(30*time.Second)).RecoverStaleSends(ctx); err != nil || req != 0 || unc != 0 {
			t.Fatalf("recover within the lease: %d, %d, %v", req, unc, err)
		}
		req, unc, err := at(db, t0.Add(2*time.Minute)).RecoverStaleSends(ctx)
		if err != nil || req != 1 || unc != 2 {
			t.Fatalf("recover after the lease: %d requeued, %d unconfirmed, %v; want 1, 2", req, unc, err)
		}
		got := message(t, db, a.ID)
		if got.Status != models.OutboxUnconfirmed || got.LastError == "" || got.SentAt != nil || got.Attempts != 1 || got.AttemptStartedAt == nil {
			t.Errorf("stale send: %+v", got)
		}
		if got := message(t, db, c.ID); got.Status != models.OutboxPending || got.Attempts != 0 || got.LeaseOwner != "" || got.AttemptStartedAt != nil {
			t.Errorf("never attempted: %+v, want pending again with no attempt counted", got)
		}
		again, err := at(db, t0.Add(time.Hour)).ClaimMail(ctx, "w2", 10, time.Minute)
		if err != nil || len(again) != 1 || again[0].ID != c.ID {
			t.Errorf("claimed after recovery: %+v, %v; want only the never attempted one", again, err)
		}
		// The slow worker comes back: it knows the server accepted a, and b failed.
		if err := db.MarkSent(ctx, a.ID, "w1", t0.Add(3*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := db.MarkUnconfirmed(ctx, b.ID, "w1", errors.New("connection reset after DATA")); err != nil {
			t.Fatal(err)
		}
		if got := message(t, db, a.ID); got.Status != models.OutboxSent || got.SentAt == nil || !got.SentAt.Equal(t0.Add(3*time.Minute)) {
			t.Errorf("confirmed late: %+v", got)
		}
		st, err := db.OutboxStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"pending": 0, "sending": 1, "sent": 1, "failed": 0, "unconfirmed": 1}
		for k, v := range want {
			if st.Counts[k] != v {
				t.Errorf("count %s = %d, want %d (%v)", k, st.Counts[k], v, st.Counts)
			}
		}
	})
}

// TestStartAttemptNeedsTheLease: a message whose lease is gone or nearly
// gone is not started, and can be released back to pending.
func TestStartAttemptNeedsTheLease(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		enqueue(t, db, 1)
		m := claimOne(t, db, "w1", t0) // leased for a minute
		if err := at(db, t0.Add(30*time.Second)).StartAttempt(ctx, m.ID, "w1", time.Minute); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("start with 30 s of lease left and a 1 min margin: %v, want not_found", err)
		}
		if err := db.StartAttempt(ctx, m.ID, "w2", 0); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("start by another owner: %v, want not_found", err)
		}
		if err := db.ReleaseMail(ctx, m.ID, "w1"); err != nil {
			t.Fatal(err)
		}
		if got := message(t, db, m.ID); got.Status != models.OutboxPending || got.Attempts != 0 || got.LeaseUntil != nil {
			t.Errorf("released: %+v", got)
		}
	})
}

// TestRequeueUnconfirmed: an admin re-queues an unconfirmed message; it is
// pending and due again, and the audit log says who did it.
func TestRequeueUnconfirmed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		enqueue(t, db, 2)
		for range 2 {
			m := claimOne(t, db, "w1", t0)
			if err := db.StartAttempt(ctx, m.ID, "w1", 0); err != nil {
				t.Fatal(err)
			}
			if err := db.MarkUnconfirmed(ctx, m.ID, "w1", errors.New("connection reset after DATA")); err != nil {
				t.Fatal(err)
			}
		}
		list, err := db.UnconfirmedMail(ctx, 10)
		if err != nil || len(list) != 2 {
			t.Fatalf("unconfirmed: %+v, %v", list, err)
		}
		by := models.Actor{Label: "cli"}
		if _, err := db.RequeueUnconfirmed(ctx, by, []int64{list[0].ID, 999999}); models.ErrorCode(err) != models.ENOTFOUND {
			t.Errorf("requeue of an unknown id: %v, want not_found", err)
		}
		if got := message(t, db, list[0].ID); got.Status != models.OutboxUnconfirmed {
			t.Errorf("a failed requeue changed %+v", got)
		}
		n, err := at(db, t0.Add(time.Hour)).RequeueUnconfirmed(ctx, by, []int64{list[0].ID})
		if err != nil || n != 1 {
			t.Fatalf("requeue: %d, %v", n, err)
		}
		got := message(t, db, list[0].ID)
		if got.Status != models.OutboxPending || !got.NextAttemptAt.Equal(t0.Add(time.Hour)) || got.AttemptStartedAt != nil || got.Attempts != 1 {
			t.Errorf("requeued: %+v", got)
		}
		if n, err := db.RequeueUnconfirmed(ctx, by, nil); err != nil || n != 1 {
			t.Errorf("requeue all: %d, %v; want the other one", n, err)
		}
		ev, err := db.AuditEvents(ctx, models.AuditFilter{Action: models.AuditMailRequeue})
		if err != nil || len(ev) != 2 || ev[0].ActorLabel != "cli" || ev[0].TargetType != "email" {
			t.Errorf("audit: %+v, %v", ev, err)
		}
	})
}

func TestDeleteSentBeforeAndStats(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		enqueue(t, db, 3)
		for _, at := range []time.Time{t0, t0.Add(40 * 24 * time.Hour)} {
			m := claimOne(t, db, "w1", at)
			if err := db.MarkSent(ctx, m.ID, "w1", at); err != nil {
				t.Fatal(err)
			}
		}
		n, err := db.DeleteSentBefore(ctx, t0.Add(10*24*time.Hour))
		if err != nil || n != 1 {
			t.Fatalf("delete: %d, %v; want 1", n, err)
		}
		st, _ := db.OutboxStats(ctx)
		if st.Counts["sent"] != 1 || st.Counts["pending"] != 1 || st.OldestPending == nil || !st.OldestPending.Equal(t0) {
			t.Errorf("stats %+v", st)
		}
	})
}
