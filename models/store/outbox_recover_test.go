package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestRecoverStaleSends: a send whose worker vanished is unconfirmed and
// never claimed again; its owner may still confirm it.
func TestRecoverStaleSends(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		enqueue(t, db, 2)
		a := claimOne(t, db, "w1", t0)
		b := claimOne(t, db, "w1", t0)
		if n, err := db.RecoverStaleSends(ctx, t0.Add(30*time.Second)); err != nil || n != 0 {
			t.Fatalf("recover within the lease: %d, %v", n, err)
		}
		n, err := db.RecoverStaleSends(ctx, t0.Add(2*time.Minute))
		if err != nil || n != 2 {
			t.Fatalf("recover after the lease: %d, %v; want 2", n, err)
		}
		got := message(t, db, a.ID)
		if got.Status != models.OutboxUnconfirmed || got.LastError == "" || got.SentAt != nil {
			t.Errorf("stale send: %+v", got)
		}
		if got, err := db.ClaimMail(ctx, "w2", t0.Add(time.Hour), 10, time.Minute); err != nil || len(got) != 0 {
			t.Errorf("unconfirmed mail was claimed again: %+v, %v", got, err)
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
		want := map[string]int64{"pending": 0, "sending": 0, "sent": 1, "failed": 0, "unconfirmed": 1}
		for k, v := range want {
			if st.Counts[k] != v {
				t.Errorf("count %s = %d, want %d (%v)", k, st.Counts[k], v, st.Counts)
			}
		}
		if st.OldestPending != nil {
			t.Errorf("oldest pending %v, want none", st.OldestPending)
		}
	})
}

func TestDeleteSentBeforeAndStats(t *testing.T) {
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
