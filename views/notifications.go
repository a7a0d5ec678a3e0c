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
	kv := make([]any, 0, 2*len(n.Params))
	for k, v := range n.Params {
		if t, err := time.Parse(time.RFC3339, v); err == nil && (k == "From" || k == "To" || k == "Since") {
			v = p.DateTime(t)
		}
		kv = append(kv, k, v)
	}
	switch n.Kind {
	case models.NotifyPreempted:
		return p.Tr("notice.preempted."+n.Params["Action"], kv...)
	case models.NotifyDecision:
		return p.Tr("notice.decided."+n.Params["Status"], kv...)
	case models.NotifyFreed:
		return p.Tr("notice.freed", kv...)
	case models.NotifyIdle:
		if n.Params["AutoRelease"] == "true" {
			return p.Tr("notice.idle_release", kv...)
		}
		return p.Tr("notice.idle", kv...)
	case models.NotifyOutOfService:
		return p.Tr("notice.out_of_service."+n.Params["Action"], kv...)
	}
	return p.Tr("notice.unknown")
}

func notificationID(n models.Notification) string {
	return "notification-" + strconv.FormatInt(n.ID, 10)
}

func notificationReadURL(n models.Notification) string {
	return "/notifications/" + strconv.FormatInt(n.ID, 10) + "/read"
}

func boolAttr(b bool) string { return strconv.FormatBool(b) }
