package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	v1 "github.com/gpubook/gpubook/models/api"
)

func TestParseSpan(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"4h", 4 * time.Hour, true}, {"90m", 90 * time.Minute, true}, {"1h30m", 90 * time.Minute, true},
		{"2d", 48 * time.Hour, true}, {"0h", 0, false}, {"-1h", 0, false}, {"4", 0, false}, {"xd", 0, false}, {"", 0, false},
	} {
		got, err := parseSpan("for", tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("parseSpan(%q) = %s, %v; want %s, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseAt(t *testing.T) {
	t.Parallel()
	sh, _ := time.LoadLocation("Asia/Shanghai")
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC) // 14:00 in Shanghai
	for _, tt := range []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2026-12-04T09:00:00Z", time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC), true},
		{"2026-12-04 09:00", time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC), true},
		{"16:30", time.Date(2026, 12, 3, 8, 30, 0, 0, time.UTC), true},
		{"09:00", time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC), true}, // passed today: tomorrow
		{"tomorrow", time.Time{}, false},
	} {
		got, err := parseAt(tt.in, sh, now)
		if !got.Equal(tt.want) || (err == nil) != tt.ok {
			t.Errorf("parseAt(%q) = %s, %v; want %s, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestShowSpan(t *testing.T) {
	t.Parallel()
	for in, want := range map[time.Duration]string{0: "0m", 45 * time.Minute: "45m", 200 * time.Minute: "3h20m",
		52 * time.Hour: "2d4h", 7 * 24 * time.Hour: "7d", 24*time.Hour + time.Minute: "1d1m"} {
		if got := showSpan(in); got != want {
			t.Errorf("showSpan(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestAPIErrorIsOneLine(t *testing.T) {
	t.Parallel()
	e := &apiError{ErrorDetail: v1.ErrorDetail{Code: "policy", Message: "This booking is outside the booking policy.",
		Fields: map[string]string{"max_length": "At most 4 hours.\nYou asked 6.", "max_gpus.peak": "At most 2 GPUs."}}}
	want := "refused (policy): This booking is outside the booking policy. max_gpus.peak: At most 2 GPUs. max_length: At most 4 hours. You asked 6."
	if got := e.Error(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestHelpGroupsCommands: --help lists the server, admin and client commands apart.
func TestHelpGroupsCommands(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(ctx, []string{"gpubook", "--help"}, envOf(nil), &out, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	server, admin, client := strings.Index(text, "Server"), strings.Index(text, "Administration"), strings.Index(text, "Client")
	if server < 0 || admin < server || client < admin {
		t.Fatalf("groups missing or out of order:\n%s", text)
	}
	for _, name := range []string{"login", "free", "book", "ls", "extend", "release", "request", "limits"} {
		if i := strings.Index(text, "\n  "+name+" "); i < client {
			t.Errorf("%s is not listed under Client:\n%s", name, text)
		}
	}
	for _, name := range []string{"serve", "migrate"} {
		if i := strings.Index(text, "\n  "+name+" "); i < server || i > admin {
			t.Errorf("%s is not listed under Server", name)
		}
	}
}
