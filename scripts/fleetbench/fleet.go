package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/wire"
)

// fleet is the simulated nodes, enrolled once and started and stopped as
// the ramp asks.
type fleet struct {
	db       *store.DB
	replicas []*replica
	cad      cadence
	rec      *recorder
	tally    tally
	hc       *http.Transport
	now      func() time.Time
	users    []*models.User
	nodes    []*fleetNode
	mu       sync.Mutex
	active   int                 // nodes running
	booked   map[bookedHour]bool // what the browsers booked (claim)
	team     int64               // the team the leads lead
}

// bookedHour is a GPU and the start of an hour a browser booked it for.
type bookedHour struct {
	gpu   int64
	start time.Time
}

// claim reports whether nobody asked for gpu at start yet, and records
// that someone now has: the browsers' choices follow the fleet's size,
// which changes between levels, so two levels' picks can meet, and the
// portal's refusal (409) would count as a failed request.
func (f *fleet) claim(gpu int64, start time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := bookedHour{gpu, start}
	if f.booked[k] {
		return false
	}
	if f.booked == nil {
		f.booked = map[bookedHour]bool{}
	}
	f.booked[k] = true
	return true
}

type fleetNode struct {
	a      *agent
	free   int64 // the id of its GPU that nobody holds, for the browsers
	cancel context.CancelFunc
	done   chan struct{}
}

// admins is how many of the first users are admins: their browsers load
// the cluster's usage page as well as their own. The next leads users
// lead a team of the first teamSize users, and their browsers load the
// team's usage page as well.
const (
	admins   = 5
	leads    = 5
	teamSize = 500
)

// newFleet makes people users: every node's three users are drawn from
// them, and the browsers sign in as the first ones.
func newFleet(ctx context.Context, db *store.DB, replicas []*replica, cad cadence, people int, now func() time.Time) (*fleet, error) {
	f := &fleet{db: db, replicas: replicas, cad: cad, rec: newRecorder(), now: now,
		hc: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 512, IdleConnTimeout: 90 * time.Second}}
	for i := range people {
		u := &models.User{Email: fmt.Sprintf("fb%04d@example.org", i), Name: fmt.Sprintf("Fleet %04d", i), IsAdmin: i < admins}
		if err := db.CreateUser(ctx, u, models.CLIActor); err != nil {
			return nil, fmt.Errorf("user %d: %w", i, err)
		}
		f.users = append(f.users, u)
	}
	team := &models.Team{Name: "Fleet lab"}
	if err := db.CreateTeam(ctx, team, models.CLIActor); err != nil {
		return nil, fmt.Errorf("team: %w", err)
	}
	f.team = team.ID
	for i, u := range f.users[:min(teamSize, len(f.users))] {
		m := &models.Membership{TeamID: team.ID, UserID: u.ID, Role: models.RoleMember}
		if i >= admins && i < admins+leads {
			m.Role = models.RoleLead
		}
		if err := db.SetMembership(ctx, m, models.CLIActor); err != nil {
			return nil, fmt.Errorf("team member %d: %w", i, err)
		}
	}
	return f, nil
}

// agentKind names an agent request by its path, for the tables.
func agentKind(r *http.Request) string {
	return strings.TrimPrefix(r.URL.Path, wire.APIPrefix+"/")
}

// portalClient is agent/client's client for node i, on its replica and
// with its own address.
func (f *fleet) portalClient(i int, cred string) *client.Client {
	c := client.New(f.replicas[i%len(f.replicas)].Base, cred, "gpubook-agent/"+agentVersion)
	addr := fmt.Sprintf("10.%d.%d.%d", (i+1)>>16&255, (i+1)>>8&255, (i+1)&255)
	c.HTTP.Transport = &timed{next: f.hc, rec: f.rec, addr: addr, kind: agentKind}
	return c
}

