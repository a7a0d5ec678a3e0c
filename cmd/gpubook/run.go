package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/text/width"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/views/i18n"
)

// cli carries what every command needs. Everything comes in through run's
// parameters, so tests run the real commands in-process and read their output.
type cli struct {
	getenv         func(string) string
	stdout, stderr io.Writer
	ready          chan<- net.Addr // serve reports its address here; nil outside tests
	now            models.Clock
	tr             *i18n.Translator
	// bundle holds the catalogs, parsed once per process and shared by the
	// server, its jobs and the commands that render mail.
	bundle *i18n.Bundle
	// stdin is read by login for a token piped in; pollMin is the first
	// interval of book --wait (tests shorten it).
	stdin   io.Reader
	pollMin time.Duration
}

// command is one top-level verb of gpubook.
type command struct {
	name, summary string
	run           func(c *cli, ctx context.Context, args []string) error
	group         string
}

// commandGroups orders --help: the server's commands open the database,
// the client's talk to a portal over HTTP only.
var commandGroups = []struct{ name, title string }{
	{"server", "Server (on the portal's machine, open the database):"},
	{"admin", "Administration (open the database):"},
	{"client", "Client (talk to a portal over HTTP with your personal token; see 'gpubook login'):"},
}

func commands() []command {
	return []command{
		{"serve", "run the web portal (applies pending migrations first)", (*cli).serve, "server"},
		{"migrate", "apply, list or roll back database migrations", (*cli).migrate, "server"},
		{"demo", "fill an empty database with demo users, nodes and bookings", (*cli).demo, "server"},
		{"backup", "write a consistent copy of the database to a file, while the server runs", (*cli).backup, "server"},
		{"restore", "restore a backup into an empty database, then migrate", (*cli).restore, "server"},
		{"version", "print the version", (*cli).version, "server"},
		{"user", "add, list, disable, enable and rename users", (*cli).user, "admin"},
		{"token", "create, list and revoke personal API tokens", (*cli).token, "admin"},
		{"node", "register and list GPU nodes", (*cli).node, "admin"},
		{"mail", "send a test email and show the outbox", (*cli).mail, "admin"},
		{"report", "preview, send or recompute the weekly usage reports", (*cli).report, "admin"},
		{"import", "import past and future bookings from a CSV file", (*cli).importCmd, "admin"},
		{"login", "store the portal's URL and your personal token", (*cli).login, "client"},
		{"free", "what is free now, and for how long", (*cli).free, "client"},
		{"book", "book GPUs now or at the earliest slot (--short: only the UUIDs)", (*cli).book, "client"},
		{"ls", "your current and upcoming bookings", (*cli).ls, "client"},
		{"extend", "extend one of your bookings", (*cli).extend, "client"},
		{"release", "release (or cancel, before it starts) one of your bookings", (*cli).release, "client"},
		{"request", "file a priority request with its justification", (*cli).request, "client"},
		{"limits", "the booking rules that apply to you, and this week's use", (*cli).limits, "client"},
	}
}

// run is the whole program; main only calls it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runWith(ctx, args, getenv, stdout, stderr, nil)
}

// runWith is run with a channel on which serve reports the address it
// listens on, so that a test can use port 0 and still find the server.
func runWith(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- net.Addr) error {
	return runIO(ctx, args, getenv, cliIO{stdin: os.Stdin, stdout: stdout, stderr: stderr, ready: ready})
}

// cliIO is what runIO takes from its caller besides the arguments: the
// standard streams and, for tests, serve's address channel, a shorter
// first poll interval for book --wait and a clock (nil: time.Now).
type cliIO struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	ready          chan<- net.Addr
	pollMin        time.Duration
	now            func() time.Time
}

// runIO is run with every stream and test hook explicit.
func runIO(ctx context.Context, args []string, getenv func(string) string, io cliIO) error {
	bundle, err := i18n.Load()
	if err != nil {
		return err
	}
	if io.pollMin <= 0 {
		io.pollMin = 2 * time.Second
	}
	if io.now == nil {
		io.now = time.Now
	}
	stdout, stderr := io.stdout, io.stderr
	c := &cli{getenv: getenv, stdout: stdout, stderr: stderr, ready: io.ready, now: io.now, tr: bundle.For("en"), bundle: bundle,
		stdin: io.stdin, pollMin: io.pollMin}
	if len(args) < 2 {
		c.usage(stderr)
		return errors.New("no command given")
	}
	name, rest := args[1], args[2:]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(rest) > 0 {
			name, rest = rest[0], []string{"--help"}
			break
		}
		c.usage(stdout)
		return nil
	}
	for _, cmd := range commands() {
		if cmd.name == name {
			err := cmd.run(c, ctx, rest)
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
	}
	c.usage(stderr)
	return fmt.Errorf("unknown command %q", name)
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprint(w, "Usage: gpubook <command> [flags]\n")
	for _, g := range commandGroups {
		fmt.Fprintf(w, "\n%s\n", g.title)
		for _, cmd := range commands() {
			if cmd.group == g.name {
				fmt.Fprintf(w, "  %-9s %s\n", cmd.name, cmd.summary)
			}
		}
	}
	fmt.Fprint(w, "\nRun 'gpubook <command> --help' for a command's flags. Every server and administration flag also has a GPUBOOK_… environment variable.\n")
}

