package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpubook/gpubook/models"
)

// user runs "gpubook user add|list": the way to create the first admin
// before SSO is configured.
func (c *cli) user(ctx context.Context, args []string) error {
	return c.group(ctx, "user", args, []subcommand{
		{"add", c.userAdd},
		{"list", c.userList},
	})
}

func (c *cli) userAdd(ctx context.Context, args []string) error {
	f := newFlags("user add", "gpubook user add --email E --name N [--admin] [--sso-subject SUB] [--language en|zh-CN] [--time-zone ZONE]",
		"Adds a user. The user signs in later through SSO (or the development sign-in) with this email; "+
			"with --sso-subject, the IdP subject that may sign in as this user whatever its email claim says.", false)
	email := f.String("email", "", "the user's `email` address (required)")
	name := f.String("name", "", "the user's display `name` (required)")
	admin := f.Bool("admin", false, "make the user an administrator")
	subject := f.String("sso-subject", "", "the OIDC `subject` (sub claim) of this user at the IdP: links it in advance")
	lang := f.String("language", "", "`language`: en or zh-CN (default: the browser's choice)")
	tz := f.String("time-zone", "", "IANA `zone` the user sees times in (default: the cluster's)")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	u := &models.User{Email: *email, Name: *name, IsAdmin: *admin, Subject: *subject, Language: *lang, TimeZone: *tz}
	// Validate before opening the database, so that a typo writes nothing at all.
	if err := u.Validate(); err != nil {
		return c.explain("user add", err)
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cli: user add: %w", err)
	}
	defer db.Close()
	if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
		return c.explain("user add", err)
	}
	role := "user"
	if u.IsAdmin {
		role = "admin"
	}
	fmt.Fprintf(c.stdout, "added %s %d: %s <%s>\n", role, u.ID, u.Name, u.Email)
	return nil
}

func (c *cli) userList(ctx context.Context, args []string) error {
	f := newFlags("user list", "gpubook user list", "Lists every user with their teams.", false)
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cli: user list: %w", err)
	}
	defer db.Close()
	users, err := db.Users(ctx)
	if err != nil {
		return fmt.Errorf("cli: user list: %w", err)
	}
	all, err := db.AllMemberships(ctx) // one query, by team name, as MembershipsOf orders them
	if err != nil {
		return fmt.Errorf("cli: user list: %w", err)
	}
	byUser := map[int64][]string{}
	for _, m := range all {
		name := m.TeamName
		if m.Role == models.RoleLead {
			name += " (lead)"
		}
		byUser[m.UserID] = append(byUser[m.UserID], name)
	}
	rows := make([][]string, 0, len(users))
	for _, u := range users {
		teams := byUser[u.ID]
		rows = append(rows, []string{strconv.FormatInt(u.ID, 10), u.Email, u.Name, yesNo(u.IsAdmin), dash(strings.Join(teams, ", "))})
	}
	return table(c.stdout, []string{"ID", "EMAIL", "NAME", "ADMIN", "TEAMS"}, rows)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
