package main

import (
	"context"
	"fmt"
	"net"
)

// freeLoopbackPort asks the kernel for a free port on 127.0.0.1 for an
// agent's /metrics: fixed ports (9478, 9479, …) made a second demo's
// agents, or anything already on them, fail to start.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("demo --agents: free port for /metrics: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// demoSignIn is the demo's last line: where to sign in. The address is
// this command's own (its --listen or GPUBOOK_BASE_URL), which is the
// server's only if both were started alike, so it is promised only when a
// portal answers there.
func demoSignIn(ctx context.Context, base string) string {
	if portalAnswers(ctx, base) == nil {
		return fmt.Sprintf("Sign in: open %s/login and pick any user; admin@example.org is an admin", base)
	}
	return fmt.Sprintf("Sign in: no portal answers at %s yet (this command's --listen or GPUBOOK_BASE_URL); start 'gpubook serve', "+
		"open the address it prints + /login and pick any user; admin@example.org is an admin", base)
}
