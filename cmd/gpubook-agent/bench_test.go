package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/models/wire"
)

// bigCache writes a cache of n bookings over 8 GPUs, one of them alice's now.
func bigCache(b *testing.B, n int) string {
	b.Helper()
	now := time.Now()
	f := cache.File{FetchedAt: now, Schedule: wire.Schedule{PortalURL: "https://gpubook.example.org"}}
	for i := range 8 {
		f.GPUs = append(f.GPUs, wire.GPU{UUID: fmt.Sprintf("GPU-%08d-0000-0000-0000-000000000000", i), Index: i})
	}
	for i := range n {
		start := now.Add(time.Duration(i-n/2) * time.Minute)
		f.Schedule.Bookings = append(f.Schedule.Bookings, wire.Booking{ID: int64(i + 1), User: fmt.Sprintf("user%03d", i%200),
			GPUUUIDs: []string{f.GPUs[i%8].UUID}, StartsAt: start, EndsAt: start.Add(50 * time.Minute), Kind: wire.KindStandard})
	}
	f.Schedule.Bookings = append(f.Schedule.Bookings, wire.Booking{ID: 99999, User: "alice",
		GPUUUIDs: []string{f.GPUs[2].UUID, f.GPUs[5].UUID}, StartsAt: now.Add(-time.Hour), EndsAt: now.Add(time.Hour)})
	path := filepath.Join(b.TempDir(), "schedule.json")
	if err := cache.Write(path, f); err != nil {
		b.Fatal(err)
	}
	return path
}

func benchGetenv(b *testing.B, cachePath string) func(string) string {
	cfg := filepath.Join(b.TempDir(), "agent.conf")
	if err := os.WriteFile(cfg, []byte("cache_file = "+cachePath+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return func(k string) string {
		if k == "GPUBOOK_AGENT_CONFIG" {
			return cfg
		}
		return ""
	}
}

// BenchmarkEnv1000 is one `env` call in-process: config, user, cache of
// 1,000 bookings, decision, output.
func BenchmarkEnv1000(b *testing.B) {
	getenv := benchGetenv(b, bigCache(b, 1000))
	var out bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		out.Reset()
		if err := run(context.Background(), []string{"gpubook-agent", "env", "--user", "alice"}, getenv, &out, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	if !bytes.Contains(out.Bytes(), []byte("GPU-00000002")) {
		b.Fatalf("unexpected output %q", out.String())
	}
}

// BenchmarkEnvProcess1000 measures what a login waits for: exec of the
// real binary to its exit, with a cache of 1,000 bookings.
func BenchmarkEnvProcess1000(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "gpubook-agent")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	cachePath := bigCache(b, 1000)
	cfg := filepath.Join(b.TempDir(), "agent.conf")
	if err := os.WriteFile(cfg, []byte("cache_file = "+cachePath+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	var worst time.Duration
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(bin, "env", "--config", cfg, "--user", "alice")
		out, err := cmd.Output()
		if err != nil || !bytes.Contains(out, []byte("GPU-00000002")) {
			b.Fatalf("env: %v %q", err, out)
		}
		worst = max(worst, time.Since(start))
	}
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
}

// BenchmarkEnvStart compares a login's `gpubook-agent env` (a cache of 24
// bookings, a normal day of an 8-GPU node) with a static Go hello-world,
// both started the way a login shell's hook would be: through runuser as
// an unprivileged user, alternating, b.N runs each. It reports the mean
// of each and their ratio; it needs root and runuser, and skips otherwise.
//
//	go test -run '^$' -bench EnvStart -benchtime 100x ./cmd/gpubook-agent/
func BenchmarkEnvStart(b *testing.B) {
	runuser, err := exec.LookPath("runuser")
	if err != nil || os.Geteuid() != 0 {
		b.Skip("needs root and runuser")
	}
	dir, err := os.MkdirTemp("", "envstart")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	agent, hello := filepath.Join(dir, "gpubook-agent"), filepath.Join(dir, "hello")
	if out, err := exec.Command("go", "build", "-o", agent, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	src := filepath.Join(dir, "hello.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"hello\\n\") }\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", hello, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build hello: %v\n%s", err, out)
	}
	cachePath := bigCache(b, 24)
	if err := os.Chmod(filepath.Dir(cachePath), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Chmod(cachePath, 0o644); err != nil {
		b.Fatal(err)
	}
	cfg := filepath.Join(dir, "agent.conf")
	if err := os.WriteFile(cfg, []byte("cache_file = "+cachePath+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	timed := func(name string, args ...string) time.Duration {
		start := time.Now()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %v %s", args, err, out)
		}
		return time.Since(start)
	}
	as := []string{"-u", "nobody", "--"}
	var envT, helloT, envDirect, helloDirect time.Duration
	for b.Loop() {
		envT += timed(runuser, append(as, agent, "env", "--config", cfg)...)
		helloT += timed(runuser, append(as, hello)...)
		envDirect += timed(agent, "env", "--config", cfg, "--user", "nobody")
		helloDirect += timed(hello)
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64((envT/n).Microseconds())/1000, "env-ms")
	b.ReportMetric(float64((helloT/n).Microseconds())/1000, "hello-ms")
	b.ReportMetric(float64(envT)/float64(helloT), "env/hello")
	// Without runuser (its PAM session is most of the time above): the
	// processes alone.
	b.ReportMetric(float64(envDirect)/float64(helloDirect), "direct-env/hello")
}
