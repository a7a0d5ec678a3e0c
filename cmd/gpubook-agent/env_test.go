package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/models/wire"
)

const (
	uuidA = "GPU-aaaaaaaa-0000-0000-0000-000000000002"
	uuidB = "GPU-bbbbbbbb-0000-0000-0000-000000000005"
)

// setup writes a config pointing at cachePath and returns getenv for run.
func setup(t *testing.T, cachePath string) func(string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.conf")
	body := "# test config\ncache_file = " + cachePath + "\nstate_dir = " + dir + "\nexempt_users = root, svc\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GPUBOOK_AGENT_CONFIG": cfg}
	return func(k string) string { return env[k] }
}

func goodCache(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "schedule.json")
	now := time.Now()
	f := cache.File{FetchedAt: now, GPUs: []wire.GPU{{UUID: uuidA, Index: 2}, {UUID: uuidB, Index: 5}},
		Schedule: wire.Schedule{PortalURL: "https://gpubook.example.org", Bookings: []wire.Booking{
			{ID: 1, User: "alice", GPUUUIDs: []string{uuidB, uuidA}, StartsAt: now.Add(-time.Hour), EndsAt: now.Add(time.Hour)}}}}
	if err := cache.Write(path, f); err != nil {
		t.Fatal(err)
	}
	return path
}

// evalShell runs the output through sh and returns CUDA_VISIBLE_DEVICES
// ("unset" if untouched): it proves the text is valid shell.
func evalShell(t *testing.T, code string) string {
	t.Helper()
	out, err := exec.Command("sh", "-ec", code+`printf '%s' "${CUDA_VISIBLE_DEVICES-unset}"`).CombinedOutput()
	if err != nil {
		t.Fatalf("sh rejected %q: %v: %s", code, err, out)
	}
	return string(out)
}

func runEnv(t *testing.T, getenv func(string) string, user string) (stdout, stderr string, took time.Duration) {
	t.Helper()
	var out, errb bytes.Buffer
	start := time.Now()
	if err := run(context.Background(), []string{"gpubook-agent", "env", "--user", user}, getenv, &out, &errb); err != nil {
		t.Fatalf("env returned %v; it must always succeed", err)
	}
	return out.String(), errb.String(), time.Since(start)
}

func TestEnvBookedAndUnbooked(t *testing.T) {
	getenv := setup(t, goodCache(t))
	tests := []struct {
		user, wantVar, wantHint string
	}{
		{"alice", uuidA + "," + uuidB, "gpubook: GPUs 2,5 booked until"},
		{"bob", "", "gpubook: no GPU booked now; book at https://gpubook.example.org"},
		{"root", "unset", ""},
		{"svc", "unset", ""},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			out, hint, _ := runEnv(t, getenv, tt.user)
			if got := evalShell(t, out); got != tt.wantVar {
				t.Errorf("CUDA_VISIBLE_DEVICES = %q, want %q", got, tt.wantVar)
			}
			if !strings.HasPrefix(hint, tt.wantHint) || (tt.wantHint == "" && hint != "") {
				t.Errorf("hint = %q, want prefix %q", hint, tt.wantHint)
			}
			if tt.wantVar != "unset" && !strings.Contains(out, "export CUDA_DEVICE_ORDER=PCI_BUS_ID") {
				t.Errorf("output %q lacks CUDA_DEVICE_ORDER", out)
			}
		})
	}
}

