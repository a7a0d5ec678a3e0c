package views

import (
	"strconv"
	"time"

	"github.com/gpubook/gpubook/models"
)

// NotificationsView is the notifications page: the newest notices first.
type NotificationsView struct {
	Items []models.Notification
}

// NotificationText renders a notice in the reader's language from its kind
// and parameters; times are shown in the reader's zone.
func (p *Page) NotificationText(n models.Notification) string {
	return noticeText(p.Tr, p.DateTime, n)
}

// noticeText is the one rendering of a notice, for the page and the email.
func noticeText(tr func(string, ...any) string, dateTime func(time.Time) string, n models.Notification) string {
	kv := make([]any, 0, 2*len(n.Params))
	for k, v := range n.Params {
		if t, err := time.Parse(time.RFC3339, v); err == nil && (k == "From" || k == "To" || k == "Since") {
			v = dateTime(t)
		}
		kv = append(kv, k, v)
	}
	switch n.Kind {
	case models.NotifyPreempted:
		return tr("notice.preempted."+n.Params["Action"], kv...)
	case models.NotifyDecision:
		return tr("notice.decided."+n.Params["Status"], kv...)
	case models.NotifyFreed:
		return tr("notice.freed", kv...)
	case models.NotifyIdle:
		if n.Params["AutoRelease"] == "true" {
			return tr("notice.idle_release", kv...)
		}
		return tr("notice.idle", kv...)
	case models.NotifyOutOfService:
		return tr("notice.out_of_service."+n.Params["Action"], kv...)
	case models.NotifyAccountDisabled:
		return tr("notice.account_disabled", kv...)
	}
	return tr("notice.unknown")
}

func notificationID(n models.Notification) string {
	return "notification-" + strconv.FormatInt(n.ID, 10)
}

func notificationReadURL(n models.Notification) string {
	return "/notifications/" + strconv.FormatInt(n.ID, 10) + "/read"
}

func boolAttr(b bool) string { return strconv.FormatBool(b) }
