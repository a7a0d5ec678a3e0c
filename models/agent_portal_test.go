package models

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

var ap0 = time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)

func TestEnrollTokenUsable(t *testing.T) {
	exp := ap0.Add(EnrollTokenValidity)
	used := ap0.Add(time.Minute)
	tests := []struct {
		name string
		used *time.Time
		now  time.Time
		want bool
	}{
		{"fresh", nil, ap0.Add(time.Hour), true},
		{"last second", nil, exp.Add(-time.Second), true},
		{"expired", nil, exp, false},
		{"used", &used, ap0.Add(time.Hour), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EnrollTokenUsable(exp, tt.used, tt.now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNodeOffline(t *testing.T) {
	seen := ap0
	tests := []struct {
		name string
		last *time.Time
		now  time.Time
		want bool
	}{
		{"never", nil, ap0, true},
		{"just now", &seen, ap0.Add(time.Minute), false},
		{"two minutes", &seen, ap0.Add(NodeOfflineAfter), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NodeOffline(tt.last, tt.now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUnixNameIndex(t *testing.T) {
	idx := UnixNameIndex([]User{{ID: 1, Email: "Ada.L@Example.org"}, {ID: 2, Email: "bob@a.org"}, {ID: 3, Email: "bob@b.org"}})
	if idx["ada.l"] != 1 || idx["bob"] != 0 || len(idx) != 2 {
		t.Errorf("index = %v, want ada.l→1 and bob ambiguous (0)", idx)
	}
}

func TestCheckUsageRecord(t *testing.T) {
	ret := 400 * 24 * time.Hour
	tests := []struct {
		name    string
		minute  time.Time
		samples int
		want    UsageVerdict
		wantErr bool
	}{
		{"now", ap0, 6, UsageStore, false},
		{"skewed clock", ap0.Add(UsageFutureSkew), 6, UsageStore, false},
		{"future", ap0.Add(UsageFutureSkew + time.Minute), 6, 0, true},
		{"too many samples", ap0, 3601, 0, true},
		{"older than retention", ap0.Add(-ret - time.Minute), 6, UsageStale, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CheckUsageRecord(wire.UsageRecord{Minute: tt.minute, Samples: tt.samples}, ap0, ret)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("got %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestUsageRetention(t *testing.T) {
	if d, err := UsageRetention(""); err != nil || d != 35*24*time.Hour {
		t.Errorf("default = %v, %v", d, err)
	}
	if d, err := UsageRetention("30"); err != nil || d != 30*24*time.Hour {
		t.Errorf("30 = %v, %v", d, err)
	}
	for _, bad := range []string{"0", "-1", "x", "1.5"} {
		if _, err := UsageRetention(bad); ErrorCode(err) != EINVALID {
			t.Errorf("%q: %v, want invalid", bad, err)
		}
	}
}

func TestScheduleETag(t *testing.T) {
	a := []wire.Booking{{ID: 1, User: "ada", GPUUUIDs: []string{"GPU-1"}, StartsAt: ap0, EndsAt: ap0.Add(time.Hour)}}
	b := []wire.Booking{{ID: 1, User: "ada", GPUUUIDs: []string{"GPU-1"}, StartsAt: ap0, EndsAt: ap0.Add(2 * time.Hour)}}
	if ScheduleETag(a) != ScheduleETag(a) || ScheduleETag(a) == ScheduleETag(b) || ScheduleETag(nil) == ScheduleETag(a) {
		t.Errorf("ETag must be stable for equal schedules and differ when a booking changes")
	}
}

func TestIdleReleaseDue(t *testing.T) {
	pol := IdlePolicy{AutoRelease: true, Grace: 3 * time.Minute, UtilPct: 5}
	rep := IdleReport{GPUIDs: []int64{7}, ReportedAt: ap0.Add(20 * time.Second), BookingEndsAt: ap0.Add(time.Hour)}
	idle := map[int64]map[time.Time]bool{7: {ap0: true, ap0.Add(time.Minute): true, ap0.Add(2 * time.Minute): true}}
	gap := map[int64]map[time.Time]bool{7: {ap0: true, ap0.Add(2 * time.Minute): true}}
	busy := map[int64]map[time.Time]bool{7: {ap0: true, ap0.Add(time.Minute): false, ap0.Add(2 * time.Minute): true}}
	released := rep
	released.ReleasedAt = &ap0
	off := pol
	off.AutoRelease = false
	tests := []struct {
		name string
		pol  IdlePolicy
		rep  IdleReport
		idle map[int64]map[time.Time]bool
		now  time.Time
		want bool
	}{
		{"idle through the grace", pol, rep, idle, ap0.Add(3 * time.Minute), true},
		{"grace not over", pol, rep, idle, ap0.Add(2 * time.Minute), false},
		{"a minute missing", pol, rep, gap, ap0.Add(3 * time.Minute), false},
		{"used again", pol, rep, busy, ap0.Add(3 * time.Minute), false},
		{"policy off", off, rep, idle, ap0.Add(3 * time.Minute), false},
		{"already released", pol, released, idle, ap0.Add(3 * time.Minute), false},
		{"booking over", pol, rep, idle, ap0.Add(time.Hour), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IdleReleaseDue(tt.pol, tt.rep, tt.idle, tt.now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIdleMinuteOf(t *testing.T) {
	low, high := 4.0, 5.0
	pol := DefaultIdlePolicy
	if !IdleMinuteOf(UsageMinute{UtilMaxPct: &low}, 0, pol) || IdleMinuteOf(UsageMinute{UtilMaxPct: &high}, 0, pol) ||
		IdleMinuteOf(UsageMinute{UtilMaxPct: &low}, 1, pol) || !IdleMinuteOf(UsageMinute{}, 0, pol) {
		t.Errorf("idle minute rule: <5 %% peak and no user; MIG (no utilisation) with no user is idle")
	}
}

func TestBuildLiveStatus(t *testing.T) {
	now := ap0.Add(30 * time.Second)
	seen := ap0
	u50, u10 := 50.0, 10.0
	in := LiveInputs{
		GPUs:     []GPU{{ID: 1, NodeID: 9, Index: 0}, {ID: 2, NodeID: 9, Index: 1}},
		Nodes:    []AgentNode{{NodeID: 9, NodeName: "n1", Enrolled: true, LastSeenAt: &seen}},
		Bookings: []Booking{{ID: 5, GPUIDs: []int64{1}, UserName: "Ada"}},
		Usage: []UsageMinute{{GPUID: 1, Minute: ap0.Add(-2 * time.Minute), UtilAvgPct: &u10},
			{GPUID: 1, Minute: ap0.Add(-time.Minute), UtilAvgPct: &u50, MemUsedMiB: 100}},
		Users: []UserMinute{{GPUID: 1, Minute: ap0.Add(-2 * time.Minute), UserName: "old"},
			{GPUID: 1, Minute: ap0.Add(-time.Minute), UserName: "ada"}, {GPUID: 2, Minute: ap0, UserName: "bob"}},
		Violations: []Violation{{GPUID: 2, UserName: "bob"}},
		Idle:       []IdleReport{{BookingID: 5, GPUIDs: []int64{1}}},
	}
	out := BuildLiveStatus(in, now)
	if len(out) != 1 || out[0].Offline || len(out[0].GPUs) != 2 {
		t.Fatalf("nodes = %+v", out)
	}
	g := out[0].GPUs[0]
	if g.Booking == nil || g.Booking.ID != 5 || g.Latest == nil || *g.Latest.UtilAvgPct != 50 || len(g.Users) != 1 || g.Users[0].UserName != "ada" || g.Idle == nil || g.Unbooked {
		t.Errorf("GPU 0 = %+v", g)
	}
	if len(g.Spark) != SparkMinutes || g.Spark[SparkMinutes-1] == nil || *g.Spark[SparkMinutes-1] != 50 || *g.Spark[SparkMinutes-2] != 10 || g.Spark[0] != nil {
		t.Errorf("spark = %v", g.Spark)
	}
	if g := out[0].GPUs[1]; g.Latest != nil || len(g.Users) != 0 || len(g.Violations) != 1 || g.Unbooked {
		t.Errorf("GPU 1 (no usage stored, a violation) = %+v", g)
	}
	if BuildLiveStatus(in, ap0.Add(NodeOfflineAfter))[0].Offline != true {
		t.Errorf("node silent for 2 min not offline")
	}
}
