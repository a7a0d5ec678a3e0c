package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
	"github.com/gpubook/gpubook/views/i18n"
)

// ReportRunStore is what a report run reads and writes.
type ReportRunStore interface {
	ReportStore
	ReportEmailOptOuts(ctx context.Context) (map[int64]bool, error)
	EnqueueMail(ctx context.Context, m models.OutboxMessage) (bool, error)
}

// ReportRun turns one week's figures into every user's email. It lives
// here, beside the report pages, because it is where the store and the
// views meet; the weekly job (cmd wires it into the job runner) and
// "gpubook report send" both call SendWeek, which is idempotent: each
// email's outbox dedup key is report:<week>:user:<id>, so a second run, a
// concurrent one on another replica or a run restarted after a crash adds
// nothing, and the outbox sends what is there exactly once.
type ReportRun struct {
	Store    ReportRunStore
	I18n     *i18n.Bundle
	BaseURL  string
	Location *time.Location // the cluster's zone
	Rules    models.ReportRules
	Now      models.Clock
	Log      *slog.Logger
}

// ReportRunResult says what a run did.
type ReportRunResult struct {
	Week                              string
	Users, Enqueued, Queued, OptedOut int
}

// SendWeek enqueues week w's report for every user who wants the email.
// Only a finished week is sent.
func (r *ReportRun) SendWeek(ctx context.Context, w models.Week) (ReportRunResult, error) {
	res := ReportRunResult{Week: w.String()}
	if r.Now().Before(w.End) {
		return res, models.NewError(models.EINVALID, models.M("err.report_week_running", "Week", w.String()))
	}
	d, err := r.Store.ReportWeek(ctx, w, w.End, r.Rules)
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
		m, err := views.ReportEmail(r.emailEnv(u), views.ReportEmailData{Report: d.UserReport(u), Links: r.links(w)})
		if err != nil {
			return res, err
		}
		created, err := r.Store.EnqueueMail(ctx, m)
		if err != nil {
			return res, fmt.Errorf("handlers: report for user %d: %w", u.ID, err)
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
func (r *ReportRun) Job(ctx context.Context, period string) error {
	due, err := models.ParseWeek(period, r.Location)
	if err != nil {
		return err
	}
	_, err = r.SendWeek(ctx, due.Prev(1))
	return err
}

// Preview is the text version of user's report for week w, as of now for
// the week in progress: what "gpubook report preview" prints.
func (r *ReportRun) Preview(ctx context.Context, u *models.User, w models.Week) (string, error) {
	asOf := w.End
	if now := r.Now(); now.Before(asOf) {
		asOf = now
	}
	d, err := r.Store.ReportWeek(ctx, w, asOf, r.Rules)
	if err != nil {
		return "", err
	}
	return views.ReportText(r.emailEnv(*u).T, d.UserReport(*u), r.links(w)), nil
}

func (r *ReportRun) emailEnv(u models.User) views.EmailEnv {
	return views.EmailEnvFor(r.I18n, r.BaseURL, r.Location, &u)
}

func (r *ReportRun) links(w models.Week) views.ReportLinks {
	e := views.EmailEnv{BaseURL: r.BaseURL}
	return views.ReportLinks{Web: e.URL("/usage?week=" + w.String()), Preferences: e.PreferencesURL()}
}
