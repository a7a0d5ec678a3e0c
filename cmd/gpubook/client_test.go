package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/handlers"
	"github.com/gpubook/gpubook/models"
	v1 "github.com/gpubook/gpubook/models/api"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// clientEnv is a wired portal on a loopback port, a user with a token, and
// a home directory for the client's configuration.
type clientEnv struct {
	env   *webtest.Env
	srv   *httptest.Server
	user  *models.User
	token string
	home  string
	extra map[string]string // more environment for the client
	mu    sync.Mutex
	calls map[string]bool // "METHOD /path" the client sent
}

func newClientEnv(t *testing.T, dialect string) *clientEnv {
	// The client makes a few calls per command; the test makes many commands.
	fast := func(c *web.Config) { c.APIRate = web.Rate{PerMinute: 1e6, Burst: 1e6} }
	ce := &clientEnv{env: webtest.New(t, dialect, fast), home: t.TempDir(), extra: map[string]string{}, calls: map[string]bool{}}
	ce.user = ce.env.AddUser("ada@example.org", "Ada", false)
	ce.token = ce.env.Token(ce.user)
	for _, n := range []struct {
		name, model string
		count       int
	}{{"node-a", "NVIDIA A100-SXM4-80GB", 4}, {"node-b", "NVIDIA H100 80GB HBM3", 2}} {
		gpus, err := models.NewNodeGPUs(n.name, n.count, n.model, 81920)
		if err != nil {
			t.Fatal(err)
		}
		if err := ce.env.DB.CreateNode(context.Background(), &models.Node{Name: n.name}, gpus, models.CLIActor); err != nil {
			t.Fatal(err)
		}
	}
	ce.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ce.mu.Lock()
		ce.calls[r.Method+" "+r.URL.Path] = true
		ce.mu.Unlock()
		ce.env.Server.Echo.ServeHTTP(w, r)
	}))
	t.Cleanup(ce.srv.Close)
	return ce
}

// run runs the gpubook client in-process, with stdin; a database URL that
// cannot be opened proves that the client commands never open one.
func (ce *clientEnv) runIn(ctx context.Context, stdin string, args ...string) (string, string, error) {
	vars := map[string]string{"XDG_CONFIG_HOME": filepath.Join(ce.home, "cfg"), "HOME": ce.home,
		"GPUBOOK_DATABASE_URL":          "sqlite:" + filepath.Join(ce.home, "no", "such", "dir", "x.db"),
		"GPUBOOK_AGENT_CREDENTIAL_FILE": filepath.Join(ce.home, "absent"), "GPUBOOK_AGENT_CACHE_FILE": filepath.Join(ce.home, "absent")}
	for k, v := range ce.extra {
		vars[k] = v
	}
	var out, errOut syncBuffer
	err := runIO(ctx, append([]string{"gpubook"}, args...), envOf(vars),
		cliIO{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, pollMin: 20 * time.Millisecond})
	return out.String(), errOut.String(), err
}

func (ce *clientEnv) run(args ...string) (string, string, error) {
	return ce.runIn(context.Background(), "", args...)
}

