package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/reports"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/views"
)

// reportJob is the job runner's name for the weekly reports; its periods
// are the weeks in which the schedule fell due.
const reportJob = "weekly-reports"

// reportRules reads GPUBOOK_REPORT_BUSY_UTIL_PCT,
// GPUBOOK_REPORT_UNBOOKED_WEIGHT (what an unbooked GPU-hour weighs in the
// fair-share usage, above 0; docs/reports.md), the charge settings
// (chargeRules) and GPUBOOK_REPORT_SCHEDULE ("mon 08:00", cluster time
// zone).
func reportRules(getenv func(string) string) (models.ReportRules, error) {
	r := models.DefaultReportRules
	if v := getenv("GPUBOOK_REPORT_BUSY_UTIL_PCT"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 100 {
			return r, fmt.Errorf("GPUBOOK_REPORT_BUSY_UTIL_PCT: %q is not a percentage from 0 to 100", v)
		}
		r.BusyUtilPct = f
	}
	if v := getenv("GPUBOOK_REPORT_UNBOOKED_WEIGHT"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f <= 100) {
			return r, fmt.Errorf("GPUBOOK_REPORT_UNBOOKED_WEIGHT: %q is not a weight above 0 and at most 100", v)
		}
		r.UnbookedWeight = f
	}
	if err := chargeRules(getenv, &r); err != nil {
		return r, err
	}
	if v := getenv("GPUBOOK_REPORT_LOW_INTENSITY_PCT"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f <= 100) {
			return r, fmt.Errorf("GPUBOOK_REPORT_LOW_INTENSITY_PCT: %q is not a percentage above 0 and at most 100", v)
		}
		r.LowIntensityPct = f
	}
	if v := getenv("GPUBOOK_REPORT_SCHEDULE"); v != "" {
		s, err := models.ParseSchedule(v)
		if err != nil {
			return r, fmt.Errorf("GPUBOOK_REPORT_SCHEDULE: %q is not like \"mon 08:00\"", v)
		}
		r.Schedule = s
	}
	return r, nil
}

// resolveReports is reportRules as a step of Config's resolve, so that a bad
// value stops every command at start-up, like every other setting.
func resolveReports(getenv func(string) string, cfg *Config) error {
	r, err := reportRules(getenv)
	cfg.Reports = r
	return err
}

// newReportRun builds the report run that serve schedules and the CLI calls.
func (c *cli) newReportRun(cfg Config, db *store.DB, log *slog.Logger) *reports.Weekly {
	return &reports.Weekly{Store: db, Mail: c.mailViews(cfg), Location: cfg.Location, Rules: cfg.Reports, Now: c.now, Log: log}
}

// registerReports schedules the weekly reports on the job runner: once
// per week across all replicas (the runner's period claim), and at start-up
// too, which catches up a Monday the server missed.
func (c *cli) registerReports(cfg Config, db *store.DB, runner *jobs.Runner, log *slog.Logger) error {
	run := c.newReportRun(cfg, db, log)
	s := cfg.Reports.Schedule
	return runner.RegisterPeriodic(reportJob, jobs.WeeklyPeriod(cfg.Location, s.Weekday, s.Hour, s.Minute), run.Job)
}

// report runs "gpubook report preview|send|recompute".
func (c *cli) report(ctx context.Context, args []string) error {
	return c.group(ctx, "report", args, []subcommand{
		{"preview", c.reportPreview},
		{"send", c.reportSend},
		{"recompute", c.reportRecompute},
	})
}

// reportSetup parses the week flag (default: the latest week due) and opens
// the store; its errors already name the command (name).
func (c *cli) reportSetup(ctx context.Context, cfg Config, name, week string) (*store.DB, *reports.Weekly, models.Week, error) {
	w := cfg.Reports.Schedule.DueWeek(c.now(), cfg.Location)
	if week != "" {
		var err error
		if w, err = models.ParseWeek(week, cfg.Location); err != nil {
			return nil, nil, w, c.explain(name+": --week", err)
		}
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return nil, nil, w, fmt.Errorf("cli: %s: %w", name, err)
	}
	return db, c.newReportRun(cfg, db, c.logger(cfg)), w, nil
}

