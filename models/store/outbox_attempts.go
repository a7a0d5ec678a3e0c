package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// StartAttempt marks a claimed message as entering its SMTP transaction
// and counts the attempt. It succeeds only while owner's lease has more
// than margin left on the database's clock, so that recovery (which waits
// for the lease to end) never sees a send that is still starting: a row
// recovery finds without attempt_started_at was certainly never handed to
// the SMTP server.
func (db *DB) StartAttempt(ctx context.Context, id int64, owner string, margin time.Duration) error {
	res := db.Gorm.WithContext(ctx).Model(&outboxRow{}).
		Where("id = ? AND lease_owner = ? AND status = ? AND lease_until > ?", id, owner, models.OutboxSending, db.clockAt(margin)).
		Updates(map[string]any{"attempt_started_at": db.clockAt(0), "attempts": gorm.Expr("attempts + 1")})
	return leaseResult(res, "start attempt", id)
}

// ReleaseMail puts a claimed message that was never attempted back to
// pending, due at once: a worker that stops mid-batch hands the rest on.
func (db *DB) ReleaseMail(ctx context.Context, id int64, owner string) error {
	res := db.Gorm.WithContext(ctx).Model(&outboxRow{}).
		Where("id = ? AND lease_owner = ? AND status = ? AND attempt_started_at IS NULL", id, owner, models.OutboxSending).
		Updates(map[string]any{"status": models.OutboxPending, "lease_owner": "", "lease_until": nil, "next_attempt_at": db.clockAt(0)})
	return leaseResult(res, "release mail", id)
}

// RecoverStaleSends handles sending rows whose lease ran out on the
// database's clock: their worker died or hung. Rows never attempted go
// back to pending (nothing reached an SMTP server, so sending them cannot
// duplicate anything); rows whose SMTP transaction had started become
// unconfirmed, because the server may have accepted them and resending
// could mail twice. Their owner may still confirm them (MarkSent).
func (db *DB) RecoverStaleSends(ctx context.Context) (requeued, unconfirmed int64, err error) {
	g := db.Gorm.WithContext(ctx).Model(&outboxRow{})
	res := g.Where("status = ? AND lease_until < ? AND attempt_started_at IS NULL", models.OutboxSending, db.clockAt(0)).
		Updates(map[string]any{"status": models.OutboxPending, "lease_owner": "", "lease_until": nil,
			"last_error": "worker stopped before sending; queued again"})
	if res.Error != nil {
		return 0, 0, fmt.Errorf("store: recover stale sends: %w", res.Error)
	}
	requeued = res.RowsAffected
	res = db.Gorm.WithContext(ctx).Model(&outboxRow{}).
		Where("status = ? AND lease_until < ? AND attempt_started_at IS NOT NULL", models.OutboxSending, db.clockAt(0)).
		Updates(map[string]any{"status": models.OutboxUnconfirmed, "last_error": "worker stopped during the SMTP transaction; not resent"})
	if res.Error != nil {
		return requeued, 0, fmt.Errorf("store: recover stale sends: %w", res.Error)
	}
	return requeued, res.RowsAffected, nil
}

// UnconfirmedMail lists up to limit unconfirmed messages, oldest first,
// for the admin who decides whether to re-queue them.
func (db *DB) UnconfirmedMail(ctx context.Context, limit int) ([]models.OutboxMessage, error) {
	var rows []outboxRow
	err := db.Gorm.WithContext(ctx).Where("status = ?", models.OutboxUnconfirmed).Order("created_at, id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: unconfirmed mail: %w", err)
	}
	out := make([]models.OutboxMessage, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
}

// RequeueUnconfirmed puts unconfirmed messages back to pending, due at
// once: the given ids, or every unconfirmed one when ids is empty. It is
// an admin's decision that a possible duplicate beats a possibly lost
// email, so each re-queued message is audit-logged with the change.
func (db *DB) RequeueUnconfirmed(ctx context.Context, by models.Actor, ids []int64) (int64, error) {
	var n int64
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := tx.Model(&outboxRow{}).Where("status = ?", models.OutboxUnconfirmed)
		if len(ids) > 0 {
			q = q.Where("id IN ?", ids)
		}
		var found []outboxRow
		if err := q.Session(&gorm.Session{}).Select("id", "dedup_key", "attempts").Find(&found).Error; err != nil {
			return err
		}
		if len(ids) > 0 && len(found) != len(ids) {
			return &models.Error{Code: models.ENOTFOUND, Msg: models.M("err.not_found", "What", "email"),
				Err: fmt.Errorf("not every id names an unconfirmed message")}
		}
		for _, r := range found {
			res := tx.Model(&outboxRow{}).Where("id = ? AND status = ?", r.ID, models.OutboxUnconfirmed).
				Updates(map[string]any{"status": models.OutboxPending, "lease_owner": "", "lease_until": nil,
					"attempt_started_at": nil, "next_attempt_at": db.clockAt(0)})
			if res.Error != nil {
				return res.Error
			}
			details := map[string]any{"dedup_key": r.DedupKey, "attempts": r.Attempts}
			if err := audit(tx, by, models.AuditMailRequeue, "email", r.ID, details); err != nil {
				return err
			}
			n += res.RowsAffected
		}
		return nil
	})
	if err != nil {
		return 0, mapErr(fmt.Errorf("store: requeue mail: %w", err), "email")
	}
	return n, nil
}

// ResendUnconfirmed puts back to pending the unconfirmed messages whose
// attempt started more than after ago, when the SMTP server has since been
// seen to work: some message whose attempt started later was sent. Only
// messages with fewer than maxAttempts attempts go back, so that a message
// that hangs the server every time is given up. It exists for admins who
// opted in: the recipient may get such a message twice.
func (db *DB) ResendUnconfirmed(ctx context.Context, after time.Duration, maxAttempts int) (int64, error) {
	res := db.Gorm.WithContext(ctx).Exec(`UPDATE outbox SET status = ?, lease_owner = '', lease_until = NULL, next_attempt_at = ?
		WHERE status = ? AND attempts < ? AND attempt_started_at IS NOT NULL AND attempt_started_at <= ?
		AND EXISTS (SELECT 1 FROM outbox s WHERE s.status = ? AND s.attempt_started_at > outbox.attempt_started_at)`,
		models.OutboxPending, db.clockAt(0), models.OutboxUnconfirmed, maxAttempts, db.clockAt(-after), models.OutboxSent)
	if res.Error != nil {
		return 0, fmt.Errorf("store: resend unconfirmed mail: %w", res.Error)
	}
	return res.RowsAffected, nil
}
