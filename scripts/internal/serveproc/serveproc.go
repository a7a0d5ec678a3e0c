// Package serveproc starts the real `gpubook serve` binary for the load
// commands under scripts/: on a free loopback port, on the database
// given, with OIDC and SMTP off, and waits until it answers /healthz.
package serveproc

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"time"
)

// Server is one started `gpubook serve` process.
type Server struct {
	Cmd  *exec.Cmd
	Base string // "http://127.0.0.1:PORT"
}

// Start runs bin serve on dbURL with env added to the environment
// (e.g. "GPUBOOK_DEV_LOGIN=1") and waits up to a minute for /healthz.
func Start(ctx context.Context, bin, dbURL string, env ...string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.CommandContext(ctx, bin, "serve")
	cmd.Env = append(os.Environ(), "GPUBOOK_DATABASE_URL="+dbURL, "GPUBOOK_LISTEN="+addr, "GPUBOOK_LOG_LEVEL=error",
		"GPUBOOK_OIDC_ISSUER=", "GPUBOOK_SMTP_HOST=")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Cmd: cmd, Base: "http://" + addr}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(s.Base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
	}
	s.Stop()
	return nil, fmt.Errorf("server did not answer /healthz within 60 s")
}

// Stop interrupts the server and kills it if it has not ended in 10 s.
func (s *Server) Stop() {
	_ = s.Cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = s.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.Cmd.Process.Kill()
		<-done
	}
}