// flags is one command's flag set with its usage text.
type flags struct {
	*flag.FlagSet
	usage, about string
	cfg          *configFlags
}

// newFlags starts a flag set for a command; serving adds the server's settings.
func newFlags(name, usage, about string, serving bool) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse errors are reported once, by us
	return &flags{FlagSet: fs, usage: usage, about: about, cfg: newConfigFlags(fs, serving)}
}

// parse reads flags anywhere among the arguments and checks the count of
// the others. --help prints usage to stdout and yields flag.ErrHelp; a bad
// flag prints usage to stderr and an error that names the problem.
func (f *flags) parse(c *cli, args []string, minPos, maxPos int) (Config, []string, error) {
	pos, err := parseInterspersed(f.FlagSet, args)
	if errors.Is(err, flag.ErrHelp) {
		f.printUsage(c.stdout)
		return Config{}, nil, flag.ErrHelp
	}
	if err == nil && (len(pos) < minPos || len(pos) > maxPos) {
		err = fmt.Errorf("wrong number of arguments: %q", pos)
		if len(pos) < minPos {
			err = errors.New("missing argument")
		}
	}
	if err != nil {
		f.printUsage(c.stderr)
		return Config{}, nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	if f.cfg == nil {
		return Config{}, pos, nil
	}
	cfg, err := f.cfg.resolve(c.getenv)
	return cfg, pos, err
}

// parseInterspersed lets flags follow positional arguments
// ("token revoke 3 --database-url …"); after "--" everything is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		consumed := len(args) - fs.NArg()
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, fs.Args()...), nil
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func (f *flags) printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", f.usage, f.about)
	var lines []string
	f.VisitAll(func(fl *flag.Flag) {
		placeholder, text := flag.UnquoteUsage(fl)
		name := "--" + fl.Name
		if placeholder != "" && !isBoolFlag(fl) {
			name += " " + strings.ToUpper(placeholder)
		}
		lines = append(lines, fmt.Sprintf("  %s\n        %s\n", name, text))
	})
	if len(lines) > 0 {
		sort.Strings(lines)
		fmt.Fprintf(w, "\nFlags:\n%s", strings.Join(lines, ""))
	}
}

func isBoolFlag(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// subcommand is one verb of a command group ("add" of "user add").
type subcommand struct {
	name string
	run  func(context.Context, []string) error
}

// group dispatches a command with sub-commands ("user add", "user list");
// subs are listed in the order usage shows them.
func (c *cli) group(ctx context.Context, name string, args []string, subs []subcommand) error {
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.name
	}
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: gpubook %s <%s> [flags]\n\nRun 'gpubook %s <sub-command> --help' for its flags.\n", name, strings.Join(names, "|"), name)
	}
	if len(args) == 0 {
		usage(c.stderr)
		return fmt.Errorf("%s: missing sub-command (%s)", name, strings.Join(names, ", "))
	}
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(ctx, args[1:])
		}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(c.stdout)
		return flag.ErrHelp
	}
	usage(c.stderr)
	return fmt.Errorf("%s: unknown sub-command %q", name, args[0])
}

// logger builds the process's slog logger from the configuration.
func (c *cli) logger(cfg Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(c.stderr, opts))
	}
	return slog.New(slog.NewTextHandler(c.stderr, opts))
}

// openStore opens the database and applies pending migrations, as serve
// does by default, so that the first command on a fresh database just works.
func (c *cli) openStore(ctx context.Context, cfg Config) (*store.DB, error) {
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	db.SetMaxConns(cfg.DatabaseMaxConns)
	if err := migrateUp(ctx, db, c.logger(cfg)); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// explain turns a domain error into one line for the terminal, in English,
// naming each bad field after its flag. Internal errors keep their cause:
// the person at the command line is the operator.
func (c *cli) explain(prefix string, err error) error {
	var de *models.Error
	if !errors.As(err, &de) || de.Code == models.EINTERNAL {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	msg := c.tr.Msg(de.Msg)
	if len(de.Fields) > 0 {
		keys := make([]string, 0, len(de.Fields))
		for k := range de.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = "--" + strings.ReplaceAll(k, "_", "-") + ": " + strings.TrimRight(c.tr.Msg(de.Fields[k]), ".")
		}
		msg = strings.Join(parts, "; ")
	}
	return &cliError{msg: prefix + ": " + msg, err: err}
}

// cliError is an error with a message written for people, keeping its cause for errors.Is/As.
type cliError struct {
	msg string
	err error
}

func (e *cliError) Error() string { return e.msg }
func (e *cliError) Unwrap() error { return e.err }

// table prints rows aligned in columns under a header, by display width:
// a Chinese name takes two columns per character in a terminal, which
// tabwriter (counting runes) does not know.
func table(w io.Writer, header []string, rows [][]string) error {
	all := append([][]string{header}, rows...)
	widths := make([]int, len(header))
	for _, r := range all {
		for i, cell := range r {
			widths[i] = max(widths[i], displayWidth(cell))
		}
	}
	for _, r := range all {
		var b strings.Builder
		for i, cell := range r {
			b.WriteString(cell)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-displayWidth(cell)+2))
			}
		}
		if _, err := fmt.Fprintln(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// displayWidth is how many terminal columns s takes: East Asian wide and
// full-width characters take two.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}
