// Command gpubook is the GPU booking portal: the web server and the
// administrator's command line (migrations, users, tokens, nodes, demo data).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gpubook:", err)
		os.Exit(1)
	}
}
