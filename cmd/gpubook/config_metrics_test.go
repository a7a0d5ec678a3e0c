package main

import (
	"strings"
	"testing"
)

// TestMetricsListenConfig: metrics are off unless an address is given; a
// bad address, or the portal's own, stops start-up with one line naming
// the variable or flag.
func TestMetricsListenConfig(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig(envOf(nil), nil)
	if err != nil || cfg.MetricsListen != "" {
		t.Fatalf("default: metrics listen %q, %v; want off", cfg.MetricsListen, err)
	}
	cfg, err = parseConfig(envOf(map[string]string{"GPUBOOK_METRICS_LISTEN": " 127.0.0.1:9090 "}), nil)
	if err != nil || cfg.MetricsListen != "127.0.0.1:9090" {
		t.Fatalf("env: %q, %v", cfg.MetricsListen, err)
	}
	cfg, err = parseConfig(envOf(map[string]string{"GPUBOOK_METRICS_LISTEN": "127.0.0.1:9090"}), []string{"--metrics-listen", ":9100"})
	if err != nil || cfg.MetricsListen != ":9100" {
		t.Fatalf("flag over env: %q, %v", cfg.MetricsListen, err)
	}
	bad := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"GPUBOOK_METRICS_LISTEN": "9090"}, nil, `GPUBOOK_METRICS_LISTEN: "9090" is not host:port`},
		{map[string]string{"GPUBOOK_METRICS_LISTEN": "127.0.0.1:99999"}, nil, `GPUBOOK_METRICS_LISTEN: "127.0.0.1:99999" has no valid port`},
		{nil, []string{"--metrics-listen", "a b:1"}, `--metrics-listen: "a b:1" has an invalid host`},
		{map[string]string{"GPUBOOK_METRICS_LISTEN": "127.0.0.1:8080"}, nil, `GPUBOOK_METRICS_LISTEN: "127.0.0.1:8080" is the portal's own address`},
	}
	for _, tt := range bad {
		t.Run(tt.want, func(t *testing.T) {
			_, err := parseConfig(envOf(tt.env), tt.args)
			if err == nil {
				t.Fatal("no error")
			}
			if got := err.Error(); !strings.HasPrefix(got, tt.want) || strings.Contains(got, "\n") {
				t.Errorf("error = %q, want one line starting %q", got, tt.want)
			}
		})
	}
}
