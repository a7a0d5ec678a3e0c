package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// DisableUser deactivates an account when its person leaves: bookings not
// started are cancelled, a running one ends now, every API token and feed
// is revoked, and the person is told by email, all in one transaction with
// its audit events. Bookings, use and reports stay under their name.
// Disabling a disabled account is an EINVALID that changes nothing.
func (db *DB) DisableUser(ctx context.Context, userID int64, by models.Actor, now time.Time, mail models.NotificationMailer) (models.OffboardResult, error) {
	var res models.OffboardResult
	err := db.inTxRetrying(ctx, func(tx *gorm.DB) error {
		res = models.OffboardResult{}
		if err := lockUser(tx, userID); err != nil {
			return err
		}
		u, err := userInTx(tx, userID)
		if err != nil {
			return err
		}
		if u.Disabled() {
			return models.NewError(models.EINVALID, models.M("admin.err.already_disabled"))
		}
		if err := offboardBookings(tx, userID, by, now, &res); err != nil {
			return err
		}
		if res.Tokens, err = revokeAll(tx, "api_tokens", userID, now); err != nil {
			return err
		}
		if res.Feeds, err = revokeAll(tx, "feed_tokens", userID, now); err != nil {
			return err
		}
		if res.Requests, err = withdrawAll(tx, userID, by, now); err != nil {
			return err
		}
		if err := tx.Model(&userRow{}).Where("id = ?", userID).Updates(map[string]any{"disabled_at": utc(now), "updated_at": utc(now)}).Error; err != nil {
			return err
		}
		if err := audit(tx, by, models.AuditUserDisable, "user", userID, map[string]any{"email": u.Email,
			"cancelled": res.Cancelled, "ended": res.Ended, "tokens": res.Tokens, "feeds": res.Feeds, "requests": res.Requests}); err != nil {
			return err
		}
		return offboardNotice(tx, u, res, now, mail)
	})
	return res, mapErr(err, "user")
}

// offboardBookings cancels or ends each of the user's bookings that still
// block GPUs, as PlanOffboard sorts them, auditing each as the admin's.
func offboardBookings(tx *gorm.DB, userID int64, by models.Actor, now time.Time, res *models.OffboardResult) error {
	var ids []int64
	if err := tx.Table("bookings").Where("user_id = ? AND status <> ? AND ends_at > ?", userID, models.StatusCancelled, utc(now)).
		Order("id").Pluck("id", &ids).Error; err != nil {
		return err
	}
	var open []models.Booking
	for _, id := range ids {
		if err := lockBookingGPUs(tx, id); err != nil {
			return err
		}
		b, err := bookingByID(tx, id, true)
		if err != nil {
			return err
		}
		open = append(open, *b)
	}
	plan := models.PlanOffboard(open, now)
	for i := range plan.Cancel {
		b := &plan.Cancel[i]
		if err := cancelHold(tx, b, now); err != nil {
			return err
		}
		if err := audit(tx, by, models.AuditBookingCancel, "booking", b.ID, bookingAuditDetails(nil, b, map[string]any{"reason": "account disabled"})); err != nil {
			return err
		}
	}
	for i := range plan.End {
		b := &plan.End[i]
		if err := setBookingEnd(tx, b, now, nil, now); err != nil {
			return err
		}
		if err := audit(tx, by, models.AuditBookingRelease, "booking", b.ID, bookingAuditDetails(nil, b, map[string]any{"reason": "account disabled"})); err != nil {
			return err
		}
	}
	res.Cancelled, res.Ended = len(plan.Cancel), len(plan.End)
	return nil
}

// revokeAll revokes every live token of the user in table (api_tokens or
// feed_tokens) and says how many.
func revokeAll(tx *gorm.DB, table string, userID int64, now time.Time) (int, error) {
	r := tx.Table(table).Where("user_id = ? AND revoked_at IS NULL", userID).Update("revoked_at", utc(now))
	return int(r.RowsAffected), r.Error
}

// withdrawAll withdraws the user's pending priority requests: approved
// later, one would pre-empt others for a person who has left.
func withdrawAll(tx *gorm.DB, userID int64, by models.Actor, now time.Time) (int, error) {
	var ids []int64
	if err := tx.Model(&requestRow{}).Where("user_id = ? AND status = ?", userID, models.RequestPending).Order("id").Pluck("id", &ids).Error; err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := tx.Model(&requestRow{}).Where("id = ?", id).Updates(map[string]any{"status": models.RequestWithdrawn, "updated_at": utc(now)}).Error; err != nil {
			return 0, err
		}
		if err := audit(tx, by, models.AuditRequestWithdraw, "request", id, map[string]any{"user_id": userID, "reason": "account disabled"}); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

// offboardNotice records the notice and enqueues its email.
func offboardNotice(tx *gorm.DB, u *models.User, res models.OffboardResult, now time.Time, mail models.NotificationMailer) error {
	n := models.OffboardNotification(u.ID, res, now)
	if err := addNotification(tx, n); err != nil {
		return err
	}
	if mail == nil {
		return nil
	}
	m, err := mail(n, u)
	if err != nil {
		return err
	}
	m.DedupKey = n.DedupKey
	_, err = enqueueMail(tx, m)
	return err
}

// EnableUser reactivates an account. Its tokens and feeds stay revoked
// (the person makes new ones) and its cancelled bookings stay cancelled.
func (db *DB) EnableUser(ctx context.Context, userID int64, by models.Actor, now time.Time) error {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r := tx.Model(&userRow{}).Where("id = ? AND disabled_at IS NOT NULL", userID).Updates(map[string]any{"disabled_at": nil, "updated_at": utc(now)})
		if r.Error != nil {
			return r.Error
		}
		if r.RowsAffected == 0 {
			if _, err := userInTx(tx, userID); err != nil {
				return err
			}
			return models.NewError(models.EINVALID, models.M("admin.err.not_disabled"))
		}
		return audit(tx, by, models.AuditUserEnable, "user", userID, nil)
	})
	return mapErr(err, "user")
}

// RenameUser changes a user's email address; the id stays, so bookings,
// use, reports and the SSO link stay theirs. An address another account
// holds is an ECONFLICT.
func (db *DB) RenameUser(ctx context.Context, userID int64, email string, by models.Actor, now time.Time) error {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		u, err := userInTx(tx, userID)
		if err != nil {
			return err
		}
		email, err := models.RenameEmail(u, email)
		if err != nil {
			return err
		}
		if err := tx.Model(&userRow{}).Where("id = ?", userID).Updates(map[string]any{"email": email, "updated_at": utc(now)}).Error; err != nil {
			return err
		}
		return audit(tx, by, models.AuditUserRename, "user", userID, map[string]any{"from": u.Email, "email": email})
	})
	return mapErr(err, "user")
}
