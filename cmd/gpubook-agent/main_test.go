package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/daemon"
	"github.com/gpubook/gpubook/models/wire"
)

func TestHelp(t *testing.T) {
	for _, cmd := range []string{"run", "enroll", "env", "exec", "status", "probe"} {
		t.Run(cmd, func(t *testing.T) {
			var out, errb bytes.Buffer
			if err := run(context.Background(), []string{"gpubook-agent", cmd, "--help"}, func(string) string { return "" }, &out, &errb); err != nil {
				t.Fatalf("--help returned %v", err)
			}
			if got := errb.String(); !strings.Contains(got, "Usage: gpubook-agent "+cmd) {
				t.Errorf("help = %q", got)
			}
		})
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"gpubook-agent", "--help"}, func(string) string { return "" }, &out, &out); err != nil || !strings.Contains(out.String(), "Commands:") {
		t.Errorf("top-level help: %v %q", err, out.String())
	}
	if err := run(context.Background(), []string{"gpubook-agent", "frobnicate"}, func(string) string { return "" }, &out, &out); err == nil {
		t.Error("unknown command succeeded")
	}
}

func TestEnrollWrites0600(t *testing.T) {
	var got wire.EnrollRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != wire.PathEnroll {
			http.NotFound(w, r)
			return
		}
		_ = json.NewDecoder(r.Body).Decode(&got)
		if got.Token != "tok-1" {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"node_id":4,"node_name":"gpu04","credential":"secret-cred"}`))
	}))
	defer srv.Close()
	credFile := filepath.Join(t.TempDir(), "etc", "credential.json")
	getenv := setup(t, "/nonexistent")
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"gpubook-agent", "enroll", "--portal", srv.URL, "--token", "tok-1", "--credential-file", credFile}, getenv, &out, &errb)
	if err != nil {
		t.Fatal(err, errb.String())
	}
	st, err := os.Stat(credFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Mode().Perm(), fs.FileMode(0o600); got != want {
		t.Errorf("credential mode = %v, want %v", got, want)
	}
	c, err := readCredential(credFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := (credential{PortalURL: srv.URL, NodeID: 4, Node: "gpu04", Credential: "secret-cred"}); c != want {
		t.Errorf("credential = %+v, want %+v", c, want)
	}
	if strings.Contains(out.String(), "secret-cred") {
		t.Error("enroll printed the credential")
	}
	t.Run("refused token", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "c.json")
		err := run(context.Background(), []string{"gpubook-agent", "enroll", "--portal", srv.URL, "--token", "used", "--credential-file", other}, getenv, &out, &errb)
		if err == nil {
			t.Fatal("enroll with a refused token succeeded")
		}
		if _, err := os.Stat(other); err == nil {
			t.Error("credential written for a refused token")
		}
	})
}

func TestConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.conf")
	body := "# comment\nportal_url = https://p.example.org\nsample_interval = 5s\nexempt_groups = gpuadmins, ops\nenforce = true\nidle_util_pct=3\nusage_spread = 0s\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GPUBOOK_AGENT_SAMPLE_INTERVAL": "20s", "GPUBOOK_AGENT_NODE": "gpu09"}
	c, err := loadConfig(path, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.PortalURL != "https://p.example.org" || c.SampleInterval != 20*time.Second || c.Node != "gpu09" || !c.Policy.Enforce ||
		c.Policy.IdleUtilPct != 3 || strings.Join(c.Policy.Exempt.Groups, ",") != "gpuadmins,ops" || c.Policy.IdleAfter != 30*time.Minute ||
		c.UsageSpread != 0 {
		t.Errorf("config = %+v", c)
	}
	bad := []struct{ name, body, want string }{
		{"unknown key", "colour = blue\n", `c:1: unknown key "colour"`},
		{"bad duration", "grace = soon\n", `c:1: grace = "soon"`},
		{"negative duration", "# x\ngrace = -1s\n", `c:2: grace = "-1s": must be positive`},
		{"no equals", "enforce\n", "c:1: want key = value"},
		{"bad log level", "log_level = loud\n", `c:1: log_level = "loud": want debug, info, warn or error`},
		{"spread of a minute", "usage_spread = 60s\n", `c:1: usage_spread = "60s": want 0s to 59s`},
		{"negative spread", "usage_spread = -5s\n", `c:1: usage_spread = "-5s": want 0s to 59s`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c")
			if err := os.WriteFile(p, []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadConfig(p, func(string) string { return "" })
			if err == nil {
				t.Fatal("loadConfig succeeded, want error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to name %q", err, tt.want)
			}
		})
	}
	t.Run("bad variable is named", func(t *testing.T) {
		env := map[string]string{"GPUBOOK_AGENT_GRACE": "soon"}
		_, err := loadConfig(path, func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), `GPUBOOK_AGENT_GRACE: grace = "soon"`) {
			t.Errorf("error = %v, want it to name GPUBOOK_AGENT_GRACE", err)
		}
	})
	if c, err := loadConfig(filepath.Join(t.TempDir(), "missing"), func(string) string { return "" }); err != nil || c.UsageSpread != 45*time.Second {
		t.Errorf("missing config file: %v, usage spread %s; want defaults (45s)", err, c.UsageSpread)
	}
}

func TestStatus(t *testing.T) {
	getenv := setup(t, "/nonexistent")
	cfg, _ := loadConfig(getenv("GPUBOOK_AGENT_CONFIG"), getenv)
	now := time.Now()
	st := daemon.Status{Node: "gpu01", At: now, NVMLOK: true, LastSync: now, SpoolDepth: 2, GPUs: []daemon.GPUStatus{
		{Index: 0, UUID: uuidA, Model: "A100", UtilValid: true, UtilPct: 42, MemUsedMiB: 100, MemTotalMiB: 40960, Holder: "alice", HeldUntil: now.Add(time.Hour),
			Procs: []daemon.ProcStatus{{PID: 7, User: "alice", MemMiB: 100}}},
		{Index: 1, UUID: uuidB, Model: "A100", MIG: true}}}
	data, _ := json.Marshal(st)
	if err := os.WriteFile(cfg.statusPath(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"gpubook-agent", "status"}, getenv, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"node gpu01", "spool: 2 waiting", "42%", "alice until", "alice:7(100MiB)", "n/a (MIG)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out.String())
		}
	}
}

func TestProbe(t *testing.T) {
	node := agenttest.NewNode(t)
	node.Set(0, agenttest.GPUState{Util: 33, UsedMiB: 1234, Procs: []agenttest.Proc{{PID: 42, MemMiB: 1234}}})
	node.Set(1, agenttest.GPUState{MIG: true})
	var out bytes.Buffer
	if err := probe(context.Background(), node.Server, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"driver: 550.54.15", node.UUID(0), "33%", "1234 / 40960", "42(1234MiB)", node.UUID(7)} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("probe lacks %q:\n%s", want, out.String())
		}
	}
}
