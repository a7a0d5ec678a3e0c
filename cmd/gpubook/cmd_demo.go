package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// demo runs "gpubook demo [--force] [--agents]": it writes demoPlan's
// description through the ordinary store methods, so the demo obeys every
// real rule; with --agents it then runs a simulated agent per node.
func (c *cli) demo(ctx context.Context, args []string) error {
	f := newFlags("demo", "gpubook demo [--force] [--seed N] [--usage-days N] [--agents [--agent-bin FILE] [--agents-dir DIR] [--lock NODE]]",
		"Fills an empty database with a believable demo: 3 nodes of 8 GPUs, 12 users in 3 teams and a week of bookings.\nRefuses a database that already has users unless --force is given; then it adds the demo beside them,\nskipping users, teams and nodes that already exist.\nWith --agents (the portal must be running) it then enrols each demo node and runs a real gpubook-agent\nper node on simulated GPUs (gpu = simulated) until Ctrl-C; on a database that already has users it\nonly starts the agents.", false)
	force := f.Bool("force", false, "add the demo to a database that already has users")
	seed := f.Uint64("seed", 1, "`seed` for the generated bookings (same seed and day, same demo)")
	days := f.Int("usage-days", maxDemoUsageDays, "`days` of measured agent use to generate before now, 0 to 7 (each day takes a few seconds)")
	agents := f.Bool("agents", false, "run a gpubook-agent on simulated GPUs for every demo node until Ctrl-C")
	var o demoAgentOpts
	f.StringVar(&o.bin, "agent-bin", "", "the gpubook-agent `binary` (default: beside gpubook, on PATH, or built from ./cmd/gpubook-agent)")
	f.StringVar(&o.lock, "lock", "", "with --agents: demo `node` whose agent locks its GPUs to the bookings (enforce = lock; as root: its simulated GPUs get\ndevice files under /dev/gpubook-sim/NODE and this host's logins open only the GPUs their Unix name holds there)")
	f.StringVar(&o.dir, "agents-dir", "", "`directory` for the agents' configuration, state and logs (default: a temporary one, removed at exit)")
	cfg, _, err := f.parse(c, args, 0, 0)
	if err != nil {
		return err
	}
	if *days < 0 || *days > maxDemoUsageDays {
		return fmt.Errorf("demo: --usage-days must be between 0 and %d (got %d)", maxDemoUsageDays, *days)
	}
	db, err := c.openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cli: demo: %w", err)
	}
	defer db.Close()
	n, err := db.CountUsers(ctx)
	if err != nil {
		return fmt.Errorf("cli: demo: %w", err)
	}
	now := c.now()
	plan := demoPlan(*seed, now, cfg.Location)
	switch {
	case n == 0 || *force:
		if err := c.seedDemo(ctx, cfg, db, plan, now, *force, *days); err != nil {
			return err
		}
	case *agents:
		fmt.Fprintf(c.stdout, "demo: the database already has %d user(s); adding no demo data, starting the agents only\n", n)
	default:
		return fmt.Errorf("demo: the database already has %d user(s); refusing to add demo data (use --force to add it beside them)", n)
	}
	if *agents {
		return c.demoAgents(ctx, cfg, db, plan, o)
	}
	return nil
}

// seedDemo writes plan and says what it added.
func (c *cli) seedDemo(ctx context.Context, cfg Config, db *store.DB, plan demoData, now time.Time, force bool, days int) error {
	s := &seeder{db: db, now: now, limits: cfg.bookingLimits(), force: force, users: map[string]int64{}, gpus: map[string]int64{},
		usageDays: days, progress: c.stderr}
	for _, step := range []func(context.Context, demoData) error{s.seedUsers, s.seedTeams, s.seedNodes, s.seedBookings, s.seedUsage} {
		if err := step(ctx, plan); err != nil {
			return fmt.Errorf("cli: demo: %w", err)
		}
	}
	fmt.Fprintf(c.stdout, "demo: added %d users, %d teams, %d nodes, %d GPUs and %d bookings (%d past, %d active now, %d upcoming)\n",
		s.added.users, s.added.teams, s.added.nodes, s.added.gpus, s.added.bookings, s.phases[models.PhasePast], s.phases[models.PhaseActive], s.phases[models.PhaseUpcoming])
	fmt.Fprintf(c.stdout, "demo: added %d GPU-minutes of agent records (the last %d day(s)); see /usage and 'gpubook report preview'\n", s.added.usage, days)
	if s.skipped > 0 {
		fmt.Fprintf(c.stdout, "demo: skipped %d that already existed or clashed with existing bookings\n", s.skipped)
	}
	fmt.Fprintln(c.stdout, demoSignIn(ctx, cfg.BaseURL))
	return nil
}

// seeder writes a demo plan and counts what it added and skipped.
type seeder struct {
	db     *store.DB
	now    time.Time
	limits models.BookingLimits
	force  bool
	users  map[string]int64 // email → id
	gpus   map[string]int64 // gpuKey → id
	fresh  map[string]bool  // emails and team names created now
	added  struct{ users, teams, nodes, gpus, bookings, usage int }
	phases map[models.BookingPhase]int

	skipped int

	usageDays int       // how many days of agent records seedUsage writes
	progress  io.Writer // where the long steps say how far they are
}