// enrol makes nodes up to n: each is created with its GPUs, two bookings
// (see workload) and a one-time token, as an admin would through the
// CLI, then enrolled by its agent through the portal.
func (f *fleet) enrol(ctx context.Context, n int, workers int) error {
	start := len(f.nodes)
	if n <= start {
		return nil
	}
	made := make([]*fleetNode, n-start)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := start + w; i < n; i += workers {
				fn, err := f.enrolOne(ctx, i)
				if err != nil {
					errs <- fmt.Errorf("node %d: %w", i, err)
					return
				}
				made[i-start] = fn
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	f.nodes = append(f.nodes, made...)
	return nil
}

func (f *fleet) enrolOne(ctx context.Context, i int) (*fleetNode, error) {
	name := fmt.Sprintf("fb%05d", i)
	gpus, err := models.NewNodeGPUs(name, nodeGPUs, gpuModel, gpuMemoryMiB)
	if err != nil {
		return nil, err
	}
	node := &models.Node{Name: name}
	if err := f.db.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
		return nil, err
	}
	w := &workload{phase: time.Duration(rand.Int64N(int64(episodeEvery)))}
	for k := range w.users {
		u := f.users[(3*i+k)%len(f.users)]
		w.users[k], w.uids[k] = strings.Split(u.Email, "@")[0], 10000+int(u.ID)
	}
	ids := make([]int64, len(node.GPUs))
	for g, x := range node.GPUs {
		ids[g] = x.ID
	}
	if err := f.book(ctx, (3*i)%len(f.users), ids[busyFrom:busyFrom+busyGPUs]); err != nil {
		return nil, err
	}
	if err := f.book(ctx, (3*i+1)%len(f.users), ids[idleFrom:idleFrom+idleGPUs]); err != nil {
		return nil, err
	}
	tok, _, err := f.db.CreateEnrollToken(ctx, node.ID, time.Now(), models.CLIActor)
	if err != nil {
		return nil, err
	}
	resp, err := f.portalClient(i, "").Enroll(ctx, wire.EnrollRequest{Token: tok, Hostname: name, AgentVersion: agentVersion})
	if err != nil {
		return nil, err
	}
	return &fleetNode{free: ids[freeGPU], a: newAgent(name, f.portalClient(i, resp.Credential), w, f.cad, f.now, &f.tally)}, nil
}

// book gives user u the GPUs from an hour ago for a day, long enough
// for any run.
func (f *fleet) book(ctx context.Context, u int, gpus []int64) error {
	now := time.Now().UTC().Truncate(time.Minute)
	_, err := f.db.CreateBooking(ctx, models.NewBooking{UserID: f.users[u].ID, GPUIDs: gpus, StartsAt: now.Add(-time.Hour),
		EndsAt: now.Add(23 * time.Hour), Note: "fleetbench"}, models.DefaultBookingLimits, now.Add(-2*time.Hour), models.CLIActor)
	return err
}

// run makes nodes 0..n−1 run and the others stop; the nodes it starts
// begin at random moments within spread.
func (f *fleet) run(ctx context.Context, n int, spread time.Duration) {
	f.mu.Lock()
	f.active = min(n, len(f.nodes))
	f.mu.Unlock()
	for i, fn := range f.nodes {
		switch {
		case i < n && fn.cancel == nil:
			c, cancel := context.WithCancel(ctx)
			fn.cancel, fn.done = cancel, make(chan struct{})
			delay := time.Duration(rand.Int64N(int64(spread) + 1))
			go func(a *agent, done chan struct{}) { defer close(done); a.run(c, delay) }(fn.a, fn.done)
		case i >= n && fn.cancel != nil:
			fn.cancel()
			<-fn.done
			fn.cancel = nil
		}
	}
}

// lag is the largest ingest lag of the running nodes (agent.lag).
func (f *fleet) lag() time.Duration {
	now := f.now()
	var worst time.Duration
	for _, fn := range f.nodes {
		if fn.cancel != nil {
			worst = max(worst, fn.a.lag(now))
		}
	}
	return worst
}

// freeGPUs is the unbooked GPU of every running node.
func (f *fleet) freeGPUs() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]int64, f.active)
	for i := range out {
		out[i] = f.nodes[i].free
	}
	return out
}
