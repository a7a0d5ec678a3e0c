package main

import (
	"context"
	"fmt"
	"log/slog"
	netmail "net/mail"
	"strconv"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/mail"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/views"
)

// mail runs "gpubook mail": check the SMTP settings and look at the outbox.
func (c *cli) mail(ctx context.Context, args []string) error {
	return c.group(ctx, "mail", args, []subcommand{
		{"test", c.mailTest},
		{"status", c.mailStatus},
		{"requeue", c.mailRequeue},
	})
}

func (c *cli) mailTest(ctx context.Context, args []string) error {
	f := newFlags("mail test", "gpubook mail test --to ADDRESS [--now] [--language en|zh-CN]",
		"Queues a test email in the outbox; the running server sends it. With --now it is sent at once\nand the SMTP server's answer is printed (GPUBOOK_SMTP_* must be set).", false)
	to := f.String("to", "", "recipient `address` (required)")
	now := f.Bool("now", false, "send at once instead of leaving it to the server")
	lang := f.String("language", "", "`language` of the email: en or zh-CN (default: the recipient's, if a user)")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	if a, err := netmail.ParseAddress(*to); err != nil || a.Address != *to {
		return fmt.Errorf("mail test: --to: %q is not an email address", *to)
	}
	if *lang != "" && !models.ValidLanguage(*lang) {
		return fmt.Errorf("mail test: --language: %q is not en or zh-CN", *lang)
	}
	if *now && !cfg.SMTP.Enabled() {
		return fmt.Errorf("mail test: --now: GPUBOOK_SMTP_HOST is not set")
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("mail test: %w", err)
	}
	defer db.Close()
	id, err := c.queueTestMail(ctx, db, cfg, *to, *lang)
	if err != nil {
		return err
	}
	if !*now {
		fmt.Fprintf(c.stdout, "queued test email #%d to %s; the server sends it within seconds\n", id, *to)
		return nil
	}
	return c.sendNow(ctx, db, cfg, id, *to)
}

// queueTestMail renders the test email in the recipient's language (the
// user's setting when the address is a user's) and puts it in the outbox
// under a dedup key with the time, so that every run sends a new one.
func (c *cli) queueTestMail(ctx context.Context, db *store.DB, cfg Config, to, lang string) (int64, error) {
	env := views.EmailEnv{BaseURL: cfg.BaseURL, Location: cfg.Location}
	var user *models.User
	if u, err := db.UserByEmail(ctx, to); err == nil {
		user, env.Name, env.Location = u, u.Name, u.Location(cfg.Location)
		lang = firstNonEmpty(lang, u.Language)
	}
	env.T = c.bundle.For(firstNonEmpty(lang, "en"))
	now := c.now()
	key := "test:" + now.UTC().Format(time.RFC3339Nano) + ":" + to
	m, err := views.EmailMessage(env, "test", key, user, views.TestEmail{SentAt: now})
	if err != nil {
		return 0, fmt.Errorf("mail test: %w", err)
	}
	m.ToEmail, m.CreatedAt, m.NextAttemptAt = to, now, now
	if _, err := db.EnqueueMail(ctx, m); err != nil {
		return 0, c.explain("mail test", err)
	}
	queued, err := db.OutboxMessageByKey(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("mail test: %w", err)
	}
	return queued.ID, nil
}

// sendNow sends the queued message through the same path as the worker,
// so that the outbox records the result, and prints the server's answer.
func (c *cli) sendNow(ctx context.Context, db *store.DB, cfg Config, id int64, to string) error {
	r, err := newOutbox(cfg, db, c.logger(cfg), clockwork.NewRealClock(), jobs.NewOwner())
	if err != nil {
		return fmt.Errorf("mail test: %w", err)
	}
	sendErr, err := r.SendNow(ctx, id)
	if err != nil {
		return fmt.Errorf("mail test: %w", err)
	}
	if sendErr != nil {
		m, _ := db.OutboxMessage(ctx, id)
		next := ""
		if m != nil && m.Status == models.OutboxPending {
			next = "; the server retries it at " + m.NextAttemptAt.In(cfg.Location).Format("2006-01-02 15:04:05 MST")
		}
		return fmt.Errorf("mail test: %s refused or unreachable (%s): %v%s", mailerServer(cfg), models.DeliveryOutcome(sendErr), sendErr, next)
	}
	fmt.Fprintf(c.stdout, "sent test email #%d to %s via %s\n", id, to, mailerServer(cfg))
	return nil
}

