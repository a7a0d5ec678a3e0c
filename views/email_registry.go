package views

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// EmailEnv is what every email needs besides its own data: the recipient's
// language, the portal's address for links, and the zone to show times in.
type EmailEnv struct {
	T        *i18n.Translator
	BaseURL  string         // e.g. https://gpubook.example.org, no trailing slash
	Location *time.Location // the recipient's zone (User.Location of the cluster's)
	Name     string         // the recipient's name for the greeting; "" for none
}

// EmailEnvFor is the environment of an email to u: their language (English
// when they chose none), their time zone (else the cluster's) and name.
func EmailEnvFor(b *i18n.Bundle, baseURL string, cluster *time.Location, u *models.User) EmailEnv {
	return EmailEnv{T: b.For(i18n.Match(u.Language, "")), BaseURL: baseURL, Location: u.Location(cluster), Name: u.Name}
}

// PreferencesURL is where a recipient turns emails off; every footer links it.
func (e EmailEnv) PreferencesURL() string {
	return strings.TrimRight(e.BaseURL, "/") + "/profile#email"
}

// URL makes an absolute link into the portal from a path ("/bookings/42").
func (e EmailEnv) URL(path string) string { return strings.TrimRight(e.BaseURL, "/") + path }

// Time formats t for an email in the recipient's zone.
func (e EmailEnv) Time(t time.Time) string {
	loc := e.Location
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02 15:04 MST")
}

// Tr is a short alias used in email templates.
func (e EmailEnv) Tr(key string, kv ...any) string { return e.T.T(key, kv...) }

// emailKind is one kind of email: its subject, HTML body and text body.
// The layout (frame, greeting, footer) is added around both bodies.
type emailKind struct {
	subject func(e EmailEnv, data any) (string, error)
	html    func(e EmailEnv, data any) (templ.Component, error)
	text    func(e EmailEnv, data any) (string, error)
}

// kind adapts a kind's typed functions to the registry; passing the wrong
// data type is an error, not a panic.
func kind[D any](subject func(EmailEnv, D) string, html func(EmailEnv, D) templ.Component, text func(EmailEnv, D) string) emailKind {
	as := func(data any) (D, error) {
		d, ok := data.(D)
		if !ok {
			return d, fmt.Errorf("views: email data is %T, want %T", data, d)
		}
		return d, nil
	}
	return emailKind{
		subject: func(e EmailEnv, data any) (string, error) { d, err := as(data); return subject(e, d), err },
		html:    func(e EmailEnv, data any) (templ.Component, error) { d, err := as(data); return html(e, d), err },
		text:    func(e EmailEnv, data any) (string, error) { d, err := as(data); return text(e, d), err },
	}
}

// emailKinds is the registry: adding a kind is one templ file (its data
// type, subject, HTML and text) and one line here.
func emailKinds() map[string]emailKind {
	return map[string]emailKind{
		"test": kind(testEmailSubject, testEmailHTML, testEmailText),
		// Priority requests: the data is a models.Notice.
		models.NoticeNewRequest:    kind(priorityNewSubject, priorityNewHTML, priorityNewText),
		models.NoticeDecision:      kind(priorityDecidedSubject, priorityDecidedHTML, priorityDecidedText),
		models.NoticePreempted:     kind(preemptSubject, preemptHTML, preemptText),
		models.NoticeReminderStart: kind(reminderStartSubject, reminderStartHTML, reminderStartText),
		models.NoticeReminderEnd:   kind(reminderEndSubject, reminderEndHTML, reminderEndText),
		models.NoticeFreed:         kind(freedSubject, freedHTML, freedText),
		// What the node agents report.
		EmailIdleWarning: kind(idleSubject, idleHTML, idleText),
		EmailNodeOffline: kind(offlineSubject, offlineHTML, offlineText),
		// In-app notices that also go by email: the data is a models.Notification.
		models.NotifyOutOfService:    kind(noticeEmailSubject, noticeEmailHTML, noticeEmailText),
		models.NotifyAccountDisabled: kind(noticeEmailSubject, noticeEmailHTML, noticeEmailText),
	}
}

// Email kinds of the agent reports.
const (
	EmailIdleWarning = "idle_warning"
	EmailNodeOffline = "node_offline"
)

// RenderEmail renders one email of a kind in e's language: the subject,
// the plain text and the HTML (the layout around the kind's body).
func RenderEmail(e EmailEnv, kindName string, data any) (subject, text, html string, err error) {
	k, ok := emailKinds()[kindName]
	if !ok {
		return "", "", "", fmt.Errorf("views: unknown email kind %q", kindName)
	}
	if subject, err = k.subject(e, data); err != nil {
		return "", "", "", err
	}
	body, err := k.html(e, data)
	if err != nil {
		return "", "", "", err
	}
	var buf bytes.Buffer
	if err := emailLayout(e, subject, body).Render(context.Background(), &buf); err != nil {
		return "", "", "", fmt.Errorf("views: render %s email: %w", kindName, err)
	}
	t, err := k.text(e, data)
	if err != nil {
		return "", "", "", err
	}
	return subject, emailTextLayout(e, t), buf.String(), nil
}

// EmailMessage renders an email for a user and wraps it as an outbox
// message with its dedup key, ready for EnqueueMail or a store method that
// enqueues in its own transaction.
func EmailMessage(e EmailEnv, kindName, dedupKey string, to *models.User, data any) (models.OutboxMessage, error) {
	subject, text, html, err := RenderEmail(e, kindName, data)
	if err != nil {
		return models.OutboxMessage{}, err
	}
	m := models.OutboxMessage{Kind: kindName, DedupKey: dedupKey, Lang: e.T.Lang, Subject: subject,
		TextBody: text, HTMLBody: html, UnsubscribeURL: e.PreferencesURL()}
	if to != nil {
		id := to.ID
		m.ToUserID, m.ToEmail = &id, to.Email
	}
	return m, nil
}

// emailTextLayout frames a text body like the HTML layout: greeting, body,
// and a footer after the conventional "-- " signature separator.
func emailTextLayout(e EmailEnv, body string) string {
	var b strings.Builder
	b.WriteString(greeting(e) + "\n\n")
	b.WriteString(strings.TrimSpace(body) + "\n\n")
	b.WriteString("-- \n")
	b.WriteString(e.Tr("email.footer_why", "BaseURL", e.BaseURL) + "\n")
	b.WriteString(e.Tr("email.footer_prefs") + e.Tr("common.colon") + " " + e.PreferencesURL() + "\n")
	b.WriteString(e.Tr("email.footer_auto") + "\n")
	return b.String()
}

func greeting(e EmailEnv) string {
	if e.Name == "" {
		return e.Tr("email.greeting_anon")
	}
	return e.Tr("email.greeting", "Name", e.Name)
}
