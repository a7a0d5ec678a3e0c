package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

// TestDemoAgentMetricsPortsAreFree: with the old fixed port 9478 taken
// (another demo), the port an agent gets is still free, and it is the one
// its agent.conf names.
func TestDemoAgentMetricsPortsAreFree(t *testing.T) {
	if l, err := net.Listen("tcp", "127.0.0.1:9478"); err == nil {
		defer l.Close()
	}
	seen := map[int]bool{}
	for i := 0; i < 3; i++ {
		port, err := freeLoopbackPort()
		if err != nil {
			t.Fatal(err)
		}
		if port == 9478 || seen[port] {
			t.Errorf("port %d: taken, or given twice (%v)", port, seen)
		}
		seen[port] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		defer l.Close()
		conf := demoAgentConf("http://localhost:8080", demoNode{Name: "gpu01", GPUs: 8, Model: "A100", MemoryMiB: 81920}, port, t.TempDir(), false)
		if !strings.Contains(conf, "metrics_addr = 127.0.0.1:"+strconv.Itoa(port)+"\n") {
			t.Errorf("agent.conf does not name port %d:\n%s", port, conf)
		}
	}
}

// TestDemoSignInLine: the demo promises its URL only where a portal
// answers; elsewhere it says none answers there instead of a dead link.
func TestDemoSignInLine(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	if got, want := demoSignIn(context.Background(), srv.URL), "Sign in: open "+srv.URL+"/login and pick"; !strings.HasPrefix(got, want) {
		t.Errorf("answering portal: %q, want prefix %q", got, want)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	if got := demoSignIn(context.Background(), dead); !strings.Contains(got, "no portal answers at "+dead) || strings.Contains(got, "open "+dead+"/login") {
		t.Errorf("no portal: %q", got)
	}
}

// TestDemoFillsLastWeek: run on a Monday, the demo books every day of last
// week (the one the Monday report covers), not only its last three days.
func TestDemoFillsLastWeek(t *testing.T) {
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	now := time.Date(2026, 12, 7, 2, 30, 0, 0, time.UTC) // Monday 10:30 in Shanghai
	week := models.WeekOf(now, shanghai).Prev(1)
	d := demoPlan(1, now, shanghai)
	days := map[int]int{}
	for _, b := range d.Bookings {
		if !b.Start.Before(week.Start) && b.Start.Before(week.End) {
			days[models.WeekdayIndex(b.Start.In(shanghai))]++
		}
	}
	for i := 0; i < 7; i++ {
		if days[i] == 0 {
			t.Errorf("no booking starts on day %d of week %s (per day: %v)", i+1, week, days)
		}
	}
}
