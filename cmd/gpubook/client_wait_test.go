package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

// testClientWait: node-b's two H100s are held by Bob; the client waits,
// the test releases Bob's booking, and the client books them.
func testClientWait(t *testing.T, ce *clientEnv) {
	ctx := context.Background()
	bob := ce.env.AddUser("bob@example.org", "Bob", false)
	var ids []int64
	gpus, err := ce.env.DB.GPUs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gpus {
		if g.NodeName == "node-b" {
			ids = append(ids, g.ID)
		}
	}
	// Only Bob's booking holds node-b now: release what the earlier steps booked there.
	var mine struct{ Bookings []clientBooking }
	ce.mustJSON(t, &mine, "ls")
	for _, b := range mine.Bookings {
		if b.Node == "node-b" {
			ce.must(t, "release", fmt.Sprint(b.ID))
		}
	}
	// Bob's starts in five seconds: the bookings just released held node-b
	// until now, and his must not overlap them.
	now := time.Now()
	blocking, err := ce.env.DB.CreateBooking(ctx, models.NewBooking{UserID: bob.ID, GPUIDs: ids, StartsAt: now.Add(5 * time.Second), EndsAt: now.Add(3 * time.Hour)},
		models.DefaultBookingLimits, now, models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	ce.refused(t, "gave up after", "book", "--gpus", "2", "--node", "node-b", "--for", "1h", "--wait", "1s")

	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		vars := map[string]string{"XDG_CONFIG_HOME": filepath.Join(ce.home, "cfg"), "HOME": ce.home,
			"GPUBOOK_AGENT_CREDENTIAL_FILE": "/nonexistent", "GPUBOOK_AGENT_CACHE_FILE": "/nonexistent"}
		done <- runIO(ctx, []string{"gpubook", "book", "--gpus", "2", "--model", "nvidia h100 80gb hbm3", "--for", "1h", "--wait", "10m", "--json"},
			envOf(vars), cliIO{stdout: &out, stderr: &errOut, pollMin: 20 * time.Millisecond})
	}()
	for !strings.Contains(errOut.String(), "waiting for 2 × NVIDIA H100 80GB HBM3 for 1h: 0:0") {
		select {
		case err := <-done:
			t.Fatalf("book --wait ended before waiting: %v\nstderr: %s", err, errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	// Release Bob's booking, or cancel it if its start has not come yet.
	free := ce.env.DB.ReleaseBooking
	if time.Now().Before(blocking.StartsAt) {
		free = ce.env.DB.CancelBooking
	}
	if _, err := free(ctx, blocking.ID, bob, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("book --wait: %v\nstderr: %s", err, errOut.String())
	}
	var b clientBooking
	if err := json.Unmarshal([]byte(out.String()), &b); err != nil || b.Node != "node-b" || len(b.GPUUUIDs) != 2 {
		t.Fatalf("book --wait printed %q (%v)", out.String(), err)
	}
	if !strings.Contains(errOut.String(), "earliest slot") {
		t.Errorf("progress line: %q", errOut.String())
	}
}
