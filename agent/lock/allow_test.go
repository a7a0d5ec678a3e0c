package lock

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

func TestAllowFor(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	gpus := []GPU{{"GPU-0", 0, false}, {"GPU-1", 1, false}, {"GPU-2", 2, false}, {"GPU-3", 3, true}, {"GPU-5", 5, false}}
	migs := []MIGInstance{{UUID: "MIG-a", ParentMinor: 3, CapMinors: []int{12, 13}},
		{UUID: "MIG-b", ParentMinor: 3, CapMinors: []int{21, 22}},
		{UUID: "MIG-c", ParentMinor: 3}} // not in the driver's table: its capability files unknown
	bk := func(id int64, user string, from, to time.Duration, uuids ...string) wire.Booking {
		return wire.Booking{ID: id, User: user, GPUUUIDs: uuids, StartsAt: t0.Add(from), EndsAt: t0.Add(to)}
	}
	bookings := []wire.Booking{
		bk(1, "alice", -time.Hour, time.Hour, "GPU-2", "GPU-5"),
		bk(2, "alice", time.Hour, 2*time.Hour, "GPU-0"),
		bk(3, "bob", -time.Hour, time.Hour, "MIG-a"),
		bk(4, "carol", 0, time.Hour, "GPU-3"),
		bk(5, "dave", -time.Hour, time.Hour, "GPU-unknown"),
		bk(6, "frank", -time.Hour, time.Hour, "MIG-c"),
	}
	tests := []struct {
		name     string
		user     string
		at       time.Time
		gpu, cap []int
	}{
		{"two GPUs booked", "alice", t0, []int{2, 5}, nil},
		{"end is exclusive: next booking's GPU only", "alice", t0.Add(time.Hour), []int{0}, nil},
		{"before any booking", "alice", t0.Add(-2 * time.Hour), nil, nil},
		{"MIG instance: parent GPU and its caps only", "bob", t0, []int{3}, []int{12, 13}},
		{"whole MIG GPU: every instance's caps", "carol", t0, []int{3}, []int{12, 13, 21, 22}},
		{"start is inclusive", "carol", t0, []int{3}, []int{12, 13, 21, 22}},
		{"GPU not on this node", "dave", t0, nil, nil},
		{"no bookings", "erin", t0, nil, nil},
		// Without its capability files the parent GPU would open every
		// instance whose files the rules do not know to close.
		{"MIG instance the table does not list: nothing, not its parent", "frank", t0, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AllowFor(bookings, tt.user, tt.at, gpus, migs, nil)
			if !slices.Equal(got.GPUMinors, tt.gpu) || !slices.Equal(got.CapMinors, tt.cap) {
				t.Errorf("got gpus %v caps %v, want %v %v", got.GPUMinors, got.CapMinors, tt.gpu, tt.cap)
			}
		})
	}
}

func TestRules(t *testing.T) {
	nodeCaps := []int{12, 13, 21, 22}
	tests := []struct {
		name              string
		allow             Allow
		majors            Majors
		denied, notDenied []string
		wantLen           int
	}{
		{"GPUs 2 and 5", Allow{GPUMinors: []int{2, 5}}, Majors{GPU: 195, UVM: 508, Caps: 509},
			[]string{"c 195:0 rwm", "c 195:3 rwm", "c 195:253 rwm", "c 509:12 rwm", "c 509:22 rwm"},
			[]string{"c 195:2 rwm", "c 195:5 rwm", "c 195:254 rwm", "c 195:255 rwm", "c 508:0 rwm", "c 508:1 rwm"},
			1 + 252 + 4},
		{"nothing held", Allow{}, Majors{GPU: 195}, []string{"c 195:2 rwm", "c 195:5 rwm"},
			[]string{"c 195:254 rwm", "c 195:255 rwm", "c 509:12 rwm"}, 1 + 254},
		{"one MIG instance", Allow{GPUMinors: []int{3}, CapMinors: []int{12, 13}}, Majors{GPU: 195, Caps: 509},
			[]string{"c 509:21 rwm", "c 509:22 rwm", "c 195:4 rwm"}, []string{"c 509:12 rwm", "c 509:13 rwm", "c 195:3 rwm"},
			1 + 253 + 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules := Rules(tt.allow, tt.majors, nodeCaps)
			if first := rules[0].CgroupString(); first != "a *:* rwm" || !rules[0].Allow {
				t.Fatalf("first rule %q allow=%v, want everything allowed first", first, rules[0].Allow)
			}
			denied := map[string]bool{}
			for _, r := range rules[1:] {
				if r.Allow {
					t.Fatalf("rule %s allows; want only denials after the first", r.CgroupString())
				}
				denied[r.CgroupString()] = true
			}
			for _, d := range tt.denied {
				if !denied[d] {
					t.Errorf("%s not denied", d)
				}
			}
			for _, d := range tt.notDenied {
				if denied[d] {
					t.Errorf("%s denied", d)
				}
			}
			if len(rules) != tt.wantLen {
				t.Errorf("got %d rules, want %d", len(rules), tt.wantLen)
			}
		})
	}
}

func TestAllowKey(t *testing.T) {
	a := Allow{GPUMinors: []int{2, 15}, CapMinors: []int{130}}
	if got, want := a.Key(), "gpu 2 15 cap 130"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := (Allow{}).Key(), "gpu cap"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseDevices(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Majors
	}{
		{"driver loaded", "Character devices:\n  1 mem\n195 nvidia-frontend\n508 nvidia-uvm\n509 nvidia-caps\n\nBlock devices:\n  8 sd\n509 nvidia-caps-bogus\n",
			Majors{GPU: 195, UVM: 508, Caps: 509}},
		{"older name, no caps", "Character devices:\n195 nvidia\n240 nvidia-uvm\n", Majors{GPU: 195, UVM: 240}},
		{"no driver: 195 by convention", "Character devices:\n  1 mem\n\nBlock devices:\n509 nvidia-caps\n", Majors{GPU: 195}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDevices(strings.NewReader(tt.in))
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v, want %+v", got, err, tt.want)
			}
		})
	}
}

func TestInstanceCaps(t *testing.T) {
	m, err := ParseMIGMinors(strings.NewReader("config 1\nmonitor 2\ngpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\ngpu1/gi2/access 30\ngpu1/gi2/ci1/access 32\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		gpu, gi, ci int
		want        []int
		ok          bool
	}{
		{0, 1, 0, []int{12, 13}, true},
		{1, 2, 1, []int{30, 32}, true},
		{1, 2, 0, nil, false},
		{2, 1, 0, nil, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("gpu%d/gi%d/ci%d", tt.gpu, tt.gi, tt.ci), func(t *testing.T) {
			got, ok := InstanceCaps(m, tt.gpu, tt.gi, tt.ci)
			if ok != tt.ok || !slices.Equal(got, tt.want) {
				t.Errorf("got %v %v, want %v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestMovable(t *testing.T) {
	const root = "/sys/fs/cgroup/devices"
	tests := []struct {
		cur  string
		want bool
	}{
		{root, true},
		{root + "/user.slice", true},
		{root + "/user.slice/user-1000.slice/session-3.scope", true},
		{root + "/gpubook/uid-1000", true},
		{root + "/gpubookish", false},
		{root + "/user.slice-not", false},
		{root + "/docker/0123abcd", false},
		{root + "/system.slice/slurmstepd.scope/job_12", false},
		{root + "/system.slice/cron.service", false},
	}
	for _, tt := range tests {
		t.Run(tt.cur, func(t *testing.T) {
			if got := Movable(root, "gpubook", tt.cur); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
