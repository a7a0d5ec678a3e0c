package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// bookingClock is the fixed "now" of the booking page tests: Wednesday
// 3 June 2026, 10:12 UTC.
var bookingClock = time.Date(2026, 6, 3, 10, 12, 0, 0, time.UTC)

// calFixture is a wired server with two nodes, three users and a clock.
type calFixture struct {
	env   *webtest.Env
	now   *time.Time
	nodes []models.Node
	alice *models.User // the signed-in user of most tests
	bob   *models.User
}

// newCalFixture starts a server on dialect whose clock reads f.now.
func newCalFixture(t testing.TB, dialect string, opts ...func(*web.Config)) *calFixture {
	t.Helper()
	f := &calFixture{now: new(time.Time)}
	*f.now = bookingClock
	opts = append([]func(*web.Config){func(c *web.Config) { c.Now = func() time.Time { return *f.now } }}, opts...)
	f.env = webtest.New(t, dialect, opts...)
	f.alice = f.env.AddUser("alice@example.org", "Alice Admin", true)
	f.bob = f.env.AddUser("bob@example.org", "Bob Builder", false)
	f.addNode(t, "node-a", 4, "NVIDIA A100-SXM4-80GB", 81920)
	f.addNode(t, "node-b", 2, "NVIDIA H100 80GB HBM3", 81920)
	return f
}

func (f *calFixture) addNode(t testing.TB, name string, count int, model string, mem int64) models.Node {
	t.Helper()
	ctx := context.Background()
	gpus, err := models.NewNodeGPUs(name, count, model, mem)
	if err != nil {
		t.Fatal(err)
	}
	n := &models.Node{Name: name}
	if err := f.env.DB.CreateNode(ctx, n, gpus, models.CLIActor); err != nil {
		t.Fatalf("create node: %v", err)
	}
	nodes, err := f.env.DB.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.nodes = nodes
	for _, x := range nodes {
		if x.Name == name {
			return x
		}
	}
	t.Fatalf("node %s not found", name)
	return models.Node{}
}

// gpu returns the ID of a node's GPU by index.
func (f *calFixture) gpu(t testing.TB, node string, index int) int64 {
	t.Helper()
	for _, n := range f.nodes {
		for _, g := range n.GPUs {
			if n.Name == node && g.Index == index {
				return g.ID
			}
		}
	}
	t.Fatalf("no GPU %s/%d", node, index)
	return 0
}

// book creates a booking directly in the store, start and end in hours
// from now (a negative start makes one that runs already).
func (f *calFixture) book(t testing.TB, u *models.User, gpus []int64, from, to float64, note string) *models.Booking {
	t.Helper()
	h := func(x float64) time.Time { return f.now.Add(time.Duration(x * float64(time.Hour))) }
	at := *f.now // a booking that has started already is made "back then"
	if from < 0 {
		at = h(from)
	}
	b, err := f.env.DB.CreateBooking(context.Background(), models.NewBooking{UserID: u.ID, GPUIDs: gpus, StartsAt: h(from), EndsAt: h(to), Note: note},
		models.DefaultBookingLimits, at, models.CLIActor)
	if err != nil {
		t.Fatalf("book %v %v-%v: %v", gpus, from, to, err)
	}
	return b
}

// signedIn returns a browser signed in as u.
func (f *calFixture) signedIn(u *models.User) *webtest.Client {
	c := f.env.Client()
	c.SignIn(u.Email, u.Name)
	return c
}

func testid(id string) string { return fmt.Sprintf(`[data-testid="%s"]`, id) }
