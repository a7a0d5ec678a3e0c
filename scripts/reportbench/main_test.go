package main

import (
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestMain drops the tests' PostgreSQL databases in the background and
// copies each SQLite one from a file migrated once.
func TestMain(m *testing.M) { storetest.Run(m) }
