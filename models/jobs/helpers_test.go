package jobs_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/jonboulle/clockwork"

	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/store"
)

var ctx = context.Background()

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newRunner(t *testing.T, db *store.DB, clock clockwork.Clock, mod func(*jobs.Config)) *jobs.Runner {
	t.Helper()
	cfg := jobs.Config{Store: db, Clock: clock, Logger: quiet()}
	if mod != nil {
		mod(&cfg)
	}
	r, err := jobs.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