// TestEnvBrokenCache: whatever is wrong with the cache, env exits 0, prints
// valid shell that hides all GPUs, says why on stderr, and is fast.
func TestEnvBrokenCache(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "hung")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() { // release the abandoned reader
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}()
	tests := []struct {
		name, path, hint string
	}{
		{"missing", filepath.Join(dir, "nope.json"), "no cache yet"},
		{"empty", write("empty.json", "", 0o644), "cache unreadable"},
		{"corrupt", write("corrupt.json", `{"version":1,"schedule":{"book`, 0o644), "cache unreadable"},
		{"binary junk", write("junk.json", "\x00\xff\x13$(reboot)", 0o644), "cache unreadable"},
		{"not a directory", filepath.Join(write("file", "x", 0o644), "schedule.json"), "cache unreadable"},
		{"unreadable", write("secret.json", "{}", 0o000), "cache not readable"},
		{"hung disk", fifo, "timed out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "unreadable" && os.Geteuid() == 0 {
				// Root reads mode-0000 files; a directory where the file
				// should be cannot be read by anyone.
				tt.path, tt.hint = filepath.Join(dir, "a-directory.json"), "cache unreadable"
				if err := os.Mkdir(tt.path, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			out, hint, took := runEnv(t, setup(t, tt.path), "bob")
			if got := evalShell(t, out); got != "" {
				t.Errorf("CUDA_VISIBLE_DEVICES = %q, want empty (no GPUs)", got)
			}
			if !strings.Contains(hint, tt.hint) {
				t.Errorf("hint = %q, want it to mention %q", hint, tt.hint)
			}
			if took > time.Second {
				t.Errorf("took %v, want < 1s", took)
			}
		})
	}
}

// TestEnvBadConfigNamesTheLine: a broken config hides all GPUs from users,
// and the hint (the only thing a login shows) names the file, line and key;
// root keeps its environment (a typo must not lock the admin out).
func TestEnvBadConfigNamesTheLine(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "agent.conf")
	if err := os.WriteFile(conf, []byte("sample_interval = 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	getenv := func(k string) string { return map[string]string{"GPUBOOK_AGENT_CONFIG": conf}[k] }
	if err := run(context.Background(), []string{"gpubook-agent", "env", "--user", "nosuchuser-alice"}, getenv, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if got := evalShell(t, out.String()); got != "" {
		t.Errorf("CUDA_VISIBLE_DEVICES = %q, want empty", got)
	}
	var rootOut, rootErr bytes.Buffer
	if err := run(context.Background(), []string{"gpubook-agent", "env", "--user", "root"}, getenv, &rootOut, &rootErr); err != nil {
		t.Fatal(err)
	}
	if rootOut.String() != "" {
		t.Errorf("root with a bad config got %q, want nothing printed (environment unchanged)", rootOut.String())
	}
	if want := "bad config: " + conf + ":1: sample_interval"; !strings.Contains(errb.String(), want) {
		t.Errorf("hint = %q, want it to contain %q", errb.String(), want)
	}
}

func TestEnvBadFlagStillValidShell(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"gpubook-agent", "env", "--bogus"}, setup(t, goodCache(t)), &out, &errb); err != nil {
		t.Fatal(err)
	}
	if got := evalShell(t, out.String()); got != "" {
		t.Errorf("CUDA_VISIBLE_DEVICES = %q, want empty", got)
	}
}

func TestExec(t *testing.T) {
	getenv := setup(t, goodCache(t))
	tests := []struct {
		name     string
		user     string
		cmd      string
		wantOut  string
		wantCode int
	}{
		{"booked user sees the UUIDs", "alice", `printf %s "$CUDA_VISIBLE_DEVICES"`, uuidA + "," + uuidB, 0},
		{"unbooked user sees none", "bob", `printf %s "[$CUDA_VISIBLE_DEVICES]"`, "[]", 0},
		{"exit status passes through", "alice", "exit 3", "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), []string{"gpubook-agent", "exec", "--user", tt.user, "--", "sh", "-c", tt.cmd}, getenv, &out, &errb)
			code := 0
			if ec, ok := err.(exitCode); ok {
				code = int(ec)
			} else if err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.wantOut || code != tt.wantCode {
				t.Errorf("out %q code %d, want %q %d", out.String(), code, tt.wantOut, tt.wantCode)
			}
		})
	}
}

// TestBadFlagReportedOnce: the FlagSet prints a bad flag with the usage;
// the command exits 2 without printing it a second time.
func TestBadFlagReportedOnce(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"gpubook-agent", "status", "--bogus"}, setup(t, goodCache(t)), &out, &errb)
	if ec, ok := err.(exitCode); !ok || ec != 2 {
		t.Errorf("err = %v, want exit status 2", err)
	}
	if n := strings.Count(errb.String(), "flag provided but not defined: -bogus"); n != 1 {
		t.Errorf("the bad flag is reported %d times, want once:\n%s", n, errb.String())
	}
}
