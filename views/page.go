// Package views renders gpubook's pages, fragments and emails with templ.
// Every component takes typed data (a *Page plus its own view model), never
// a map, and every string a person reads goes through Page.T.
package views

import (
	"net/url"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// Page is what every full page needs: who is looking, in which language
// and time zone, the CSRF token for its forms, and the flash messages.
type Page struct {
	T        *i18n.Translator
	User     *models.User
	CSRF     string
	Flashes  []Flash
	DevLogin bool
	Path     string // the request path, for the active navigation item
	Query    url.Values
	Location *time.Location // the viewer's zone
	Now      time.Time
	// RequestID is shown on error pages so that a user can quote it.
	RequestID string
	// PendingApprovals is the count shown beside the approvals link.
	PendingApprovals int
	// UnreadNotices is the count shown on the notification bell.
	UnreadNotices int
	// Decides says the viewer may decide requests (an admin or a team
	// lead): only they see the Approvals tab.
	Decides bool
}

// Flash is a one-time message shown at the top of the next page.
type Flash struct {
	Kind string // "ok" or "error"
	Text string
}

// Tr is a short alias used in templates.
func (p *Page) Tr(key string, kv ...any) string { return p.T.T(key, kv...) }

// IsAdmin reports whether the viewer is an admin.
func (p *Page) IsAdmin() bool { return p.User != nil && p.User.IsAdmin }

// Local formats t in the viewer's zone.
func (p *Page) Local(t time.Time, layout string) string { return t.In(p.Location).Format(layout) }

// DateTime formats t for tables: date, time and zone abbreviation.
func (p *Page) DateTime(t time.Time) string { return p.Local(t, "2006-01-02 15:04 MST") }

// Here is the current page's address, where the language switch returns.
func (p *Page) Here() string {
	return p.Path + encodeQuery(p.Query)
}

func encodeQuery(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// Active returns "page" for the navigation item of the current path, for aria-current.
func (p *Page) Active(prefix string) string {
	if prefix == "/" && p.Path == "/" || prefix != "/" && len(p.Path) >= len(prefix) && p.Path[:len(prefix)] == prefix {
		return "page"
	}
	return "false"
}
