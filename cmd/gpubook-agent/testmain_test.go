package main

import (
	"os"
	"testing"

	"github.com/gpubook/gpubook/agent/lock"
)

// TestMain lets the lock's self-check run this test binary as its child,
// as it runs gpubook-agent itself.
func TestMain(m *testing.M) {
	lock.MaybeSelfCheckChild()
	os.Exit(m.Run())
}
