package spool_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/agent/spool"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func open(t *testing.T, dir string, lim spool.Limits, c *clock) *spool.Spool {
	t.Helper()
	s, err := spool.Open(dir, lim, c.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// drainAll collects bodies in delivery order.
func drainAll(t *testing.T, s *spool.Spool) []int {
	t.Helper()
	var got []int
	_, err := s.Drain(context.Background(), func(_ context.Context, e spool.Entry) error {
		var n int
		if err := json.Unmarshal(e.Body, &n); err != nil {
			return err
		}
		got = append(got, n)
		return nil
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestOrderAndSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)}
	s := open(t, dir, spool.DefaultLimits(), c)
	for i := 1; i <= 3; i++ {
		if _, err := s.Append("/usage", i); err != nil {
			t.Fatal(err)
		}
	}
	// crash: a half-written temp file is left behind; the process is gone
	if err := os.WriteFile(filepath.Join(dir, ".00000000000000000004.json.tmp-1"), []byte(`{"se`), 0o600); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, dir, spool.DefaultLimits(), c)
	if got, want := s2.Stats().Depth, 3; got != want {
		t.Fatalf("depth after reopen = %d, want %d", got, want)
	}
	e, err := s2.Append("/usage", 4)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.Seq, uint64(4); got != want {
		t.Errorf("seq after reopen = %d, want %d", got, want)
	}
	if got, want := drainAll(t, s2), []int{1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("delivered %v, want %v", got, want)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.json*")); !slices.Equal(left, []string{filepath.Join(dir, "state.json")}) {
		t.Errorf("files left after drain: %v, want only the state file", left)
	}
}

func TestDrainStopsAtFailureAndKeepsOrder(t *testing.T) {
	c := &clock{time.Now()}
	s := open(t, t.TempDir(), spool.DefaultLimits(), c)
	for i := 1; i <= 3; i++ {
		_, _ = s.Append("/usage", i)
	}
	calls := 0
	n, err := s.Drain(context.Background(), func(context.Context, spool.Entry) error {
		calls++
		if calls == 2 {
			return errors.New("portal down")
		}
		return nil
	}, client.Invalid, nil)
	if n != 1 || err == nil {
		t.Fatalf("Drain = %d, %v; want 1 and an error", n, err)
	}
	if got, want := drainAll(t, s), []int{2, 3}; !slices.Equal(got, want) {
		t.Errorf("after failure delivered %v, want %v", got, want)
	}
}

func TestPermanentRejectionDoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, spool.DefaultLimits(), &clock{time.Now()})
	for i := 1; i <= 3; i++ {
		_, _ = s.Append("/usage", i)
	}
	var got []int
	n, err := s.Drain(context.Background(), func(_ context.Context, e spool.Entry) error {
		if e.Seq == 2 {
			return &client.StatusError{Code: 400}
		}
		var v int
		_ = json.Unmarshal(e.Body, &v)
		got = append(got, v)
		return nil
	}, client.Invalid, nil)
	if n != 2 || err != nil || !slices.Equal(got, []int{1, 3}) {
		t.Errorf("Drain = %d, %v, delivered %v; want 2, nil, [1 3]", n, err, got)
	}
	if _, err := os.Stat(filepath.Join(dir, "00000000000000000002.usage.json.rejected")); err != nil {
		t.Errorf("rejected entry not kept aside: %v", err)
	}
}

func TestLimits(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		lim  spool.Limits
		step time.Duration
		want []int
	}{
		{"older than 7 days dropped (pruned at day 12)", spool.Limits{MaxAge: 7 * 24 * time.Hour}, 3 * 24 * time.Hour, []int{3, 4}},
		{"over the byte limit drops oldest", spool.Limits{MaxBytes: 150}, time.Minute, []int{3, 4}},
		{"within limits keeps all", spool.DefaultLimits(), time.Minute, []int{1, 2, 3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t0}
			s := open(t, t.TempDir(), tt.lim, c)
			for i := 1; i <= 4; i++ {
				if _, err := s.Append("/usage", i); err != nil {
					t.Fatal(err)
				}
				c.t = c.t.Add(tt.step)
			}
			s.Prune()
			if got := drainAll(t, s); !slices.Equal(got, tt.want) {
				t.Errorf("kept %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCorruptEntrySetAside(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, spool.DefaultLimits(), &clock{time.Now()})
	_, _ = s.Append("/usage", 1)
	_, _ = s.Append("/usage", 2)
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000001.usage.json"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := drainAll(t, s), []int{2}; !slices.Equal(got, want) {
		t.Errorf("delivered %v, want %v", got, want)
	}
}

// TestSetAsideEntriesExpire: entries set aside as .rejected or .bad are kept
// for the admin, but removed at Open once older than MaxAge.
func TestSetAsideEntriesExpire(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	files := map[string]time.Time{
		"00000000000000000001.json.rejected": now.Add(-8 * 24 * time.Hour),
		"00000000000000000002.json.bad":      now.Add(-8 * 24 * time.Hour),
		"00000000000000000003.json.rejected": now.Add(-time.Hour),
	}
	for name, at := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	open(t, dir, spool.DefaultLimits(), &clock{now})
	for name, at := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if old := now.Sub(at) > 7*24*time.Hour; old != errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s (old %v): stat err %v", name, old, err)
		}
	}
}
