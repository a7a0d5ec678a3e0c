// Package notify turns what the node agents report into email through the
// outbox: the idle-booking warning to the owner, and the node-offline alert
// to admins. Each message carries a dedup key, so that a resend or a second
// gpubook process never mails twice.
package notify

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gpubook/gpubook/models"
)

// Store is what the notifications read and write.
type Store interface {
	User(ctx context.Context, id int64) (*models.User, error)
	Users(ctx context.Context) ([]models.User, error)
	AgentNodes(ctx context.Context) ([]models.AgentNode, error)
	EnqueueMail(ctx context.Context, m models.OutboxMessage) (bool, error)
	AddNotification(ctx context.Context, n models.Notification) error
}

// Mail renders the notifications' emails in each recipient's language and
// zone; views.Mail implements it and cmd wires it, so that the domain does
// not import the templates.
type Mail interface {
	IdleWarning(to *models.User, key string, r models.IdleReport, p models.IdlePolicy) (models.OutboxMessage, error)
	NodeOffline(to *models.User, key string, node models.AgentNode) (models.OutboxMessage, error)
}

// Notifier renders and enqueues the agent-related emails.
type Notifier struct {
	Store  Store
	Mail   Mail
	Policy models.IdlePolicy
	Now    func() time.Time
}

// IdleWarning tells the owner of an idle booking, once per idle episode
// (the agent's report id), and says whether the rest will be released.
func (n *Notifier) IdleWarning(ctx context.Context, r models.IdleReport) error {
	u, err := n.Store.User(ctx, r.UserID)
	if err != nil {
		return fmt.Errorf("notify: idle warning: %w", err)
	}
	m, err := n.Mail.IdleWarning(u, "idle:report:"+strconv.FormatInt(r.ID, 10), r, n.Policy)
	if err != nil {
		return fmt.Errorf("notify: idle warning: %w", err)
	}
	if _, err := n.Store.EnqueueMail(ctx, m); err != nil {
		return fmt.Errorf("notify: idle warning: %w", err)
	}
	if err := n.Store.AddNotification(ctx, models.IdleNotification(r, n.Policy.AutoRelease, n.Now())); err != nil {
		return fmt.Errorf("notify: idle warning: %w", err)
	}
	return nil
}

// OfflineAlerts mails every admin about each enrolled node whose agent has
// been silent for models.NodeOfflineAfter: once per outage, because the
// dedup key names the last time the node was seen.
func (n *Notifier) OfflineAlerts(ctx context.Context) error {
	nodes, err := n.Store.AgentNodes(ctx)
	if err != nil {
		return fmt.Errorf("notify: offline: %w", err)
	}
	now := n.Now()
	var admins []models.User
	for _, node := range nodes {
		if !node.Enrolled || node.LastSeenAt == nil || !node.Offline(now) {
			continue
		}
		if admins == nil {
			if admins, err = n.admins(ctx); err != nil {
				return err
			}
		}
		for i := range admins {
			key := fmt.Sprintf("offline:node:%d:%d:user:%d", node.NodeID, node.LastSeenAt.Unix(), admins[i].ID)
			m, err := n.Mail.NodeOffline(&admins[i], key, node)
			if err != nil {
				return fmt.Errorf("notify: offline: %w", err)
			}
			if _, err := n.Store.EnqueueMail(ctx, m); err != nil {
				return fmt.Errorf("notify: offline: %w", err)
			}
		}
	}
	return nil
}

func (n *Notifier) admins(ctx context.Context) ([]models.User, error) {
	users, err := n.Store.Users(ctx)
	if err != nil {
		return nil, fmt.Errorf("notify: admins: %w", err)
	}
	out := []models.User{}
	for _, u := range users {
		if u.IsAdmin {
			out = append(out, u)
		}
	}
	return out, nil
}
