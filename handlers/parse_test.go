package handlers

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

// The form and query parsers below turn what people type into values;
// each table lists the accepted forms and the refused ones.

func TestParseFormTime(t *testing.T) {
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2026-12-03T09:30", time.Date(2026, 12, 3, 9, 30, 0, 0, tokyo), true},
		{" 2026-12-03 09:30 ", time.Date(2026, 12, 3, 9, 30, 0, 0, tokyo), true},
		{"2026-12-03T09:30:15", time.Date(2026, 12, 3, 9, 30, 15, 0, tokyo), true},
		{"2026-12-03T09:30:00Z", time.Date(2026, 12, 3, 9, 30, 0, 0, time.UTC), true},
		{"2026-12-03T09:30+01:00", time.Date(2026, 12, 3, 8, 30, 0, 0, time.UTC), true},
		{"", time.Time{}, false},
		{"tomorrow", time.Time{}, false},
		{"2026-13-03T09:30", time.Time{}, false},
		{"2026-12-03T09:30" + string(make([]byte, 40)), time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseFormTime(tt.in, tokyo)
			if ok != tt.ok || !got.Equal(tt.want) {
				t.Errorf("got %v %v, want %v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseHours(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"4", 4 * time.Hour, true},
		{" 1.5 ", 90 * time.Minute, true},
		{"0.01", time.Minute, true}, // 36 s, rounded to the minute
		{"8784", 8784 * time.Hour, true},
		{"8785", 0, false},
		{"0", 0, false},
		{"-2", 0, false},
		{"four", 0, false},
		{"NaN", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseHours(tt.in)
			if ok != tt.ok || got != tt.want {
				t.Errorf("got %v %v, want %v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseIDs(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		want    []int64
		wantErr bool
	}{
		{"none", nil, nil, false},
		{"two", []string{"3", " 7 "}, []int64{3, 7}, false},
		{"zero", []string{"3", "0"}, []int64{3}, true},
		{"text", []string{"x"}, nil, true},
		{"overflow", []string{"99999999999999999999"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe := models.FieldErrors{}
			got := parseIDs(tt.in, "gpu_ids", fe)
			if len(got) != len(tt.want) || (fe.Err() != nil) != tt.wantErr {
				t.Fatalf("got %v, errors %v; want %v, error %v", got, fe, tt.want, tt.wantErr)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestNextSlot(t *testing.T) {
	at := func(h, m, s int) time.Time { return time.Date(2026, 12, 3, h, m, s, 0, time.UTC) }
	tests := []struct {
		name string
		now  time.Time
		slot time.Duration
		want time.Time
	}{
		{"on a boundary", at(9, 30, 0), 30 * time.Minute, at(9, 30, 0)},
		{"just after", at(9, 30, 1), 30 * time.Minute, at(10, 0, 0)},
		{"quarter hours", at(9, 31, 0), 15 * time.Minute, at(9, 45, 0)},
		{"no slot set: half hours", at(9, 1, 0), 0, at(9, 30, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextSlot(tt.now, tt.slot); !got.Equal(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseDate(t *testing.T) {
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	now := time.Date(2026, 12, 3, 20, 0, 0, 0, time.UTC) // 04:00 on the 4th in Shanghai
	today := time.Date(2026, 12, 4, 0, 0, 0, 0, shanghai)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-06-01", time.Date(2026, 6, 1, 0, 0, 0, 0, shanghai)},
		{"", today},
		{"yesterday", today},
		{"1999-12-31", today},
		{"2201-01-01", today},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := parseDate(tt.in, now, shanghai); !got.Equal(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSafeNext(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/calendar?date=2026-12-03", "/calendar?date=2026-12-03"},
		{"", "/"},
		{"https://evil.example", "/"},
		{"//evil.example/x", "/"},
		{"/\\evil.example", "/"},
		{"calendar", "/"},
		{"javascript:alert(1)", "/"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := SafeNext(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEtagMatches(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{`"abc"`, true},
		{`W/"abc"`, true},
		{`"x", "abc"`, true},
		{`*`, true},
		{`"abd"`, false},
		{``, false},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			if got := etagMatches(tt.header, `"abc"`); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseScope(t *testing.T) {
	tests := []struct {
		in   string
		kind string
		id   int64
		ok   bool
	}{
		{models.ScopeGlobal, models.ScopeGlobal, 0, true},
		{"team:3", models.ScopeTeam, 3, true},
		{"user:12", models.ScopeUser, 12, true},
		{"team:0", "", 0, false},
		{"team:-1", "", 0, false},
		{"node:3", "", 0, false},
		{"team", "", 0, false},
		{"", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			kind, id, ok := parseScope(tt.in)
			if kind != tt.kind || id != tt.id || ok != tt.ok {
				t.Errorf("got %q %d %v, want %q %d %v", kind, id, ok, tt.kind, tt.id, tt.ok)
			}
		})
	}
}

func TestStringList(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want int
	}{
		{"one string", "gpu-users", 1},
		{"a list", []any{"a", "b"}, 2},
		{"non-strings dropped", []any{"a", 3, nil, "b"}, 2},
		{"absent", nil, 0},
		{"a number", 7.0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stringList(tt.in); len(got) != tt.want {
				t.Errorf("got %v, want %d entries", got, tt.want)
			}
		})
	}
}