func mailerServer(cfg Config) string {
	return cfg.SMTP.Host + ":" + strconv.Itoa(cfg.SMTP.Port) + " (" + cfg.SMTP.TLS + ")"
}

func (c *cli) mailStatus(ctx context.Context, args []string) error {
	f := newFlags("mail status", "gpubook mail status", "Counts the outbox's messages by status.", false)
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("mail status: %w", err)
	}
	defer db.Close()
	st, err := db.OutboxStats(ctx)
	if err != nil {
		return fmt.Errorf("mail status: %w", err)
	}
	notes := map[string]string{
		models.OutboxPending:     "waiting to be sent or retried",
		models.OutboxSending:     "being sent now",
		models.OutboxSent:        "accepted by the SMTP server (kept 30 days)",
		models.OutboxFailed:      "refused for good or out of retries",
		models.OutboxUnconfirmed: "outcome unknown (sender stopped mid-send); resent only by `gpubook mail requeue`",
	}
	rows := make([][]string, 0, len(models.OutboxStatuses))
	for _, s := range models.OutboxStatuses {
		rows = append(rows, []string{s, strconv.FormatInt(st.Counts[s], 10), notes[s]})
	}
	if err := table(c.stdout, []string{"STATUS", "COUNT", "MEANING"}, rows); err != nil {
		return err
	}
	if st.OldestPending != nil {
		fmt.Fprintf(c.stdout, "oldest pending since %s\n", st.OldestPending.In(cfg.Location).Format("2006-01-02 15:04:05 MST"))
	}
	if !cfg.SMTP.Enabled() {
		fmt.Fprintln(c.stdout, "SMTP not configured (GPUBOOK_SMTP_HOST); mail waits in the outbox")
	}
	return nil
}

// outboxEvery is how often every replica's outbox worker looks for mail.
const outboxEvery = 10 * time.Second

// newJobRunner builds the background jobs from the configuration; serve
// runs them beside the web server. The outbox worker (models/mail) is
// registered here; without SMTP it has no sender and mail waits.
func newJobRunner(cfg Config, db *store.DB, log *slog.Logger, clock clockwork.Clock) (*jobs.Runner, error) {
	runner, err := jobs.New(jobs.Config{Store: db, Clock: clock, Logger: log})
	if err != nil {
		return nil, err
	}
	outbox, err := newOutbox(cfg, db, log, clock, runner.Owner())
	if err != nil {
		return nil, err
	}
	if !cfg.SMTP.Enabled() {
		log.Warn("SMTP not configured; mail waits in the outbox")
	} else if err := runner.RegisterEverywhere("outbox", outboxEvery, outbox.Deliver); err != nil {
		return nil, err
	}
	return runner, runner.Register("outbox-cleanup", time.Hour, outbox.Cleanup)
}

// newOutbox builds the outbox worker; its sender is nil without SMTP.
func newOutbox(cfg Config, db *store.DB, log *slog.Logger, clock clockwork.Clock, owner string) (*mail.Outbox, error) {
	oc := mail.OutboxConfig{Store: db, Clock: clock, Logger: log, Owner: owner,
		ResendUnconfirmedAfter: cfg.SMTP.ResendUnconfirmedAfter}
	if cfg.SMTP.Enabled() {
		m, err := mail.New(cfg.SMTP.Settings, clock.Now)
		if err != nil {
			return nil, err
		}
		oc.Sender = m
	}
	return mail.NewOutbox(oc)
}

// runBeside runs the background jobs for as long as serve runs: both stop
// when ctx ends, and the jobs stop too when the server fails to start.
// It returns once both have stopped, the server's error first.
func runBeside(ctx context.Context, runner *jobs.Runner, serve func(context.Context) error) error {
	jctx, stopJobs := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runner.Run(jctx) }()
	err := serve(ctx)
	stopJobs()
	if jerr := <-done; err == nil {
		err = jerr
	}
	return err
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
