package main

import (
	"strings"
	"testing"
)

func TestTrustedProxiesConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw     string
		want    []string // the parsed networks; nil when the value is refused
		wantErr string
	}{
		{"", []string{}, ""},
		{"10.0.0.0/8", []string{"10.0.0.0/8"}, ""},
		{" 10.1.2.3/8, 192.0.2.7 2001:db8::/32\t::1", []string{"10.0.0.0/8", "192.0.2.7/32", "2001:db8::/32", "::1/128"}, ""},
		{"10.0.0.0/33", nil, `GPUBOOK_TRUSTED_PROXIES: "10.0.0.0/33" is not an address or a CIDR`},
		{"10.0.0.0/8,proxy.internal", nil, `GPUBOOK_TRUSTED_PROXIES: "proxy.internal" is not an address or a CIDR`},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			cfg, err := parseConfig(envOf(map[string]string{"GPUBOOK_TRUSTED_PROXIES": tt.raw}), nil)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error = %v, want one line starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, n := range cfg.TrustedProxies {
				got = append(got, n.String())
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("proxies = %v, want %v", got, tt.want)
			}
		})
	}
}
