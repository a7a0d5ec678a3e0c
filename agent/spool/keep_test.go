package spool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/client"
	"github.com/gpubook/gpubook/agent/spool"
	"github.com/gpubook/gpubook/models/wire"
)

// TestOnlyInvalidBodiesSetAside: an answer about the credential, the node or
// the proxy says nothing about the data; the entry waits, order kept.
func TestOnlyInvalidBodiesSetAside(t *testing.T) {
	tests := []struct {
		code         int
		wantSetAside bool
	}{
		{400, true}, {422, true},
		{401, false}, {403, false}, {404, false}, {409, false}, {413, false}, {503, false},
	}
	for _, tt := range tests {
		t.Run(http(tt.code), func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, spool.DefaultLimits(), &clock{time.Now()})
			for i := 1; i <= 2; i++ {
				_, _ = s.Append(wire.PathUsage, i)
			}
			n, err := s.Drain(context.Background(), func(_ context.Context, e spool.Entry) error {
				return &client.StatusError{Code: tt.code, Body: `{"error":"nope"}`}
			}, client.Invalid, nil)
			st := s.Stats()
			if tt.wantSetAside {
				if n != 0 || err != nil || st.Depth != 0 || st.SetAside != 2 || st.SetAsideReason == "" {
					t.Errorf("Drain = %d, %v; stats %+v; want both set aside with a reason", n, err, st)
				}
				return
			}
			if err == nil || st.Depth != 2 || st.SetAside != 0 {
				t.Fatalf("Drain err %v, stats %+v; want an error and both entries waiting", err, st)
			}
			if got, want := drainAll(t, s), []int{1, 2}; !slices.Equal(got, want) {
				t.Errorf("delivered later %v, want %v", got, want)
			}
		})
	}
}

func http(code int) string {
	return "status " + string(rune('0'+code/100)) + string(rune('0'+code/10%10)) + string(rune('0'+code%10))
}

// TestSetAsideCountSurvivesReopen: the count and the newest reason are
// what status and the heartbeat show; a restart must not hide them.
func TestSetAsideCountSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)}
	s := open(t, dir, spool.DefaultLimits(), c)
	_, _ = s.Append(wire.PathViolations, 1)
	_, _ = s.Drain(context.Background(), func(context.Context, spool.Entry) error {
		return &client.StatusError{Code: 422, Body: "violations[0].gpu_uuid: unknown GPU"}
	}, client.Invalid, nil)
	st := open(t, dir, spool.DefaultLimits(), c).Stats()
	if st.SetAside != 1 || !st.SetAsideAt.Equal(c.t) || st.SetAsideReason == "" {
		t.Errorf("after reopen: %+v; want 1 set aside at %v with the reason", st, c.t)
	}
}

// TestOverflowDropsUsageFirst: at the byte bound, usage goes before
// violations and idle reports, and every drop is counted (persistently).
func TestOverflowDropsUsageFirst(t *testing.T) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)}
	s := open(t, dir, spool.Limits{MaxBytes: 1}, c) // everything but the newest is over
	kinds := []string{wire.PathViolations, wire.PathUsage, wire.PathIdle, wire.PathUsage}
	for i, k := range kinds {
		if _, err := s.Append(k, i+1); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Stats()
	if got, want := st.Dropped, map[string]int64{"usage": 1, "violations": 1, "idle": 1}; !mapsEqual(got, want) {
		t.Errorf("dropped %v, want %v", got, want)
	}
	s2 := open(t, dir, spool.Limits{MaxBytes: 4 << 10}, c)
	for i := 0; i < 3; i++ {
		_, _ = s2.Append(wire.PathUsage, 10+i)
	}
	_, _ = s2.Append(wire.PathViolations, 20)
	s2.Prune()
	s3 := open(t, dir, spool.Limits{MaxBytes: 250}, c) // room for two entries
	s3.Prune()
	var kept []string
	_, _ = s3.Drain(context.Background(), func(_ context.Context, e spool.Entry) error {
		kept = append(kept, spool.Tag(e.Kind))
		return nil
	}, nil, nil)
	if want := []string{"usage", "violations"}; !slices.Equal(kept, want) {
		t.Errorf("kept %v, want %v (the oldest usage goes first)", kept, want)
	}
	if got, want := s3.Stats().Dropped, map[string]int64{"usage": 4, "violations": 1, "idle": 1}; !mapsEqual(got, want) {
		t.Errorf("dropped after the second squeeze %v, want %v (counters persist)", got, want)
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestSeqNeverRepeats: batch IDs are node + seq; an emptied spool and a
// restart must not start over at 1 (the portal logs and dedups by them).
func TestSeqNeverRepeats(t *testing.T) {
	dir := t.TempDir()
	c := &clock{time.Now()}
	s := open(t, dir, spool.DefaultLimits(), c)
	_, _ = s.Append(wire.PathUsage, 1)
	_, _ = s.Append(wire.PathUsage, 2)
	drainAll(t, s)
	e, err := open(t, dir, spool.DefaultLimits(), c).Append(wire.PathUsage, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.Seq, uint64(3); got != want {
		t.Errorf("seq after empty + reopen = %d, want %d", got, want)
	}
}

// TestLegacyEntryNames: entries written by an older agent ("SEQ.json")
// are still delivered, in order, and known by kind for the drop policy.
func TestLegacyEntryNames(t *testing.T) {
	dir := t.TempDir()
	raw, _ := json.Marshal(spool.Entry{Seq: 7, Kind: wire.PathIdle, CreatedAt: time.Now(), Body: json.RawMessage("7")})
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000007.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, spool.DefaultLimits(), &clock{time.Now()})
	e, _ := s.Append(wire.PathUsage, 8)
	if e.Seq != 8 {
		t.Errorf("seq after a legacy entry = %d, want 8", e.Seq)
	}
	if got, want := drainAll(t, s), []int{7, 8}; !slices.Equal(got, want) {
		t.Errorf("delivered %v, want %v", got, want)
	}
}
