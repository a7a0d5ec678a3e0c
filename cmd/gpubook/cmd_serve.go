package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/alexedwards/scs/postgresstore"
	"github.com/alexedwards/scs/sqlite3store"
	"github.com/alexedwards/scs/v2"
	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/handlers"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/web"
)

// serve runs the portal until ctx ends (SIGINT or SIGTERM), then shuts down
// gracefully: in-flight requests finish before run returns.
func (c *cli) serve(ctx context.Context, args []string) error {
	f := newFlags("serve", "gpubook serve [--no-migrate] [flags]",
		"Serves the portal. Pending database migrations are applied first unless --no-migrate is given,\nin which case gpubook refuses to start on an outdated schema.", true)
	noMigrate := f.Bool("no-migrate", false, "do not apply migrations; refuse to start if any are pending")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	log := c.logger(cfg)
	slog.SetDefault(log)
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("cli: serve: %w", err)
	}
	defer db.Close()
	db.SetMaxConns(cfg.DatabaseMaxConns)
	if err := prepareSchema(ctx, db, *noMigrate, log); err != nil {
		return fmt.Errorf("cli: serve: %w", err)
	}
	sessions, stop := sessionStore(db)
	defer stop()
	runner, err := newJobRunner(cfg, db, log, clockwork.NewRealClock())
	if err != nil {
		return fmt.Errorf("cli: serve: %w", err)
	}
	wcfg := c.webConfig(cfg, log)
	wcfg.JobStates = runner.RunStates
	srv, err := web.New(wcfg, telemetry.NewWhole(db), sessions)
	if err != nil {
		return fmt.Errorf("cli: serve: %w", err)
	}
	logStart(log, cfg, db.Dialect)
	stopPprof, err := startPprof(cfg.PprofListen, log)
	if err != nil {
		return fmt.Errorf("cli: serve: %w", err)
	}
	defer stopPprof()
	if err := c.registerJobs(cfg, db, runner, log); err != nil {
		return fmt.Errorf("cli: serve: %w", err)
	}
	return runBeside(ctx, runner, func(ctx context.Context) error { return srv.Run(ctx, c.ready) })
}

// webConfig is the server's part of the configuration.
func (c *cli) webConfig(cfg Config, log *slog.Logger) web.Config {
	return web.Config{
		Listen: cfg.Listen, BaseURL: cfg.BaseURL, Location: cfg.Location, DevLogin: cfg.DevLogin, Limits: cfg.bookingLimits(),
		Now: c.now, Logger: log, SSO: ssoConfig(cfg), I18n: c.bundle,
		SessionIdle: cfg.SSO.SessionIdle, SessionMaxAge: cfg.SSO.SessionMaxAge,
		IdlePolicy: cfg.Agent.IdlePolicy, UsageRetention: cfg.Agent.Retention, Reports: cfg.Reports,
		TrustedProxies: cfg.TrustedProxies, MetricsListen: cfg.MetricsListen,
	}
}

// logStart says what this process runs with, and warns about a development
// sign-in that others can reach.
func logStart(log *slog.Logger, cfg Config, dialect string) {
	log.Info("starting gpubook", "version", versionString(), "dialect", dialect, "timezone", cfg.Location.String(), "slot_minutes", cfg.SlotMinutes)
	switch {
	case cfg.DevLogin && !isLoopback(cfg.Listen):
		log.Warn("development sign-in is ON on a non-loopback address: anyone who reaches this server can sign in as any user", "listen", cfg.Listen)
	case cfg.DevLogin:
		log.Info("development sign-in is on (no OIDC issuer, loopback address)", "listen", cfg.Listen)
	case cfg.OIDCIssuer != "":
		log.Info("development sign-in is off: an OIDC issuer is configured", "issuer", cfg.OIDCIssuer)
	}
}

// registerJobs puts every background task on the runner: each runs inside
// gpubook (no external cron) and under a database lease, so that one
// replica at a time does it.
func (c *cli) registerJobs(cfg Config, db *store.DB, runner *jobs.Runner, log *slog.Logger) error {
	if err := c.registerReports(cfg, db, runner, log); err != nil {
		return err
	}
	if err := c.registerAgentAlerts(cfg, db, runner); err != nil {
		return err
	}
	if err := c.registerPolicyJobs(cfg, db, runner); err != nil {
		return err
	}
	return c.registerUsageJobs(cfg, db, runner, log)
}

// usagePagesWarmEvery is how often a replica looks whether the rolled
// part of its usage pages moved on: a view in the time between a roll
// and the next look reads it itself.
const usagePagesWarmEvery = 30 * time.Second

