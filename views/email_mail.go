package views

import (
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// Mail renders the emails that background work enqueues, each in its
// recipient's language and zone. It implements the small interfaces that
// models/reports and models/notify declare, so the domain never imports
// views; cmd (and web) wire it in.
type Mail struct {
	I18n     *i18n.Bundle
	BaseURL  string
	Location *time.Location // the cluster's zone
}

func (m *Mail) env(u *models.User) EmailEnv { return EmailEnvFor(m.I18n, m.BaseURL, m.Location, u) }

// Notice renders a priority-request notice (reminder, freed GPU, decision);
// it is a models.Mailer for the store's request methods.
func (m *Mail) Notice(n models.Notice, to *models.User) (models.OutboxMessage, error) {
	return EmailMessage(m.env(to), n.Kind, n.Kind, to, n)
}

// IdleWarning renders the warning to the owner of an idle booking under
// the idle policy p; key is the outbox dedup key the caller chose.
func (m *Mail) IdleWarning(to *models.User, key string, r models.IdleReport, p models.IdlePolicy) (models.OutboxMessage, error) {
	data := IdleWarning{Report: r, AutoRelease: p.AutoRelease, GraceMin: int(p.Grace / time.Minute)}
	return EmailMessage(m.env(to), EmailIdleWarning, key, to, data)
}

// NodeOffline renders the alert to an admin that node's agent is silent;
// key is the outbox dedup key the caller chose.
func (m *Mail) NodeOffline(to *models.User, key string, node models.AgentNode) (models.OutboxMessage, error) {
	return EmailMessage(m.env(to), EmailNodeOffline, key, to, NodeOffline{Node: node})
}

// WeeklyReport renders u's report r for week w. unmapped, given only to an
// admin, is the week's use charged to nobody, with a link to map it.
func (m *Mail) WeeklyReport(u models.User, w models.Week, r models.UserReport, unmapped []models.UnixMinutes) (models.OutboxMessage, error) {
	data := ReportEmailData{Report: r, Links: m.reportLinks(w)}
	if len(unmapped) > 0 {
		data.Unmapped, data.ClusterURL = unmapped, EmailEnv{BaseURL: m.BaseURL}.URL("/admin/usage?week="+w.String())
	}
	return ReportEmail(m.env(&u), data)
}

// WeeklyReportText is u's report r for week w as plain text, what
// "gpubook report preview" prints.
func (m *Mail) WeeklyReportText(u models.User, w models.Week, r models.UserReport) string {
	return ReportText(m.env(&u).T, r, m.reportLinks(w))
}

func (m *Mail) reportLinks(w models.Week) ReportLinks {
	e := EmailEnv{BaseURL: m.BaseURL}
	return ReportLinks{Web: e.URL("/usage?week=" + w.String()), Preferences: e.PreferencesURL(), Definitions: e.URL(DefinitionsPath)}
}
