package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gpubook/gpubook/models"
)

type outboxRow struct {
	ID             int64      `gorm:"column:id;primaryKey"`
	Kind           string     `gorm:"column:kind"`
	DedupKey       string     `gorm:"column:dedup_key"`
	ToUserID       *int64     `gorm:"column:to_user_id"`
	ToEmail        string     `gorm:"column:to_email"`
	Lang           string     `gorm:"column:lang"`
	Subject        string     `gorm:"column:subject"`
	TextBody       string     `gorm:"column:text_body"`
	HTMLBody       string     `gorm:"column:html_body"`
	UnsubscribeURL string     `gorm:"column:unsubscribe_url"`
	Status         string     `gorm:"column:status"`
	Attempts       int        `gorm:"column:attempts"`
	NextAttemptAt  time.Time  `gorm:"column:next_attempt_at"`
	LeaseOwner     string     `gorm:"column:lease_owner"`
	LeaseUntil     *time.Time `gorm:"column:lease_until"`
	LastError      string     `gorm:"column:last_error"`
	CreatedAt      time.Time  `gorm:"column:created_at"`
	SentAt         *time.Time `gorm:"column:sent_at"`
	AttemptStarted *time.Time `gorm:"column:attempt_started_at"`
}

func (outboxRow) TableName() string { return "outbox" }

func (r outboxRow) model() models.OutboxMessage {
	return models.OutboxMessage{ID: r.ID, Kind: r.Kind, DedupKey: r.DedupKey, ToUserID: r.ToUserID, ToEmail: r.ToEmail,
		Lang: r.Lang, Subject: r.Subject, TextBody: r.TextBody, HTMLBody: r.HTMLBody, UnsubscribeURL: r.UnsubscribeURL,
		Status: r.Status, Attempts: r.Attempts, NextAttemptAt: r.NextAttemptAt.UTC(), LeaseOwner: r.LeaseOwner,
		LeaseUntil: utcPtr(r.LeaseUntil), LastError: r.LastError, CreatedAt: r.CreatedAt.UTC(), SentAt: utcPtr(r.SentAt),
		AttemptStartedAt: utcPtr(r.AttemptStarted)}
}

// maxErrorText bounds last_error: an SMTP server's reply can be long, and
// the admin only needs its start to see what went wrong.
const maxErrorText = 1000

// EnqueueMail adds a message to the outbox, due at once. A message whose
// dedup key is already there is left alone and created is false, so that a
// retried report run or a repeated event never mails anyone twice.
func (db *DB) EnqueueMail(ctx context.Context, m models.OutboxMessage) (bool, error) {
	return enqueueMail(db.Gorm.WithContext(ctx), m)
}

// enqueueMail is EnqueueMail inside the caller's transaction: a pre-emption
// or a report run writes its change and its email together, or neither.
func enqueueMail(tx *gorm.DB, m models.OutboxMessage) (bool, error) {
	if err := m.Validate(); err != nil {
		return false, err
	}
	now := utc(time.Now())
	row := outboxRow{Kind: m.Kind, DedupKey: m.DedupKey, ToUserID: m.ToUserID, ToEmail: m.ToEmail, Lang: m.Lang,
		Subject: m.Subject, TextBody: m.TextBody, HTMLBody: m.HTMLBody, UnsubscribeURL: m.UnsubscribeURL,
		Status: models.OutboxPending, NextAttemptAt: now, CreatedAt: now}
	if !m.NextAttemptAt.IsZero() {
		row.NextAttemptAt = utc(m.NextAttemptAt)
	}
	if !m.CreatedAt.IsZero() {
		row.CreatedAt = utc(m.CreatedAt)
	}
	res := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "dedup_key"}}, DoNothing: true}).Create(&row)
	if res.Error != nil {
		return false, mapErr(res.Error, "email")
	}
	return res.RowsAffected == 1, nil
}