// must runs a command that must succeed.
func (ce *clientEnv) must(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := ce.run(args...)
	if err != nil {
		t.Fatalf("gpubook %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// mustJSON runs a command with --json and decodes its output into v.
func (ce *clientEnv) mustJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out := ce.must(t, append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("gpubook %s --json: %v: %s", strings.Join(args, " "), err, out)
	}
}

// refused runs a command that must fail with a one-line reason containing want.
func (ce *clientEnv) refused(t *testing.T, want string, args ...string) {
	t.Helper()
	out, _, err := ce.run(args...)
	if err == nil {
		t.Fatalf("gpubook %s succeeded, want a refusal: %s", strings.Join(args, " "), out)
	}
	if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
		t.Fatalf("gpubook %s: error %q, want one line containing %q", strings.Join(args, " "), msg, want)
	}
}

type clientBooking struct {
	ID       int64
	Node     string
	GPUIDs   []int64   `json:"gpu_ids"`
	GPUUUIDs []string  `json:"gpu_uuids"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
	Phase    string
	Status   string
}

func TestClient(t *testing.T) {
	t.Parallel()
	for _, d := range []string{store.SQLite, store.Postgres} {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			testClient(t, d)
		})
	}
}

func testClient(t *testing.T, dialect string) {
	ce := newClientEnv(t, dialect)
	ctx := context.Background()

	// Without a login every command says how to log in.
	ce.refused(t, "not logged in", "ls")
	// A wrong token is refused by the portal and nothing is saved.
	bad := filepath.Join(ce.home, "bad-token")
	if err := os.WriteFile(bad, []byte("gpb_wrong\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ce.refused(t, "refused (unauthorized)", "login", "--portal", ce.srv.URL, "--token-file", bad)
	out, _, err := ce.runIn(ctx, ce.token+"\n", "login", "--portal", ce.srv.URL+"/")
	if err != nil || !strings.Contains(out, "as Ada <ada@example.org>") {
		t.Fatalf("login = %q, %v", out, err)
	}
	cfg := filepath.Join(ce.home, "cfg", "gpubook", "config")
	st, err := os.Stat(cfg)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v, %v; want mode 0600", st, err)
	}
	if data, _ := os.ReadFile(cfg); !strings.Contains(string(data), "token = "+ce.token) || !strings.Contains(string(data), "portal = "+ce.srv.URL+"\n") {
		t.Fatalf("config file holds %q", data)
	}

	t.Run("free", func(t *testing.T) {
		var free struct{ Free []struct{ GPU v1.GPU } }
		ce.mustJSON(t, &free, "free")
		if len(free.Free) != 6 {
			t.Fatalf("free GPUs = %d, want 6", len(free.Free))
		}
		ce.mustJSON(t, &free, "free", "--model", "nvidia h100 80gb hbm3", "--for", "3h")
		if len(free.Free) != 2 || free.Free[0].GPU.Node != "node-b" {
			t.Fatalf("free H100 = %+v, want node-b's 2", free.Free)
		}
		if out := ce.must(t, "free", "--node", "node-a"); !strings.Contains(out, "node-a") || strings.Contains(out, "node-b") {
			t.Fatalf("free --node node-a:\n%s", out)
		}
	})

	var first clientBooking
	t.Run("book --short is usable in export", func(t *testing.T) {
		out := ce.must(t, "book", "--gpus", "2", "--model", "nvidia a100-sxm4-80gb", "--for", "2h", "--note", "train", "--short")
		if !regexp.MustCompile(`^GPU-[^,\s]+,GPU-[^,\s]+\n$`).MatchString(out) {
			t.Fatalf("--short printed %q", out)
		}
		sh := exec.Command("sh", "-c", `export CUDA_VISIBLE_DEVICES=$(printf '%s' "$OUT"); printf '%s' "$CUDA_VISIBLE_DEVICES"`)
		sh.Env = append(os.Environ(), "OUT="+out)
		got, err := sh.Output()
		if err != nil || string(got) != strings.TrimSpace(out) {
			t.Fatalf("export gave %q, %v; want %q", got, err, strings.TrimSpace(out))
		}
		var list struct{ Bookings []clientBooking }
		ce.mustJSON(t, &list, "ls")
		if len(list.Bookings) != 1 || list.Bookings[0].Phase != "active" || strings.Join(list.Bookings[0].GPUUUIDs, ",") != strings.TrimSpace(out) {
			t.Fatalf("ls = %+v, want one active booking with the printed UUIDs", list.Bookings)
		}
		first = list.Bookings[0]
		if out := ce.must(t, "ls"); !strings.Contains(out, fmt.Sprint(first.ID)) || !strings.Contains(out, "train") {
			t.Fatalf("ls:\n%s", out)
		}
	})

	t.Run("book prints the booking and the export line", func(t *testing.T) {
		out := ce.must(t, "book", "--node", "node-a", "--for", "1h")
		if !regexp.MustCompile(`(?m)^Booked #\d+: 1 GPU on node-a, .* – .*\n^export CUDA_VISIBLE_DEVICES=GPU-\S+$`).MatchString(out) {
			t.Fatalf("book printed:\n%s", out)
		}
	})

	t.Run("extend, and refusals name the reason", func(t *testing.T) {
		var b clientBooking
		ce.mustJSON(t, &b, "extend", fmt.Sprint(first.ID), "--by", "1h")
		if got, want := b.EndsAt.Sub(first.EndsAt), time.Hour; got != want {
			t.Fatalf("extended by %s, want %s", got, want)
		}
		ce.refused(t, "is not one of your current bookings", "extend", "999999", "--by", "1h")
		ce.refused(t, "refused (invalid)", "extend", fmt.Sprint(first.ID), "--by", "100d")
		ce.refused(t, "no slot within the booking horizon", "book", "--gpus", "5", "--for", "1h")
		ce.refused(t, "--model V100 matches no GPU model; the portal has NVIDIA A100-SXM4-80GB, NVIDIA H100 80GB HBM3", "book", "--model", "V100", "--for", "1h")
		// A user limit of 3 GPUs at once: the refusal names the rule.
		lim := []models.PolicyLimit{{Rule: models.RuleMaxGPUs, Value: 3}}
		if err := ce.env.DB.SaveScopeLimits(ctx, models.ScopeUser, ce.user.ID, lim, time.Now(), models.CLIActor); err != nil {
			t.Fatal(err)
		}
		ce.refused(t, "refused (policy)", "book", "--gpus", "2", "--model", "NVIDIA H100 80GB HBM3", "--for", "1h")
		ce.refused(t, "GPUs held at once:", "book", "--gpus", "2", "--node", "node-b", "--for", "1h")
		if err := ce.env.DB.SaveScopeLimits(ctx, models.ScopeUser, ce.user.ID, nil, time.Now(), models.CLIActor); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("book --at, release and cancel", func(t *testing.T) {
		at := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Minute)
		var later clientBooking
		ce.mustJSON(t, &later, "book", "--gpus", "2", "--node", "node-b", "--for", "2h", "--at", at.Format(time.RFC3339))
		if !later.StartsAt.Equal(at) || later.Node != "node-b" || len(later.GPUUUIDs) != 2 {
			t.Fatalf("book --at = %+v, want node-b from %s", later, at)
		}
		ce.refused(t, "is not free at", "book", "--gpus", "1", "--node", "node-b", "--for", "1h", "--at", at.Add(time.Hour).Format(time.RFC3339))
		var c clientBooking
		ce.mustJSON(t, &c, "release", fmt.Sprint(later.ID))
		if c.Status != "cancelled" {
			t.Fatalf("release of an upcoming booking: %+v, want cancelled", c)
		}
		if out := ce.must(t, "release", fmt.Sprint(first.ID)); !strings.HasPrefix(out, fmt.Sprintf("Released #%d", first.ID)) {
			t.Fatalf("release printed %q", out)
		}
		ce.refused(t, "refused (not_found)", "release", "999999")
	})

	t.Run("request and limits", func(t *testing.T) {
		var r struct {
			ID      int64
			Status  string
			GPUIDs  []int64 `json:"gpu_ids"`
			Purpose string
		}
		ce.mustJSON(t, &r, "request", "--gpus", "2", "--model", "NVIDIA H100 80GB HBM3", "--for", "8h", "--at", time.Now().Add(72*time.Hour).Format(time.RFC3339),
			"--purpose", "deadline run", "--urgency", "paper due", "--plan", "8h training", "--give-back", "right after")
		if r.Status != "pending" || len(r.GPUIDs) != 2 || r.Purpose != "deadline run" {
			t.Fatalf("request = %+v", r)
		}
		ce.refused(t, "refused (invalid)", "request", "--for", "2h", "--purpose", "p")
		var l struct {
			Limits []struct{ Key string }
			Used   int64 `json:"used_gpu_minutes"`
		}
		ce.mustJSON(t, &l, "limits")
		if len(l.Limits) == 0 || l.Used <= 0 {
			t.Fatalf("limits = %+v, want rules and some GPU-minutes used", l)
		}
		if out := ce.must(t, "limits"); !strings.Contains(out, "Length of one booking  14d    built-in default") || !strings.Contains(out, "GPU-hours used") {
			t.Fatalf("limits:\n%s", out)
		}
	})

	t.Run("on a GPU node book uses that node", func(t *testing.T) {
		cache := filepath.Join(ce.home, "schedule.json")
		cred := filepath.Join(ce.home, "credential.json")
		_ = os.WriteFile(cache, []byte(`{"node":"node-b","bookings":[]}`), 0o644)
		_ = os.WriteFile(cred, []byte(`{"portal_url":"x","node_id":1,"node":"node-a","credential":"secret"}`), 0o600)
		ce.extra["GPUBOOK_AGENT_CACHE_FILE"] = cache
		var b clientBooking
		ce.mustJSON(t, &b, "book", "--for", "1h")
		if b.Node != "node-b" {
			t.Fatalf("booked on %s, want node-b (from the schedule cache)", b.Node)
		}
		ce.extra["GPUBOOK_AGENT_CREDENTIAL_FILE"] = cred
		ce.mustJSON(t, &b, "book", "--for", "1h")
		if b.Node != "node-a" {
			t.Fatalf("booked on %s, want node-a (from the credential file)", b.Node)
		}
		delete(ce.extra, "GPUBOOK_AGENT_CACHE_FILE")
		delete(ce.extra, "GPUBOOK_AGENT_CREDENTIAL_FILE")
	})

	t.Run("book --wait until a slot frees", func(t *testing.T) { testClientWait(t, ce) })

	t.Run("every path the client called is in the OpenAPI document", func(t *testing.T) {
		var doc struct{ Paths map[string]map[string]any }
		if err := json.Unmarshal(handlers.OpenAPIDocument(), &doc); err != nil {
			t.Fatal(err)
		}
		for call := range ce.calls {
			method, path, _ := strings.Cut(call, " ")
			route := regexp.MustCompile(`/\d+(/|$)`).ReplaceAllString(strings.TrimPrefix(path, "/api/v1"), "/{id}$1")
			if _, ok := doc.Paths[route][strings.ToLower(method)]; !ok {
				t.Errorf("the client called %s %s, which the document does not describe", method, route)
			}
		}
		if len(ce.calls) < 8 {
			t.Errorf("the client made only %d distinct calls: %v", len(ce.calls), ce.calls)
		}
	})
}
