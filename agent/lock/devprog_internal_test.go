package lock

import (
	"strings"
	"testing"

	devices "github.com/opencontainers/cgroups/devices/config"
)

func TestDeviceProgramShape(t *testing.T) {
	mj := Majors{GPU: 195, Caps: 508}
	tests := []struct {
		name  string
		rules []*devices.Rule
		want  string // "" for no error
	}{
		{"a booking's rules", Rules(Allow{GPUMinors: []int{2}}, mj, []int{12, 13}), ""},
		{"open", openRules(), ""},
		{"nothing", nil, "must start by allowing everything"},
		{"deny first", Rules(Allow{}, mj, nil)[1:], "must start by allowing everything"},
		{"an allow after", append(openRules(), &devices.Rule{Type: devices.CharDevice, Major: 195, Minor: 3, Permissions: "rwm", Allow: true}), "unsupported rule"},
		{"read only", append(openRules(), &devices.Rule{Type: devices.CharDevice, Major: 195, Minor: 3, Permissions: "r"}), "unsupported rule"},
		{"a block device", append(openRules(), &devices.Rule{Type: devices.BlockDevice, Major: 8, Minor: 0, Permissions: "rwm"}), "unsupported rule"},
		{"any minor", append(openRules(), &devices.Rule{Type: devices.CharDevice, Major: 195, Minor: devices.Wildcard, Permissions: "rwm"}), "unsupported rule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := deviceProgram(tt.rules, nil, nil)
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestRefusalSlots(t *testing.T) {
	caps := CapTable{"config": 1, "monitor": 2, "gpu0/gi1/access": 12, "gpu3/gi1/ci0/access": 418}
	l := &Locker{majors: Majors{GPU: 195, Caps: 508}, capGPU: capGPUs(caps)}
	for _, tt := range []struct {
		major, minor int64
		want         int
	}{{195, 0, 0}, {195, 253, 253}, {508, 12, slotCapBase}, {508, 418, slotCapBase + 3}, {508, 2, slotCapOther}, {195, 255, slotCapOther}} {
		if got := l.slot(tt.major, tt.minor); got != tt.want {
			t.Errorf("slot(%d:%d) = %d, want %d", tt.major, tt.minor, got, tt.want)
		}
	}
}
