package web_test

// In-process portal + agent: the real web server on a real database behind
// httptest, the real agent daemon on go-nvml's simulated DGX A100 and a
// temporary /proc tree, talking through the real agent/client. This file
// imports agent packages (cgo, for go-nvml's mocks); the server binary
// itself stays cgo-free.

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/agent/daemon"
	"github.com/gpubook/gpubook/agent/detect"
	"github.com/gpubook/gpubook/agent/nvmlgpu"
	"github.com/gpubook/gpubook/agent/procfs"
	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

var e2eT0 = time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)

// agentClock is the one simulated time portal and agent share.
type agentClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *agentClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *agentClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// e2e is one portal and one enrolled node.
type e2e struct {
	t      *testing.T
	env    *webtest.Env
	clock  *agentClock
	srv    *httptest.Server
	node   *agenttest.Node
	procs  *agenttest.Procs
	dir    string
	nodeID int64
	cred   string
	client *client.Client
	d      *daemon.Daemon
}

func newE2E(t *testing.T, dialect string) *e2e {
	t.Helper()
	clk := &agentClock{now: e2eT0}
	env := webtest.New(t, dialect, func(c *web.Config) { c.Now = clk.Now })
	x := &e2e{t: t, env: env, clock: clk, node: agenttest.NewNode(t), procs: agenttest.NewProcs(t), dir: t.TempDir()}
	x.srv = httptest.NewServer(env.Server.Echo)
	t.Cleanup(func() { x.srv.Close() })
	gpus, _ := models.NewNodeGPUs("n1", 8, "NVIDIA A100-SXM4-40GB", 40960)
	n := &models.Node{Name: "n1"}
	if err := env.DB.CreateNode(context.Background(), n, gpus, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	x.nodeID = n.ID
	return x
}

// enroll spends token through the real agent client.
func (x *e2e) enroll(token string) error {
	resp, err := client.New(x.srv.URL, "", "test").Enroll(context.Background(), wire.EnrollRequest{Token: token, Hostname: "n1", AgentVersion: "test"})
	if err == nil {
		x.cred = resp.Credential
	}
	return err
}

// start builds the daemon over the rig's state directory, as a started process would.
func (x *e2e) start() {
	x.t.Helper()
	b, err := nvmlgpu.Open(x.node.Server)
	if err != nil {
		x.t.Fatal(err)
	}
	x.t.Cleanup(func() { b.Close() })
	sp, err := spool.Open(filepath.Join(x.dir, "spool"), spool.DefaultLimits(), x.clock.Now, nil)
	if err != nil {
		x.t.Fatal(err)
	}
	x.client = client.New(x.srv.URL, x.cred, "test")
	x.client.Attempts, x.client.Sleep = 1, func(context.Context, time.Duration) error { return nil }
	res := procfs.New(x.procs.Root, x.procs.Passwd, x.procs.Group)
	det := detect.New("n1", detect.DefaultPolicy(), daemon.KillSignaller{}, nil, res, nil)
	x.d, err = daemon.New(context.Background(), daemon.Config{Node: "n1", AgentVersion: "test",
		CachePath: filepath.Join(x.dir, "schedule.json"), StatusPath: filepath.Join(x.dir, "status.json"),
		WatermarkPath: filepath.Join(x.dir, "watermark.json"), BusyPct: 5},
		daemon.Deps{Source: b, Resolver: res, Portal: x.client, Spool: sp, Detector: det, Now: x.clock.Now,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		x.t.Fatal(err)
	}
}

// run samples every 10 s and delivers every 30 s for d of simulated time.
func (x *e2e) run(d time.Duration) {
	x.t.Helper()
	for end := x.clock.Now().Add(d); x.clock.Now().Before(end); x.clock.Add(10 * time.Second) {
		if err := x.d.SampleOnce(context.Background()); err != nil {
			x.t.Fatal(err)
		}
		if s := x.clock.Now().Second(); s == 0 || s == 30 {
			_ = x.d.DeliverOnce(context.Background()) // fails while the portal is down
		}
	}
}

// enrolledE2E enrols through the admin page and starts the daemon, synced.
func enrolledE2E(t *testing.T, dialect string) *e2e {
	t.Helper()
	x := newE2E(t, dialect)
	admin := x.env.Client()
	admin.SignIn("root@example.org", "Root Admin")
	admin.Get("/admin/nodes/" + strconv.FormatInt(x.nodeID, 10) + "/enroll")
	res := admin.Post("/admin/nodes/"+strconv.FormatInt(x.nodeID, 10)+"/enroll", nil)
	token, _ := res.Doc.Find(`[data-testid="enroll-token"]`).Attr("value")
	if err := x.enroll(token); err != nil {
		t.Fatalf("enroll with the page's token %q: %v", token, err)
	}
	x.start()
	if err := x.d.SyncOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	return x
}

func (x *e2e) gpuIDs(indices ...int) []int64 {
	x.t.Helper()
	n, err := x.env.DB.Node(context.Background(), x.nodeID)
	if err != nil {
		x.t.Fatal(err)
	}
	var ids []int64
	for _, i := range indices {
		if n.GPUs[i].UUID != x.node.UUID(i) {
			x.t.Fatalf("GPU %d has UUID %s, want the agent's %s", i, n.GPUs[i].UUID, x.node.UUID(i))
		}
		ids = append(ids, n.GPUs[i].ID)
	}
	return ids
}

func (x *e2e) env4(user string, at time.Time) []string {
	x.t.Helper()
	f, err := cache.Read(context.Background(), filepath.Join(x.dir, "schedule.json"), time.Second)
	if err != nil {
		x.t.Fatal(err)
	}
	return loginVisible(f, user, at)
}

// listenAgain reopens a listener on addr, as a restarted portal would.
func listenAgain(t *testing.T, addr string) net.Listener {
	t.Helper()
	for i := 0; ; i++ {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			return ln
		}
		if i == 50 {
			t.Fatalf("listen again on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func itoa64(i int64) string { return strconv.FormatInt(i, 10) }

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
