package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/gpubook/gpubook/models/store"
)

// migrate runs "gpubook migrate [up|status|down-one]". Unlike the other
// commands it never migrates implicitly: it is how an operator looks at and
// steps through the schema by hand.
func (c *cli) migrate(ctx context.Context, args []string) error {
	f := newFlags("migrate", "gpubook migrate [up|status|down-one] [--database-url URL]",
		"up (the default) applies every pending migration; status lists each migration and when it was applied;\ndown-one rolls back the newest applied migration.", false)
	cfg, pos, err := f.parse(c, args, 0, 1)
	if err != nil {
		return err
	}
	action := "up"
	if len(pos) == 1 {
		action = pos[0]
	}
	if action != "up" && action != "status" && action != "down-one" {
		f.printUsage(c.stderr)
		return fmt.Errorf("migrate: unknown action %q (want up, status or down-one)", action)
	}
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("cli: migrate: %w", err)
	}
	defer db.Close()
	switch action {
	case "status":
		return c.migrateStatus(ctx, db)
	case "down-one":
		v, err := db.MigrateDownOne(ctx)
		if err != nil {
			return fmt.Errorf("cli: migrate down-one: %w", err)
		}
		fmt.Fprintf(c.stdout, "rolled back migration %d\n", v)
		return nil
	}
	pending, err := db.Pending(ctx)
	if err != nil {
		return fmt.Errorf("cli: migrate up: %w", err)
	}
	if err := migrateUp(ctx, db, c.logger(cfg)); err != nil {
		return fmt.Errorf("cli: %w", err)
	}
	fmt.Fprintf(c.stdout, "applied %d migration(s); the database is up to date\n", pending)
	return nil
}

// migrateUp applies pending migrations and logs each applied version.
func migrateUp(ctx context.Context, db *store.DB, log *slog.Logger) error {
	versions, err := db.MigrateUp(ctx)
	if err != nil {
		return fmt.Errorf("migrate up: %w", err)
	}
	for _, v := range versions {
		log.Info("applied migration", "version", v, "dialect", db.Dialect)
	}
	return nil
}

func (c *cli) migrateStatus(ctx context.Context, db *store.DB) error {
	states, err := db.MigrationStatus(ctx)
	if err != nil {
		return fmt.Errorf("cli: migrate status: %w", err)
	}
	rows := make([][]string, len(states))
	for i, s := range states {
		applied := "pending"
		if s.Applied {
			applied = s.AppliedAt.UTC().Format(time.RFC3339)
		}
		rows[i] = []string{strconv.FormatInt(s.Version, 10), s.File, applied}
	}
	return table(c.stdout, []string{"VERSION", "FILE", "APPLIED AT"}, rows)
}
