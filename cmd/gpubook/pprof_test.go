package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestPprofConfig: profiling is off unless a loopback address is given;
// any other address stops start-up with one line naming the variable.
func TestPprofConfig(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig(envOf(nil), nil)
	if err != nil || cfg.PprofListen != "" {
		t.Fatalf("default: pprof listen %q, %v; want off", cfg.PprofListen, err)
	}
	cfg, err = parseConfig(envOf(map[string]string{"GPUBOOK_PPROF_LISTEN": " 127.0.0.1:6060 "}), nil)
	if err != nil || cfg.PprofListen != "127.0.0.1:6060" {
		t.Fatalf("env: %q, %v", cfg.PprofListen, err)
	}
	for _, tt := range []struct{ env, want string }{
		{"6060", `GPUBOOK_PPROF_LISTEN: "6060" is not host:port`},
		{"0.0.0.0:6060", `GPUBOOK_PPROF_LISTEN: "0.0.0.0:6060" is not a loopback address`},
		{":6060", `GPUBOOK_PPROF_LISTEN: ":6060" is not a loopback address`},
		{"127.0.0.1:8080", `GPUBOOK_PPROF_LISTEN: "127.0.0.1:8080" is already the portal's or the metrics' address`},
	} {
		t.Run(tt.env, func(t *testing.T) {
			_, err := parseConfig(envOf(map[string]string{"GPUBOOK_PPROF_LISTEN": tt.env}), nil)
			if err == nil {
				t.Fatal("no error")
			}
			if got := err.Error(); !strings.HasPrefix(got, tt.want) || strings.Contains(got, "\n") {
				t.Errorf("error = %q, want one line starting %q", got, tt.want)
			}
		})
	}
}

// TestPprofServes checks that the listener answers the pprof index and
// a heap profile, and that "" starts nothing.
func TestPprofServes(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := servePprof(ln, slog.New(slog.DiscardHandler))
	defer stop()
	base := "http://" + ln.Addr().String() + "/debug/pprof/"
	if code, body := get(t, base); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("index: %d %.200q", code, body)
	}
	if code, _ := get(t, base+"heap?debug=1"); code != http.StatusOK {
		t.Errorf("heap: %d", code)
	}
	off, err := startPprof("", nil)
	if err != nil {
		t.Fatalf("off: %v", err)
	}
	off()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
