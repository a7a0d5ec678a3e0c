package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

//go:embed peerclient.go.txt
var peerClientSrc []byte

// peer is canhazgpu built from its unmodified source beside a private
// Redis on a loopback port, with its fake GPU provider (no GPU probing:
// its best case) and its web dashboard.
type peer struct {
	bin, client string // the canhazgpu CLI and the keep-alive client
	home        string // HOME for the CLI, so that no user config is read
	redisPort   int
	web         string // http://127.0.0.1:port of `canhazgpu web`
	stop        []func()
}

// startPeer builds canhazgpu from src in a copy under dir, starts Redis and
// the dashboard, and initialises a pool of gpus fake GPUs.
func startPeer(ctx context.Context, src, dir string, gpus int) (*peer, error) {
	p := &peer{bin: filepath.Join(dir, "bin", "canhazgpu"), client: filepath.Join(dir, "bin", "peerclient"), home: filepath.Join(dir, "home")}
	if err := p.build(ctx, src, dir); err != nil {
		return nil, fmt.Errorf("build canhazgpu: %w", err)
	}
	if err := os.MkdirAll(p.home, 0o755); err != nil {
		return nil, err
	}
	redis, err := redisServer(ctx)
	if err != nil {
		return nil, err
	}
	if p.redisPort, err = freePort(); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, redis, "--port", strconv.Itoa(p.redisPort), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir)
	if err := start(cmd, &p.stop); err != nil {
		return nil, err
	}
	if err := waitTCP(ctx, fmt.Sprintf("127.0.0.1:%d", p.redisPort)); err != nil {
		p.close()
		return nil, fmt.Errorf("redis: %w", err)
	}
	if out, err := p.cli(ctx, "admin", "--gpus", strconv.Itoa(gpus), "--provider", "fake", "--force").CombinedOutput(); err != nil {
		p.close()
		return nil, fmt.Errorf("canhazgpu admin: %w: %s", err, out)
	}
	webPort, err := freePort()
	if err != nil {
		p.close()
		return nil, err
	}
	if err := start(p.cli(ctx, "web", "--host", "127.0.0.1", "--port", strconv.Itoa(webPort)), &p.stop); err != nil {
		p.close()
		return nil, err
	}
	p.web = fmt.Sprintf("http://127.0.0.1:%d", webPort)
	if err := waitHTTP(ctx, p.web+"/api/status"); err != nil {
		p.close()
		return nil, fmt.Errorf("canhazgpu web: %w", err)
	}
	return p, nil
}

// build copies src (left untouched) to dir/src, adds the keep-alive client
// as a new command there, and builds both binaries.
func (p *peer) build(ctx context.Context, src, dir string) error {
	copyDir := filepath.Join(dir, "src")
	if err := os.CopyFS(copyDir, os.DirFS(src)); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(copyDir, "cmd", "peerclient"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(copyDir, "cmd", "peerclient", "main.go"), peerClientSrc, 0o644); err != nil {
		return err
	}
	for _, b := range [][2]string{{p.bin, "."}, {p.client, "./cmd/peerclient"}} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", b[0], b[1])
		cmd.Dir = copyDir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
	}
	return nil
}

// cli is a canhazgpu command on the private Redis, as a user runs it.
func (p *peer) cli(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, p.bin, append([]string{"--redis-host", "127.0.0.1", "--redis-port", strconv.Itoa(p.redisPort)}, args...)...)
	cmd.Env = []string{"HOME=" + p.home, "USER=bench", "PATH=" + os.Getenv("PATH")}
	return cmd
}

func (p *peer) close() { stopAll(p.stop) }

// redisServer finds Debian's redis-server, installing the package when it
// is missing.
func redisServer(ctx context.Context) (string, error) {
	if path, err := exec.LookPath("redis-server"); err == nil {
		return path, nil
	}
	cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "-q", "redis-server")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("install redis-server: %w: %s", err, out)
	}
	return exec.LookPath("redis-server")
}

// stopAll runs stops, the last registered first.
func stopAll(stops []func()) {
	for i := len(stops) - 1; i >= 0; i-- {
		stops[i]()
	}
}

// start starts a long-lived child and registers how to stop that one
// process.
func start(cmd *exec.Cmd, stops *[]func()) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	*stops = append(*stops, func() {
		_ = cmd.Process.Signal(os.Interrupt) // a clean stop, then SIGKILL after 3 s
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func waitTCP(ctx context.Context, addr string) error {
	for range 100 {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			return c.Close()
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
	return errors.New("not listening after 5 s")
}

func waitHTTP(ctx context.Context, url string) error {
	for range 200 {
		if res, err := http.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
	return errors.New("not answering 200 after 10 s")
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