func (c *cli) reportPreview(ctx context.Context, args []string) error {
	f := newFlags("report preview", "gpubook report preview --email E [--week 2026-W49]",
		"Prints the text version of a user's weekly report (default: the latest week due).", false)
	email := f.String("email", "", "the user's `email` address (required)")
	week := f.String("week", "", "ISO `week`, e.g. 2026-W49")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	if *email == "" {
		return fmt.Errorf("report preview: --email is required")
	}
	db, run, w, err := c.reportSetup(ctx, cfg, "report preview", *week)
	if err != nil {
		return err
	}
	defer db.Close()
	u, err := db.UserByEmail(ctx, *email)
	if err != nil {
		return c.explain("report preview", err)
	}
	text, err := run.Preview(ctx, u, w)
	if err != nil {
		return c.explain("report preview", err)
	}
	fmt.Fprint(c.stdout, text)
	return nil
}

func (c *cli) reportSend(ctx context.Context, args []string) error {
	f := newFlags("report send", "gpubook report send [--week 2026-W49]",
		"Puts a finished week's reports in the outbox (default: the latest week due). Idempotent like the schedule:\na user who already has that week's report gets nothing new.", false)
	week := f.String("week", "", "ISO `week`, e.g. 2026-W49")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	db, run, w, err := c.reportSetup(ctx, cfg, "report send", *week)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := run.SendWeek(ctx, w)
	if err != nil {
		return c.explain("report send", err)
	}
	if res.BeforePortal {
		fmt.Fprintf(c.stdout, "week %s: not sent and not frozen: it ended before the first booking or usage the portal has\n", res.Week)
		return nil
	}
	fmt.Fprintf(c.stdout, "week %s: %d users, %d reports queued now, %d already queued, %d opted out\n",
		res.Week, res.Users, res.Enqueued, res.Queued, res.OptedOut)
	return nil
}

// reportRecompute runs "gpubook report recompute --week W": an ended week
// computed afresh from today's data, its snapshot replaced and the change
// audit-logged; it prints every value that any page, export or email now
// shows differently (views.DiffWeeks), before → after.
func (c *cli) reportRecompute(ctx context.Context, args []string) error {
	f := newFlags("report recompute", "gpubook report recompute --week 2026-W49",
		"Recomputes a closed week's figures from today's data and replaces its frozen snapshot (audited);\nprints which users' figures changed, before -> after.", false)
	week := f.String("week", "", "ISO `week`, e.g. 2026-W49 (required)")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	if *week == "" {
		return fmt.Errorf("report recompute: --week is required")
	}
	db, _, w, err := c.reportSetup(ctx, cfg, "report recompute", *week)
	if err != nil {
		return err
	}
	defer db.Close()
	if c.now().Before(w.End) {
		return c.explain("report recompute", models.NewError(models.EINVALID, models.M("err.report_week_running", "Week", w.String())))
	}
	before, _, changes, err := db.RecomputeWeek(ctx, w, c.now(), cfg.Reports, models.CLIActor, views.WeekDiff(c.tr))
	if err != nil {
		return c.explain("report recompute", err)
	}
	fmt.Fprintf(c.stdout, "week %s recomputed (was frozen: %t): %d values changed\n", w, before != nil, len(changes))
	for _, ch := range changes {
		who := views.DiffWho(c.tr, ch)
		if ch.UserID != 0 {
			who = fmt.Sprintf("%s (user %d)", ch.Name, ch.UserID)
		}
		fmt.Fprintf(c.stdout, "%s, %s, %s: %s -> %s\n", who, views.DiffTableTitle(c.tr, ch.Table), views.DiffFigure(ch),
			views.DiffCell(ch.Before), views.DiffCell(ch.After))
	}
	return nil
}