// ClaimMail leases up to limit due pending messages to owner in one
// statement, for lease on the database's clock. On PostgreSQL FOR UPDATE
// SKIP LOCKED lets concurrent workers take disjoint rows without waiting;
// SQLite runs one writer at a time, so the statement alone is atomic. A
// claim is not an attempt: StartAttempt marks each message just before
// its SMTP transaction, so that recovery can tell the two apart.
func (db *DB) ClaimMail(ctx context.Context, owner string, limit int, lease time.Duration) ([]models.OutboxMessage, error) {
	if limit <= 0 {
		return nil, nil
	}
	args := map[string]any{"pending": models.OutboxPending, "now": db.clockAt(0), "limit": limit,
		"sending": models.OutboxSending, "owner": owner, "until": db.clockAt(lease)}
	var rows []outboxRow
	err := db.Gorm.WithContext(ctx).Raw(claimQuery(db.Dialect), args).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: claim mail: %w", err)
	}
	out := make([]models.OutboxMessage, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	// RETURNING has no order; send in the order they were queued.
	slices.SortFunc(out, func(a, b models.OutboxMessage) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// ClaimMailByID leases one pending message to owner whatever its next
// attempt time, for `gpubook mail test --now`, which sends the message it
// just queued instead of whatever else is due.
func (db *DB) ClaimMailByID(ctx context.Context, id int64, owner string, lease time.Duration) (*models.OutboxMessage, error) {
	var rows []outboxRow
	err := db.Gorm.WithContext(ctx).Raw(`UPDATE outbox SET status = ?, lease_owner = ?, lease_until = ?, attempt_started_at = NULL
		WHERE id = ? AND status = ? RETURNING *`, models.OutboxSending, owner, db.clockAt(lease), id, models.OutboxPending).
		Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: claim mail %d: %w", id, err)
	}
	if len(rows) == 0 {
		return nil, &models.Error{Code: models.ENOTFOUND, Msg: models.M("err.not_found", "What", "email"),
			Err: fmt.Errorf("store: claim mail %d: no such pending message", id)}
	}
	m := rows[0].model()
	return &m, nil
}

// claimQuery is ClaimMail's statement per dialect. In PostgreSQL the CTE
// is evaluated once and its row locks make rivals skip these rows.
func claimQuery(dialect string) string {
	if dialect == Postgres {
		return `WITH due AS (SELECT id FROM outbox WHERE status = @pending AND next_attempt_at <= @now
			ORDER BY next_attempt_at, id LIMIT @limit FOR UPDATE SKIP LOCKED)
		UPDATE outbox o SET status = @sending, lease_owner = @owner, lease_until = @until, attempt_started_at = NULL
		FROM due WHERE o.id = due.id RETURNING o.*`
	}
	return `UPDATE outbox SET status = @sending, lease_owner = @owner, lease_until = @until, attempt_started_at = NULL
		WHERE id IN (SELECT id FROM outbox WHERE status = @pending AND next_attempt_at <= @now
			ORDER BY next_attempt_at, id LIMIT @limit)
		RETURNING *`
}

// MarkSent records a send the SMTP server accepted. It also confirms a row
// that recovery already marked unconfirmed (the send outlasted its lease):
// its owner knows now that it arrived.
func (db *DB) MarkSent(ctx context.Context, id int64, owner string, now time.Time) error {
	res := db.Gorm.WithContext(ctx).Model(&outboxRow{}).
		Where("id = ? AND lease_owner = ? AND status IN ?", id, owner, []string{models.OutboxSending, models.OutboxUnconfirmed}).
		Updates(map[string]any{"status": models.OutboxSent, "sent_at": utc(now), "lease_until": nil, "last_error": ""})
	return leaseResult(res, "mark sent", id)
}

// MarkFailed records a send that certainly did not reach the recipient's
// server: pending again at nextAttempt, or failed for good when it is zero.
func (db *DB) MarkFailed(ctx context.Context, id int64, owner string, sendErr error, nextAttempt time.Time) error {
	set := map[string]any{"lease_until": nil, "last_error": errorText(sendErr)}
	if nextAttempt.IsZero() {
		set["status"] = models.OutboxFailed
	} else {
		set["status"], set["next_attempt_at"] = models.OutboxPending, utc(nextAttempt)
	}
	res := db.Gorm.WithContext(ctx).Model(&outboxRow{}).
		Where("id = ? AND lease_owner = ? AND status IN ?", id, owner, []string{models.OutboxSending, models.OutboxUnconfirmed}).
		Updates(set)
	return leaseResult(res, "mark failed", id)
}

// MarkUnconfirmed records a send whose outcome is unknown (the connection
// broke after the message was handed over); it is never sent again.
func (db *DB) MarkUnconfirmed(ctx context.Context, id int64, owner string, sendErr error) error {
	res := db.Gorm.WithContext(ctx).Model(&outboxRow{}).
		Where("id = ? AND lease_owner = ? AND status IN ?", id, owner, []string{models.OutboxSending, models.OutboxUnconfirmed}).
		Updates(map[string]any{"status": models.OutboxUnconfirmed, "lease_until": nil, "last_error": errorText(sendErr)})
	return leaseResult(res, "mark unconfirmed", id)
}

// leaseResult reports a mark that found no row leased to the owner: the row
// is gone or belongs to someone else, which the worker logs and moves past.
func leaseResult(res *gorm.DB, what string, id int64) error {
	if res.Error != nil {
		return fmt.Errorf("store: %s %d: %w", what, id, res.Error)
	}
	if res.RowsAffected == 0 {
		return &models.Error{Code: models.ENOTFOUND, Msg: models.M("err.not_found", "What", "email"),
			Err: fmt.Errorf("store: %s %d: not leased to this worker", what, id)}
	}
	return nil
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return clip(err.Error(), maxErrorText)
}

// DeleteSentBefore drops sent messages older than before; the outbox is a
// queue, not an archive, and the bodies hold personal data.
func (db *DB) DeleteSentBefore(ctx context.Context, before time.Time) (int64, error) {
	res := db.Gorm.WithContext(ctx).Where("status = ? AND sent_at < ?", models.OutboxSent, utc(before)).Delete(&outboxRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("store: delete sent mail: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// OutboxStats counts messages by status (every status present, zero or not).
func (db *DB) OutboxStats(ctx context.Context) (models.OutboxStats, error) {
	var rows []struct {
		Status string
		N      int64
	}
	g := db.Gorm.WithContext(ctx)
	if err := g.Model(&outboxRow{}).Select("status, COUNT(*) AS n").Group("status").Scan(&rows).Error; err != nil {
		return models.OutboxStats{}, fmt.Errorf("store: outbox stats: %w", err)
	}
	st := models.OutboxStats{Counts: map[string]int64{}}
	for _, s := range models.OutboxStatuses {
		st.Counts[s] = 0
	}
	for _, r := range rows {
		st.Counts[r.Status] = r.N
	}
	var oldest []outboxRow
	if err := g.Where("status = ?", models.OutboxPending).Order("created_at, id").Limit(1).Find(&oldest).Error; err != nil {
		return models.OutboxStats{}, fmt.Errorf("store: outbox stats: %w", err)
	}
	if len(oldest) == 1 {
		t := oldest[0].CreatedAt.UTC()
		st.OldestPending = &t
	}
	return st, nil
}

// OutboxMessage returns one message, for the CLI and tests.
func (db *DB) OutboxMessage(ctx context.Context, id int64) (*models.OutboxMessage, error) {
	var r outboxRow
	if err := db.Gorm.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return nil, mapErr(err, "email")
	}
	m := r.model()
	return &m, nil
}

// OutboxMessageByKey returns the message with a dedup key.
func (db *DB) OutboxMessageByKey(ctx context.Context, dedupKey string) (*models.OutboxMessage, error) {
	var r outboxRow
	if err := db.Gorm.WithContext(ctx).Where("dedup_key = ?", dedupKey).Take(&r).Error; err != nil {
		return nil, mapErr(err, "email")
	}
	m := r.model()
	return &m, nil
}
