package telemetry_test

import (
	"context"
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestMain runs the tests DefaultParallel at a time, on databases storetest
// prepares once and drops in the background.
func TestMain(m *testing.M) { storetest.Run(m) }

var ctx = context.Background()
