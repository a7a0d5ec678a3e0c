package simgpu

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/wire"
)

var t0 = time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)

func TestPlan(t *testing.T) {
	n := Node{UUIDs: []string{"G0", "G1", "G2", "G3"}, MemoryMiB: 1000}
	book := func(id int64, user string, from, to time.Duration, gpus ...string) wire.Booking {
		return wire.Booking{ID: id, User: user, GPUUUIDs: gpus, StartsAt: t0.Add(from), EndsAt: t0.Add(to)}
	}
	script := []ScriptLine{{GPU: 3, User: "mallory", Util: 90, MemMiB: 500}, {GPU: 9, User: "nowhere", Util: 1, MemMiB: 1}}
	seen := func(string) time.Time { return t0.Add(-time.Minute) }
	tests := []struct {
		name     string
		bookings []wire.Booking
		at       time.Duration
		want     []string // key user gpu
	}{
		{"train on every booked GPU", []wire.Booking{book(6, "ada", -time.Hour, time.Hour, "G0", "G1")}, 0,
			[]string{"booking:6:0 ada 0", "booking:6:1 ada 1"}},
		{"idle booking runs nothing", []wire.Booking{book(2, "ada", -time.Hour, time.Hour, "G0")}, 0, nil},
		{"partial uses the first GPU only", []wire.Booking{book(4, "ada", -time.Hour, time.Hour, "G1", "G2")}, 0,
			[]string{"booking:4:1 ada 1"}},
		{"overrun outlives the booking", []wire.Booking{book(5, "bob", -time.Hour, -10*time.Minute, "G2")}, 0,
			[]string{"booking:5:2 bob 2"}},
		{"overrun stops 15 min after the end", []wire.Booking{book(5, "bob", -time.Hour, -15*time.Minute, "G2")}, 0, nil},
		{"a train booking ends on time", []wire.Booking{book(7, "bob", -time.Hour, -time.Minute, "G2")}, 0, nil},
		{"not started yet", []wire.Booking{book(7, "bob", time.Minute, time.Hour, "G2")}, 0, nil},
		{"other node's GPU ignored", []wire.Booking{book(7, "bob", -time.Hour, time.Hour, "X9")}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range Plan(n, tt.bookings, nil, seen, t0.Add(tt.at)) {
				got = append(got, p.Key+" "+p.User+" "+string(rune('0'+p.GPU)))
				if p.Util < 55 || p.Util >= 95 || p.MemMiB < 600 || p.MemMiB > 850 {
					t.Errorf("%s: util %d, memory %d; want 55–94 %%, 60–85 %% of 1000", p.Key, p.Util, p.MemMiB)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("plan = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("MIG instances", func(t *testing.T) {
		m := n
		m.MIG = [][]Slot{nil, nil, {{"M0", 100}, {"M1", 300}}}
		lines := []ScriptLine{{GPU: 2, Inst: 1, User: "eve", MemMiB: 999}, {GPU: 2, Inst: -1, User: "bob", MemMiB: 5}}
		var got []string
		for _, p := range Plan(m, []wire.Booking{book(6, "ada", -time.Hour, time.Hour, "M1", "G1")}, lines, seen, t0) {
			got = append(got, fmt.Sprintf("%s %s %d/%d %d", p.Key, p.User, p.GPU, p.Inst, p.MemMiB))
		}
		// ada's process takes 66 % of her instance's memory; eve's is cut to
		// her instance's; bob's, on the MIG GPU itself, runs on its first instance.
		want := []string{"booking:6:1 ada 1/-1 660", "booking:6:2/1 ada 2/1 198", "script:2/0:bob bob 2/0 5", "script:2/1:eve eve 2/1 300"}
		if !slices.Equal(got, want) {
			t.Errorf("plan = %q, want %q", got, want)
		}
	})
	t.Run("script processes run on their GPU from when first seen", func(t *testing.T) {
		got := Plan(n, nil, script, seen, t0)
		want := Proc{Key: "script:3:mallory", GPU: 3, Inst: -1, User: "mallory", Util: 90, MemMiB: 500, Since: t0.Add(-time.Minute)}
		if len(got) != 1 || got[0] != want {
			t.Errorf("plan = %+v, want [%+v] (GPU 9 does not exist)", got, want)
		}
	})
}

func TestBehaviourOf(t *testing.T) {
	want := []Behaviour{Train, Train, Idle, Train, Partial, Overrun, Train, Train, Idle}
	for id, w := range want {
		if got := BehaviourOf(int64(id)); got != w {
			t.Errorf("BehaviourOf(%d) = %d, want %d", id, got, w)
		}
	}
}

func TestParseScript(t *testing.T) {
	got, err := ParseScript(strings.NewReader("# gpu user util mem\n\n3 mallory 90 20000  # unbooked\n0 root 5 100\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []ScriptLine{{3, -1, "mallory", 90, 20000}, {0, -1, "root", 5, 100}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("script = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"3 mallory 90", "x mallory 90 1", "3 mallory 101 1", "-1 m 1 1", "3 m 1 -5"} {
		if _, err := ParseScript(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseScript(%q) succeeded, want an error", bad)
		}
	}
}

// TestPIDsFitTheProtocol: stable, unique, and within the PIDs the portal
// accepts (a simulated violation must not be refused for its PID).
func TestPIDsFitTheProtocol(t *testing.T) {
	procs := []Proc{{Key: "a"}, {Key: "b"}, {Key: "c"}}
	pids := PIDs(procs)
	again := PIDs(procs[1:])
	seen := map[int]bool{}
	for _, p := range procs {
		pid := pids[p.Key]
		if pid <= 0 || pid > wire.MaxPID || seen[pid] {
			t.Errorf("pid of %s = %d: want unique and in 1..%d", p.Key, pid, wire.MaxPID)
		}
		seen[pid] = true
		if p.Key != "a" && again[p.Key] != pid {
			t.Errorf("pid of %s changed from %d to %d when another process ended", p.Key, pid, again[p.Key])
		}
	}
}

func TestUIDs(t *testing.T) {
	host := mapUsers{"root": 0, "alice": 1001, "taken": uidBase + int(hash("zoe")%40000)}
	got := UIDs([]string{"zoe", "root", "alice", "zoe"}, host)
	if got["root"] != 0 || got["alice"] != 1001 {
		t.Errorf("host users = %v, want root 0 and alice 1001", got)
	}
	if want := host["taken"] + 1; got["zoe"] != want {
		t.Errorf("zoe = %d, want %d: a made-up UID that no host user has", got["zoe"], want)
	}
	if again := UIDs([]string{"zoe"}, host); again["zoe"] != got["zoe"] {
		t.Errorf("zoe's UID changed: %d then %d", got["zoe"], again["zoe"])
	}
	// A user only the directory knows keeps her directory UID.
	if nss := UIDs([]string{"alopez"}, mapUsers{"alopez": 21001}); nss["alopez"] != 21001 {
		t.Errorf("alopez = %d, want her name service's 21001", nss["alopez"])
	}
}

// mapUsers is a host name service of a few users.
type mapUsers map[string]int

func (m mapUsers) UserID(name string) (int, bool) { uid, ok := m[name]; return uid, ok }

func (m mapUsers) UserName(uid int) string {
	for n, u := range m {
		if u == uid {
			return n
		}
	}
	return strconv.Itoa(uid)
}
