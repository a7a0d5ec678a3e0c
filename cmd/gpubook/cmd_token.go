package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gpubook/gpubook/models"
)

// token runs "gpubook token create|list|revoke". Tokens are stored hashed,
// so create is the only moment the secret exists in readable form.
func (c *cli) token(ctx context.Context, args []string) error {
	return c.group(ctx, "token", args, []subcommand{
		{"create", c.tokenCreate},
		{"list", c.tokenList},
		{"revoke", c.tokenRevoke},
	})
}

func (c *cli) tokenCreate(ctx context.Context, args []string) error {
	f := newFlags("token create", "gpubook token create --email E [--name LABEL]",
		"Creates a personal API token for a user and prints it once; only its hash is stored.", false)
	email := f.String("email", "", "the owner's `email` address (required)")
	label := f.String("name", "", "a `label` that says where the token is used (default \"token\")")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	if *email == "" {
		f.printUsage(c.stderr)
		return fmt.Errorf("token create: --email is required")
	}
	if _, err := models.ValidateTokenName(*label); err != nil {
		return c.explain("token create", err)
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cli: token create: %w", err)
	}
	defer db.Close()
	u, err := db.UserByEmail(ctx, *email)
	if err != nil {
		return c.explain("token create: "+models.NormalizeEmail(*email), err)
	}
	held, err := db.Tokens(ctx, u.ID)
	if err != nil {
		return fmt.Errorf("cli: token create: %w", err)
	}
	if err := models.CheckTokenCap(held); err != nil { // the cap the profile page holds users to
		return &cliError{msg: fmt.Sprintf("token create: %s already has %d active tokens, the most one user may hold; revoke one first ('gpubook token list --email %s', 'gpubook token revoke ID')",
			u.Email, models.MaxActiveTokens, u.Email), err: err}
	}
	tok, plain, err := db.CreateToken(ctx, u.ID, *label, c.now(), models.CLIActor)
	if err != nil {
		return c.explain("token create", err)
	}
	fmt.Fprintf(c.stdout, "Token %d (%q) for %s — shown only this once, store it now:\n\n    %s\n\n", tok.ID, tok.Name, u.Email, plain)
	fmt.Fprintf(c.stdout, "Use it as a bearer token, e.g.: curl -H \"Authorization: Bearer %s\" %s/api/v1/me\n", plain, cfg.BaseURL)
	return nil
}

func (c *cli) tokenList(ctx context.Context, args []string) error {
	f := newFlags("token list", "gpubook token list [--email E]", "Lists tokens (never their secrets), newest first.", false)
	email := f.String("email", "", "only the tokens of the user with this `email`")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cli: token list: %w", err)
	}
	defer db.Close()
	var userID int64
	if *email != "" {
		u, err := db.UserByEmail(ctx, *email)
		if err != nil {
			return c.explain("token list: "+models.NormalizeEmail(*email), err)
		}
		userID = u.ID
	}
	toks, err := db.Tokens(ctx, userID)
	if err != nil {
		return fmt.Errorf("cli: token list: %w", err)
	}
	rows := make([][]string, len(toks))
	for i, t := range toks {
		rows[i] = []string{strconv.FormatInt(t.ID, 10), t.UserEmail, t.Name, c.when(cfg, &t.CreatedAt), c.when(cfg, t.LastUsedAt), c.when(cfg, t.RevokedAt)}
	}
	return table(c.stdout, []string{"ID", "USER", "NAME", "CREATED", "LAST USED", "REVOKED"}, rows)
}

func (c *cli) tokenRevoke(ctx context.Context, args []string) error {
	f := newFlags("token revoke", "gpubook token revoke ID", "Revokes a token at once; requests that use it are refused from now on.", false)
	cfg, pos, err := f.parse(c, args, 1, 1)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil || id <= 0 {
		f.printUsage(c.stderr)
		return fmt.Errorf("token revoke: %q is not a token ID (see 'gpubook token list')", pos[0])
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cli: token revoke: %w", err)
	}
	defer db.Close()
	if err := db.RevokeToken(ctx, id, c.now(), models.CLIActor); err != nil {
		if models.ErrorCode(err) == models.ENOTFOUND {
			return &cliError{msg: fmt.Sprintf("token revoke: no active token %d (unknown or already revoked; see 'gpubook token list')", id), err: err}
		}
		return c.explain(fmt.Sprintf("token revoke %d", id), err)
	}
	fmt.Fprintf(c.stdout, "revoked token %d\n", id)
	return nil
}

// when formats an optional time in the cluster's zone, "-" for none.
func (c *cli) when(cfg Config, t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.In(cfg.Location).Format("2006-01-02 15:04 MST")
}