func (s *seeder) seedUsers(ctx context.Context, d demoData) error {
	s.fresh = map[string]bool{}
	for _, du := range d.Users {
		if u, err := s.db.UserByEmail(ctx, du.Email); err == nil {
			s.users[du.Email], s.skipped = u.ID, s.skipped+1
			continue
		} else if models.ErrorCode(err) != models.ENOTFOUND {
			return err
		}
		u := &models.User{Email: du.Email, Name: du.Name, Language: du.Language, TimeZone: du.TimeZone, IsAdmin: du.Admin}
		if err := s.db.CreateUser(ctx, u, models.CLIActor); err != nil {
			return fmt.Errorf("user %s: %w", du.Email, err)
		}
		s.users[du.Email], s.fresh[du.Email] = u.ID, true
		s.added.users++
	}
	return nil
}

func (s *seeder) seedTeams(ctx context.Context, d demoData) error {
	existing, err := s.db.Teams(ctx)
	if err != nil {
		return err
	}
	ids := map[string]int64{}
	for _, t := range existing {
		ids[t.Name] = t.ID
	}
	for _, name := range d.Teams {
		if _, ok := ids[name]; ok {
			s.skipped++
			continue
		}
		t := &models.Team{Name: name}
		if err := s.db.CreateTeam(ctx, t, models.CLIActor); err != nil {
			return fmt.Errorf("team %s: %w", name, err)
		}
		ids[name], s.fresh["team:"+name] = t.ID, true
		s.added.teams++
	}
	// Memberships are set where the user or the team is new, so that --force
	// never changes a role somebody already has in an existing team.
	for _, du := range d.Users {
		if du.Team == "" || !s.fresh[du.Email] && !s.fresh["team:"+du.Team] {
			continue
		}
		role := models.RoleMember
		if du.Lead {
			role = models.RoleLead
		}
		m := &models.Membership{TeamID: ids[du.Team], UserID: s.users[du.Email], Role: role}
		if err := s.db.SetMembership(ctx, m, models.CLIActor); err != nil {
			return fmt.Errorf("membership %s in %s: %w", du.Email, du.Team, err)
		}
	}
	return nil
}

func (s *seeder) seedNodes(ctx context.Context, d demoData) error {
	existing, err := s.db.Nodes(ctx)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for _, n := range existing {
		names[n.Name] = true
		for _, g := range n.GPUs {
			s.gpus[gpuKey(n.Name, g.Index)] = g.ID
		}
	}
	for _, dn := range d.Nodes {
		if names[dn.Name] {
			s.skipped++
			continue
		}
		gpus, err := models.NewNodeGPUs(dn.Name, dn.GPUs, dn.Model, dn.MemoryMiB)
		if err != nil {
			return err
		}
		node := &models.Node{Name: dn.Name}
		if err := s.db.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
			return fmt.Errorf("node %s: %w", dn.Name, err)
		}
		if err := s.indexNode(ctx, node.ID, dn, d.OutOfService); err != nil {
			return err
		}
		if err := s.seedMIG(ctx, node.ID, dn); err != nil {
			return err
		}
		s.added.nodes++
		s.added.gpus += len(gpus)
	}
	return nil
}

// indexNode learns a new node's GPU IDs and takes the broken ones out of service.
func (s *seeder) indexNode(ctx context.Context, id int64, dn demoNode, oos []demoOutOfService) error {
	node, err := s.db.Node(ctx, id)
	if err != nil {
		return err
	}
	for _, g := range node.GPUs {
		s.gpus[gpuKey(dn.Name, g.Index)] = g.ID
	}
	for _, o := range oos {
		if o.Node != dn.Name {
			continue
		}
		if err := s.db.SetGPUService(ctx, s.gpus[gpuKey(o.Node, o.Index)], false, o.Reason, models.CLIActor); err != nil {
			return fmt.Errorf("gpu %s/%d out of service: %w", o.Node, o.Index, err)
		}
	}
	return nil
}

// seedBookings creates every booking through CreateBooking. A booking that
// starts before now is created "as of" its start: the store rightly refuses
// new bookings in the past, and seeding history is the one honest exception.
func (s *seeder) seedBookings(ctx context.Context, d demoData) error {
	s.phases = map[models.BookingPhase]int{}
	for _, b := range d.Bookings {
		req := models.NewBooking{UserID: s.users[b.UserEmail], StartsAt: b.Start, EndsAt: b.End, Note: b.Note}
		for _, g := range b.GPUs {
			req.GPUIDs = append(req.GPUIDs, s.gpus[gpuKey(b.Node, g)])
		}
		asOf := s.now
		if b.Start.Before(asOf) {
			asOf = b.Start
		}
		created, err := s.db.CreateBooking(ctx, req, s.limits, asOf, models.CLIActor)
		if err != nil {
			code := models.ErrorCode(err)
			if s.force && (code == models.ECONFLICT || code == models.EINVALID) {
				s.skipped++
				continue
			}
			return fmt.Errorf("booking %s %v on %s: %w", b.UserEmail, b.GPUs, b.Node, err)
		}
		s.added.bookings++
		s.phases[created.Phase(s.now)]++
	}
	return nil
}
