package main

import (
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestMain runs the tests side by side (they wait on PostgreSQL, on served
// HTTP and on child processes), on databases dropped in the background.
func TestMain(m *testing.M) { storetest.Run(m) }
