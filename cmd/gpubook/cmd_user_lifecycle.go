package main

import (
	"context"
	"fmt"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// userDisable deactivates the account of a person who leaves the lab.
func (c *cli) userDisable(ctx context.Context, args []string) error {
	f := newFlags("user disable", "gpubook user disable --email E",
		"Deactivates a user who leaves: bookings not started yet are cancelled and a running one ends now, with an "+
			"email to them; their API tokens and calendar feeds are revoked and they can no longer sign in. Their "+
			"history and reports stay under their name; \"gpubook user enable\" reactivates the account.", false)
	email := f.String("email", "", "the user's `email` address (required)")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cli: user disable: %w", err)
	}
	defer db.Close()
	u, err := db.UserByEmail(ctx, *email)
	if err != nil {
		return c.explain("user disable", err)
	}
	res, err := db.DisableUser(ctx, u.ID, models.CLIActor, c.now(), c.noticeMailer(cfg))
	if err != nil {
		return c.explain("user disable", err)
	}
	fmt.Fprintf(c.stdout, "user %d <%s> deactivated: %d bookings cancelled, %d ended, %d tokens and %d feeds revoked\n",
		u.ID, u.Email, res.Cancelled, res.Ended, res.Tokens, res.Feeds)
	return nil
}

// userEnable reactivates an account; its old tokens and feeds stay revoked.
func (c *cli) userEnable(ctx context.Context, args []string) error {
	f := newFlags("user enable", "gpubook user enable --email E",
		"Reactivates a deactivated user: they can sign in again. Their old API tokens and feeds stay revoked.", false)
	email := f.String("email", "", "the user's `email` address (required)")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cli: user enable: %w", err)
	}
	defer db.Close()
	u, err := db.UserByEmail(ctx, *email)
	if err != nil {
		return c.explain("user enable", err)
	}
	if err := db.EnableUser(ctx, u.ID, models.CLIActor, c.now()); err != nil {
		return c.explain("user enable", err)
	}
	fmt.Fprintf(c.stdout, "user %d <%s> reactivated\n", u.ID, u.Email)
	return nil
}

// userRename changes a user's email address, keeping their history.
func (c *cli) userRename(ctx context.Context, args []string) error {
	f := newFlags("user rename", "gpubook user rename --email OLD --to NEW",
		"Changes a user's email address: bookings, use, reports and the sign-in link stay theirs.", false)
	email := f.String("email", "", "the user's current `email` address (required)")
	to := f.String("to", "", "the new `email` address (required)")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cli: user rename: %w", err)
	}
	defer db.Close()
	u, err := db.UserByEmail(ctx, *email)
	if err != nil {
		return c.explain("user rename", err)
	}
	if err := db.RenameUser(ctx, u.ID, *to, models.CLIActor, c.now()); err != nil {
		return c.explain("user rename", err)
	}
	fmt.Fprintf(c.stdout, "user %d: %s is now %s\n", u.ID, u.Email, models.NormalizeEmail(*to))
	return nil
}

// noticeMailer renders a notice as its email in the recipient's language,
// as the server's admin pages do, for the outbox the server sends from.
func (c *cli) noticeMailer(cfg Config) models.NotificationMailer {
	return func(n models.Notification, to *models.User) (models.OutboxMessage, error) {
		return views.EmailMessage(views.EmailEnvFor(c.bundle, cfg.BaseURL, cfg.Location, to), n.Kind, n.DedupKey, to, n)
	}
}
