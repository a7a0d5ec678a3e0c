// Package agentbin gives tests the gpubook-agent binary of this checkout.
// It is a package of its own, apart from agenttest, because agenttest
// brings go-nvml's simulated GPUs (cgo) into every test binary that
// imports it.
package agentbin

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Build writes cmd/gpubook-agent, built from this checkout, to dst and
// returns dst.
//
// It builds with `go run -exec echo`, which prints the executable's path
// instead of running it: go run keeps what it links in the build cache
// (since Go 1.24), so the tests that need the agent link it once between
// them, and not at all when nothing changed since the last run. With `go
// build -o` into a new folder each of them linked it every time (1.4–1.8 s
// of CPU a link: the agent is cgo, linked by gcc). The first build after a
// change prints a temporary folder that go run removes when it ends (the
// executable is in the cache by then): a second run prints the cached one.
func Build(t testing.TB, dst string) string {
	t.Helper()
	var last error
	for range 2 {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command("go", "run", "-exec", "echo", "github.com/gpubook/gpubook/cmd/gpubook-agent")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("build gpubook-agent: %v\n%s", err, stderr.Bytes())
		}
		if last = copyTo(string(bytes.TrimSpace(stdout.Bytes())), dst); last == nil {
			return dst
		}
	}
	t.Fatalf("build gpubook-agent: %v", last)
	return ""
}

// copyTo writes the executable at src (as go run printed it) to dst.
func copyTo(src, dst string) error {
	if src == "" {
		return errors.New("go run printed no path")
	}
	data, err := os.ReadFile(src)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(dst), 0o755)
	}
	if err == nil {
		err = os.WriteFile(dst, data, 0o755)
	}
	return err
}
