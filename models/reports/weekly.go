// Package reports builds the weekly fairness report email of every user
// from the week's figures and enqueues it in the outbox.
package reports

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
	"github.com/gpubook/gpubook/views/i18n"
)

// Store is what building and enqueueing the weekly reports reads and writes.
type Store interface {
	models.WeekReader
	ReportEmailOptOuts(ctx context.Context) (map[int64]bool, error)
	FirstActivity(ctx context.Context) (time.Time, bool, error)
	EnqueueMail(ctx context.Context, m models.OutboxMessage) (bool, error)
}

// Weekly turns one week's figures into every user's email and puts them in
// the outbox (models/mail sends them). The weekly job (cmd schedules it with
// models/jobs) and "gpubook report send" both call SendWeek, which is
// idempotent: each email's outbox dedup key is report:<week>:user:<id>, so a
// second run, a concurrent one on another replica or a run restarted after
// a crash adds nothing, and the outbox sends what is there exactly once.
type Weekly struct {
	Store    Store
	I18n     *i18n.Bundle
	BaseURL  string
	Location *time.Location // the cluster's zone
	Rules    models.ReportRules
	Now      models.Clock
	Log      *slog.Logger
}

// Result says what a run did.
type Result struct {
	Week                              string
	Users, Enqueued, Queued, OptedOut int
	// BeforePortal says the week ended before the portal's first booking
	// or usage: nothing was sent or frozen (models.WeekBeforePortal).
	BeforePortal bool
}

// SendWeek enqueues week w's report for every user who wants the email.
// Only a finished week is sent.
func (r *Weekly) SendWeek(ctx context.Context, w models.Week) (Result, error) {
	res := Result{Week: w.String()}
	if r.Now().Before(w.End) {
		return res, models.NewError(models.EINVALID, models.M("err.report_week_running", "Week", w.String()))
	}
	first, ok, err := r.Store.FirstActivity(ctx)
	if err != nil {
		return res, err
	}
	if models.WeekBeforePortal(w, first, ok) {
		res.BeforePortal = true
		if r.Log != nil {
			r.Log.Info("weekly reports: week before the first booking or usage, not sent", "week", res.Week)
		}
		return res, nil
	}
	// Sending freezes the week: a re-send, the pages, the CSV and the
	// preview read the same snapshot from now on.
	d, err := r.Store.ReportWeekAt(ctx, w, r.Now(), r.Rules, true)
	if err != nil {
		return res, err
	}
	off, err := r.Store.ReportEmailOptOuts(ctx)
	if err != nil {
		return res, err
	}
	for _, u := range d.Users {
		res.Users++
		if off[u.ID] {
			res.OptedOut++
			continue
		}
		data := views.ReportEmailData{Report: d.UserReport(u), Links: r.links(w)}
		if u.IsAdmin { // use charged to nobody: only an admin can map it
			data.Unmapped, data.ClusterURL = d.Unmapped, views.EmailEnv{BaseURL: r.BaseURL}.URL("/admin/usage?week="+w.String())
		}
		m, err := views.ReportEmail(r.emailEnv(u), data)
		if err != nil {
			return res, err
		}
		created, err := r.Store.EnqueueMail(ctx, m)
		if err != nil {
			return res, fmt.Errorf("reports: report for user %d: %w", u.ID, err)
		}
		if created {
			res.Enqueued++
		} else {
			res.Queued++
		}
	}
	if r.Log != nil {
		r.Log.Info("weekly reports enqueued", "week", res.Week, "users", res.Users, "new", res.Enqueued, "already", res.Queued, "opted_out", res.OptedOut)
	}
	return res, nil
}

// Job is the periodic job's function. The job runner's weekly period is
// named by the week of the moment it fell due (Monday 08:00 of W50), and
// that moment reports the week before (W49).
func (r *Weekly) Job(ctx context.Context, period string) error {
	due, err := models.ParseWeek(period, r.Location)
	if err != nil {
		return err
	}
	_, err = r.SendWeek(ctx, due.Prev(1))
	return err
}

// Preview is the text version of user's report for week w, as of now for
// the week in progress and from its snapshot once frozen: what
// "gpubook report preview" prints.
func (r *Weekly) Preview(ctx context.Context, u *models.User, w models.Week) (string, error) {
	d, err := r.Store.ReportWeekAt(ctx, w, r.Now(), r.Rules, false)
	if err != nil {
		return "", err
	}
	return views.ReportText(r.emailEnv(*u).T, d.UserReport(*u), r.links(w)), nil
}

func (r *Weekly) emailEnv(u models.User) views.EmailEnv {
	return views.EmailEnvFor(r.I18n, r.BaseURL, r.Location, &u)
}

func (r *Weekly) links(w models.Week) views.ReportLinks {
	e := views.EmailEnv{BaseURL: r.BaseURL}
	return views.ReportLinks{Web: e.URL("/usage?week=" + w.String()), Preferences: e.PreferencesURL(), Definitions: e.URL(views.DefinitionsPath)}
}