// registerUsageJobs runs the hourly rollups of the usage every five minutes,
// creates the day partitions ahead every hour (PostgreSQL), and the
// retention of the minutes and of the rollups every six hours
// (docs/scaling.md). Minutes are never pruned before they are rolled.
func (c *cli) registerUsageJobs(cfg Config, db *store.DB, runner *jobs.Runner, log *slog.Logger) error {
	busy := cfg.Reports.OrDefault().BusyUtilPct
	tel := telemetry.New(db)
	// The usage pages open on the week in progress in the cluster's zone,
	// read with the cluster's rules: the warm keeps that week ready.
	warm := func(ctx context.Context) error { return db.WarmUsagePages(ctx, c.now(), cfg.Location, cfg.Reports) }
	err := runner.Register("usage-rollup", 5*time.Minute, func(ctx context.Context) error {
		// Which hours are complete is decided on the database's clock:
		// ingest of the current hour skips the job's lock by that clock
		// (migration 00034), so the job reads that clock too.
		now, err := db.Now(ctx)
		if err != nil {
			return err
		}
		res, err := db.RollUsage(ctx, now, now.Add(-cfg.Agent.Retention), busy)
		if res.Rolled > 0 || res.Rerolled > 0 {
			log.Info("usage rollup", "hours", res.Rolled, "rerolled_hours", res.Rerolled, "rolled_to", models.HourStart(res.RolledTo))
		}
		if err == nil && (res.Rolled > 0 || res.Rerolled > 0) {
			// The replica that rolled warms its usage pages at once,
			// not at the warm's next tick.
			err = warm(ctx)
		}
		return err
	})
	if err != nil {
		return err
	}
	// Every replica keeps, in the background, the week the usage pages
	// open on ready, its rolled part read again once a roll has moved it
	// on, so that no viewer waits for it (models/store/report_warm.go).
	if err := runner.RegisterEverywhere("usage-pages-warm", usagePagesWarmEvery, warm); err != nil {
		return err
	}
	err = runner.Register("usage-partitions", time.Hour, func(ctx context.Context) error {
		n, err := tel.EnsureUsagePartitions(ctx, c.now())
		if n > 0 {
			log.Info("usage partitions created ahead", "partitions", n)
		}
		return err
	})
	if err != nil {
		return err
	}
	return runner.Register("usage-retention", 6*time.Hour, func(ctx context.Context) error {
		now := c.now()
		before := now.Add(-cfg.Agent.Retention)
		if rolled, err := db.UsageRolledTo(ctx); err != nil {
			return err
		} else if rolled.Before(before) {
			before = rolled
		}
		n, err := tel.PruneUsage(ctx, before)
		if n > 0 {
			log.Info("usage retention: pruned GPU-minutes", "rows", n, "before", before, "retention_days", int(cfg.Agent.Retention/(24*time.Hour)))
		}
		if err != nil {
			return err
		}
		n, err = db.PruneUsageHours(ctx, now.Add(-cfg.Agent.RollupRetention))
		if n > 0 {
			log.Info("usage retention: pruned hourly sums", "rows", n, "retention_days", int(cfg.Agent.RollupRetention/(24*time.Hour)))
		}
		return err
	})
}

// prepareSchema migrates, or with noMigrate checks that nothing is pending:
// an operator who migrates separately must not get a server on an old schema.
func prepareSchema(ctx context.Context, db *store.DB, noMigrate bool, log *slog.Logger) error {
	if !noMigrate {
		return migrateUp(ctx, db, log)
	}
	pending, err := db.Pending(ctx)
	if err != nil {
		return err
	}
	if pending > 0 {
		return fmt.Errorf("%d database migration(s) pending and --no-migrate given; run 'gpubook migrate up' first", pending)
	}
	return nil
}

// sessionStore keeps sessions in the shared database (table "sessions",
// made by our migrations), so that replicas share them. stop ends the
// store's background clean-up.
func sessionStore(db *store.DB) (scs.Store, func()) {
	if db.Dialect == store.Postgres {
		s := postgresstore.New(db.SQL)
		return s, s.StopCleanup
	}
	s := sqlite3store.New(db.SQL)
	return s, s.StopCleanup
}

// version runs "gpubook version"; it reads no configuration, so it works
// even where the environment is broken.
func (c *cli) version(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := &flags{FlagSet: fs, usage: "gpubook version", about: "Prints the version of this build."}
	if _, _, err := f.parse(c, args, 0, 0); err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, "gpubook", versionString())
	return nil
}

// versionString is the module version of the build, with the VCS revision when Go recorded one.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v + " " + bi.GoVersion
}

// ssoConfig is the web server's SSO set-up, nil when no issuer is configured.
func ssoConfig(cfg Config) *handlers.SSOConfig {
	if cfg.SSO.Issuer == "" {
		return nil
	}
	s := cfg.SSO.SSOConfig
	return &s
}
