// Package reports builds the weekly fairness report email of every user
// from the week's figures and enqueues it in the outbox.
package reports

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpubook/gpubook/models"
)

// Store is what building and enqueueing the weekly reports reads and writes.
type Store interface {
	models.WeekReader
	ReportEmailOptOuts(ctx context.Context) (map[int64]bool, error)
	FirstActivity(ctx context.Context) (time.Time, bool, error)
	EnqueueMail(ctx context.Context, m models.OutboxMessage) (bool, error)
}

// Mail renders a user's weekly report in their language and zone, as an
// email and as text; views.Mail implements it and cmd wires it, so that the
// domain does not import the templates.
type Mail interface {
	// WeeklyReport renders u's report r for week w; unmapped, given only
	// to an admin, is the week's use charged to nobody.
	WeeklyReport(u models.User, w models.Week, r models.UserReport, unmapped []models.UnixMinutes) (models.OutboxMessage, error)
	WeeklyReportText(u models.User, w models.Week, r models.UserReport) string
}

// Weekly turns one week's figures into every user's email and puts them in
// the outbox (models/mail sends them). The weekly job (cmd schedules it with
// models/jobs) and "gpubook report send" both call SendWeek, which is
// idempotent: each email's outbox dedup key is report:<week>:user:<id>, so a
// second run, a concurrent one on another replica or a run restarted after
// a crash adds nothing, and the outbox sends what is there exactly once.
type Weekly struct {
	Store    Store
	Mail     Mail
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
		var unmapped []models.UnixMinutes
		if u.IsAdmin { // use charged to nobody: only an admin can map it
			unmapped = d.Unmapped
		}
		m, err := r.Mail.WeeklyReport(u, w, d.UserReport(u), unmapped)
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
	return r.Mail.WeeklyReportText(*u, w, d.UserReport(*u)), nil
}
