package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpubook/gpubook/models"
)

// user runs "gpubook user add|set|list|disable|enable|rename": the way to
// create the first admin before SSO is configured, to give people their
// Unix logins, and to offboard or rename them.
func (c *cli) user(ctx context.Context, args []string) error {
	return c.group(ctx, "user", args, []subcommand{
		{"add", c.userAdd},
		{"set", c.userSet},
		{"list", c.userList},
		{"disable", c.userDisable},
		{"enable", c.userEnable},
		{"rename", c.userRename},
	})
}

// userSet sets a user's Unix login on the GPU nodes, for sites whose logins
// are not the local part of the email and whose IdP does not send them.
func (c *cli) userSet(ctx context.Context, args []string) error {
	f := newFlags("user set", "gpubook user set --email E --unix NAME [--unix-extra a,b]",
		"Sets the user's Unix login on the GPU servers (and extra names, for shared or old accounts): bookings reach "+
			"these logins and their use is counted for the user. --unix \"\" goes back to the part of the email before the @. "+
			"A name may belong to one user only.", false)
	email := f.String("email", "", "the user's `email` address (required)")
	unix := f.String("unix", "", "the Unix login `NAME` (required; empty: back to the assumed one)")
	extra := f.String("unix-extra", "", "extra Unix `names`, comma-separated (replaces the current ones)")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	given := false
	f.Visit(func(fl *flag.Flag) { given = given || fl.Name == "unix" })
	if !given {
		return fmt.Errorf("user set: --unix is required (--unix \"\" for the assumed login)")
	}
	x := models.UnixIdentity{Name: *unix, Extra: models.ParseUnixNames(*extra), Source: models.UnixSourceAdmin}
	if x.Name == "" && len(x.Extra) == 0 {
		x.Source = models.UnixSourceAssumed
	}
	if err := x.Validate(); err != nil {
		return c.explain("user set", err)
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cli: user set: %w", err)
	}
	defer db.Close()
	u, err := db.UserByEmail(ctx, *email)
	if err != nil {
		return c.explain("user set", err)
	}
	if err := db.SetUnixLogin(ctx, u.ID, x, models.CLIActor); err != nil {
		return c.explain("user set", err)
	}
	u.Unix = x.Name
	fmt.Fprintf(c.stdout, "user %d <%s>: unix login %s\n", u.ID, u.Email, unixLabel(u, x.Extra))
	return nil
}

// unixLabel is the login as the CLI prints it: with "(assumed)" or the extra names.
func unixLabel(u *models.User, extra []string) string {
	s := u.UnixLogin()
	if u.UnixAssumed() {
		return s + " (assumed)"
	}
	if len(extra) > 0 {
		s += " +" + strings.Join(extra, ",")
	}
	return s
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
		name := u.Name
		if u.Disabled() {
			name += " (deactivated)"
		}
		rows = append(rows, []string{strconv.FormatInt(u.ID, 10), u.Email, name, unixLabel(&u, nil), yesNo(u.IsAdmin), dash(strings.Join(teams, ", "))})
	}
	return table(c.stdout, []string{"ID", "EMAIL", "NAME", "UNIX", "ADMIN", "TEAMS"}, rows)
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
