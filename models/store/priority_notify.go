package store

import (
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// notify records the in-app notice of n for each recipient, and renders
// and enqueues its email in tx, once per (kind, request, booking,
// recipient): a retried transaction never notifies twice. The in-app
// notice is recorded even without a mailer (no SMTP configured).
func notify(tx *gorm.DB, mail models.Mailer, n models.Notice, to []*models.User, now time.Time) error {
	for _, u := range to {
		if in, ok := models.NotificationFor(n, u, now); ok {
			if err := addNotification(tx, in); err != nil {
				return fmt.Errorf("store: notice %s: %w", n.Kind, err)
			}
		}
	}
	if mail == nil {
		return nil
	}
	for _, u := range to {
		m, err := mail(n, u)
		if err != nil {
			return fmt.Errorf("store: render %s: %w", n.Kind, err)
		}
		m.DedupKey = n.Kind + ":request:" + strconv.FormatInt(n.Request.ID, 10) + ":user:" + strconv.FormatInt(u.ID, 10)
		if n.Booking != nil {
			m.DedupKey += ":booking:" + strconv.FormatInt(n.Booking.ID, 10)
		}
		if n.DedupKey != "" {
			m.DedupKey = n.DedupKey
		}
		if _, err := enqueueMail(tx, m); err != nil {
			return fmt.Errorf("store: enqueue %s: %w", n.Kind, err)
		}
	}
	return nil
}

// notifyLeads tells the leads of the request's team (or, for a requester
// without a team, the admins) that a request waits for them.
func notifyLeads(tx *gorm.DB, mail models.Mailer, r *models.PriorityRequest, now time.Time) error {
	if mail == nil {
		return nil
	}
	var rows []userRow
	q := tx.Table("users u").Select("u.*").Where("u.id <> ?", r.UserID)
	if r.TeamID != nil {
		q = q.Where("u.id IN (SELECT user_id FROM memberships WHERE team_id = ? AND role = ?)", *r.TeamID, models.RoleLead)
	} else {
		q = q.Where("u.is_admin")
	}
	if err := q.Order("u.id").Find(&rows).Error; err != nil {
		return fmt.Errorf("store: request leads: %w", err)
	}
	return notify(tx, mail, models.Notice{Kind: models.NoticeNewRequest, Request: *r}, usersOf(rows), now)
}

func userInTx(tx *gorm.DB, id int64) (*models.User, error) {
	var r userRow
	if err := tx.Take(&r, "id = ?", id).Error; err != nil {
		return nil, mapErr(err, "user")
	}
	return r.model(), nil
}

func usersOf(rows []userRow) []*models.User {
	out := make([]*models.User, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out
}
