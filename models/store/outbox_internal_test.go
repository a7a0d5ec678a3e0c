package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// TestEnqueueMailInTransaction: a message enqueued inside a transaction that
// rolls back is gone with the change it belonged to.
func TestEnqueueMailInTransaction(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.MigrateUp(ctx); err != nil {
		t.Fatal(err)
	}
	m := models.OutboxMessage{Kind: "test", DedupKey: "k", ToEmail: "a@example.org", Subject: "s", TextBody: "t"}
	boom := errors.New("the change failed")
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if created, err := enqueueMail(tx, m); err != nil || !created {
			t.Fatalf("enqueue in tx: %v, %v", created, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("transaction: %v", err)
	}
	st, err := db.OutboxStats(ctx)
	if err != nil || st.Counts[models.OutboxPending] != 0 {
		t.Fatalf("after rollback: %+v, %v", st, err)
	}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		_, err := enqueueMail(tx, m)
		return err
	})
	if st, _ := db.OutboxStats(ctx); err != nil || st.Counts[models.OutboxPending] != 1 {
		t.Fatalf("after commit: %+v, %v", st, err)
	}
}
