package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testUUID = "GPU-8c3e7a3b-4d6f-4b9c-9a51-0e6c2d1f0a11"

func f64(f float64) *float64 { return &f }

// invalidFields returns the field an *Invalid error names, nil for nil.
func invalidFields(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var e *Invalid
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *Invalid", err)
	}
	return []string{e.Field}
}

func goodRecord() UsageRecord {
	return UsageRecord{
		GPUUUID: testUUID, Minute: time.Date(2026, 3, 2, 14, 5, 0, 0, time.UTC),
		UtilAvgPct: f64(40), UtilMaxPct: f64(90), MemUsedMiB: 1000, MemTotalMiB: 40960, Samples: 6,
		Users: []UserUsage{{User: "alice", UID: 1001, MemoryMiB: 1000, Processes: 1, Busy: true}},
	}
}

func TestAgentUsageBatchValidate(t *testing.T) {
	mod := func(f func(r *UsageRecord)) []UsageRecord {
		r := goodRecord()
		f(&r)
		return []UsageRecord{r}
	}
	tests := []struct {
		name    string
		records []UsageRecord
		want    []string
	}{
		{"valid", []UsageRecord{goodRecord()}, nil},
		{"MIG without utilisation is valid", mod(func(r *UsageRecord) { r.UtilAvgPct, r.UtilMaxPct = nil, nil }), nil},
		{"empty", nil, []string{"records"}},
		{"bad uuid", mod(func(r *UsageRecord) { r.GPUUUID = "3; rm -rf /" }), []string{"records[0].gpu_uuid"}},
		{"minute not truncated", mod(func(r *UsageRecord) { r.Minute = r.Minute.Add(time.Second) }), []string{"records[0].minute"}},
		{"no samples", mod(func(r *UsageRecord) { r.Samples = 0 }), []string{"records[0].samples"}},
		{"absurd samples", mod(func(r *UsageRecord) { r.Samples = 1 << 40 }), []string{"records[0].samples"}},
		{"half utilisation", mod(func(r *UsageRecord) { r.UtilMaxPct = nil }), []string{"records[0]"}},
		{"utilisation over 100", mod(func(r *UsageRecord) { r.UtilMaxPct = f64(101) }), []string{"records[0]"}},
		{"avg above max", mod(func(r *UsageRecord) { r.UtilAvgPct = f64(95) }), []string{"records[0]"}},
		{"used above total", mod(func(r *UsageRecord) { r.MemUsedMiB = r.MemTotalMiB + 1 }), []string{"records[0]"}},
		{"user twice", mod(func(r *UsageRecord) { r.Users = append(r.Users, r.Users[0]) }), []string{"records[0].users[1]"}},
		{"user without name", mod(func(r *UsageRecord) { r.Users[0].User = "" }), []string{"records[0].users[0]"}},
		{"NUL in a user name", mod(func(r *UsageRecord) { r.Users[0].User = "al\x00ice" }), []string{"records[0].users[0]"}},
		{"newline in a user name", mod(func(r *UsageRecord) { r.Users[0].User = "alice\nroot" }), []string{"records[0].users[0]"}},
		{"C1 control in a user name", mod(func(r *UsageRecord) { r.Users[0].User = "alice\u009b" }), []string{"records[0].users[0]"}},
		{"user name over 256 bytes", mod(func(r *UsageRecord) { r.Users[0].User = strings.Repeat("a", 257) }), []string{"records[0].users[0]"}},
		{"uid beyond int4", mod(func(r *UsageRecord) { r.Users[0].UID = 1 << 62 }), []string{"records[0].users[0]"}},
		{"uid below -1", mod(func(r *UsageRecord) { r.Users[0].UID = -2 }), []string{"records[0].users[0]"}},
		{"processes beyond pid_max", mod(func(r *UsageRecord) { r.Users[0].Processes = 1 << 62 }), []string{"records[0].users[0]"}},
		{"user memory over 16 TiB", mod(func(r *UsageRecord) { r.Users[0].MemoryMiB = 1 << 62 }), []string{"records[0].users[0]"}},
		{"user in a container", mod(func(r *UsageRecord) { r.Users[0].Container = strings.Repeat("4f2a9c1b", 8) }), nil},
		{"user in a container, short id", mod(func(r *UsageRecord) { r.Users[0].Container = "4f2a9c1be0d3" }), nil},
		{"container id over 64 bytes", mod(func(r *UsageRecord) { r.Users[0].Container = strings.Repeat("a", 65) }), []string{"records[0].users[0]"}},
		{"newline in a container id", mod(func(r *UsageRecord) { r.Users[0].Container = "4f2a9c1be0d3\nroot" }), []string{"records[0].users[0]"}},
		{"NUL in a container id", mod(func(r *UsageRecord) { r.Users[0].Container = "4f2a9c1be0d3\x00" }), []string{"records[0].users[0]"}},
		{"container id not hex", mod(func(r *UsageRecord) { r.Users[0].Container = "my-container-name" }), []string{"records[0].users[0]"}},
		{"total memory over 16 TiB", mod(func(r *UsageRecord) { r.MemTotalMiB = 16<<20 + 1 }), []string{"records[0]"}},
		{"too many users", mod(func(r *UsageRecord) { r.Users = manyUsers(MaxUsersPerRecord + 1) }), []string{"records[0].users"}},
		{"as many users as allowed", mod(func(r *UsageRecord) { r.Users = manyUsers(MaxUsersPerRecord) }), nil},
		{"too many records: one error", manyRecords(MaxRecordsPerBatch + 1), []string{"records"}},
		{"many bad records: one error", badRecords(50), []string{"records[0].samples"}},
		{"duplicate key", []UsageRecord{goodRecord(), goodRecord()}, []string{"records[1]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := UsageBatch{Node: "n1", BatchID: "1", Records: tt.records}
			if got := invalidFields(t, b.Validate()); !slices.Equal(got, tt.want) {
				t.Errorf("fields = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAgentViolationBatchValidate(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	good := Violation{ID: "n1:unbooked_use:x:42:1", Kind: ViolationUnbooked, GPUUUID: testUUID,
		User: "bob", UID: 1002, PID: 42, FirstSeen: t0, LastSeen: t0.Add(time.Minute), Action: ActionWarned}
	mod := func(f func(v *Violation)) Violation { v := good; f(&v); return v }
	tests := []struct {
		name string
		v    []Violation
		want []string
	}{
		{"valid", []Violation{good}, nil},
		{"memory without process needs no user", []Violation{mod(func(v *Violation) {
			v.Kind, v.User, v.PID, v.Action = ViolationMemoryNoProcess, "", 0, ActionNone
		})}, nil},
		{"empty", nil, []string{"violations"}},
		{"refused open needs no pid", []Violation{mod(func(v *Violation) { v.Kind, v.PID, v.Action = ViolationRefused, 0, ActionNone })}, nil},
		{"refused open needs a user", []Violation{mod(func(v *Violation) { v.Kind, v.PID, v.User = ViolationRefused, 0, "" })}, []string{"violations[0]"}},
		{"unknown kind", []Violation{mod(func(v *Violation) { v.Kind = "bad" })}, []string{"violations[0]"}},
		{"no pid", []Violation{mod(func(v *Violation) { v.PID = 0 })}, []string{"violations[0]"}},
		{"no id", []Violation{mod(func(v *Violation) { v.ID = "" })}, []string{"violations[0]"}},
		{"last before first", []Violation{mod(func(v *Violation) { v.LastSeen = t0.Add(-time.Second) })}, []string{"violations[0]"}},
		{"unknown action", []Violation{mod(func(v *Violation) { v.Action = "nuke" })}, []string{"violations[0]"}},
		{"NUL in the user", []Violation{mod(func(v *Violation) { v.User = "bob\x00" })}, []string{"violations[0]"}},
		{"escape in the id", []Violation{mod(func(v *Violation) { v.ID = "x\x1b[2J" })}, []string{"violations[0]"}},
		{"pid 2^62", []Violation{mod(func(v *Violation) { v.PID = 1 << 62 })}, []string{"violations[0]"}},
		{"uid 2^62", []Violation{mod(func(v *Violation) { v.UID = 1 << 62 })}, []string{"violations[0]"}},
		{"memory 2^62", []Violation{mod(func(v *Violation) { v.MemoryMiB = 1 << 62 })}, []string{"violations[0]"}},
		{"negative booking", []Violation{mod(func(v *Violation) { v.BookingID = -1 })}, []string{"violations[0]"}},
		{"in a container", []Violation{mod(func(v *Violation) { v.Container = "4f2a9c1be0d3" + strings.Repeat("a", 52) })}, nil},
		{"short container id", []Violation{mod(func(v *Violation) { v.Container = "4f2a9c1be0d3" })}, nil},
		{"container id not hex", []Violation{mod(func(v *Violation) { v.Container = "../../etc/passwd" })}, []string{"violations[0]"}},
		{"container id too long", []Violation{mod(func(v *Violation) { v.Container = strings.Repeat("a", 65) })}, []string{"violations[0]"}},
		{"year 0", []Violation{mod(func(v *Violation) { v.FirstSeen = time.Time{} })}, []string{"violations[0]"}},
		{"too many", slices.Repeat([]Violation{good}, MaxViolationsPerBatch+1), []string{"violations"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := ViolationBatch{Node: "n1", Violations: tt.v}
			if got := invalidFields(t, b.Validate()); !slices.Equal(got, tt.want) {
				t.Errorf("fields = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAgentIdleBatchValidate(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	good := IdleReport{ID: "7:1", BookingID: 7, User: "alice", GPUUUIDs: []string{testUUID}, IdleSince: t0, ReportedAt: t0.Add(30 * time.Minute)}
	mod := func(f func(r *IdleReport)) IdleReport { r := good; f(&r); return r }
	tests := []struct {
		name string
		r    []IdleReport
		want []string
	}{
		{"valid", []IdleReport{good}, nil},
		{"empty", nil, []string{"reports"}},
		{"no booking", []IdleReport{mod(func(r *IdleReport) { r.BookingID = 0 })}, []string{"reports[0]"}},
		{"no gpus", []IdleReport{mod(func(r *IdleReport) { r.GPUUUIDs = nil })}, []string{"reports[0].gpu_uuids"}},
		{"bad gpu", []IdleReport{mod(func(r *IdleReport) { r.GPUUUIDs = []string{"GPU-$(id)"} })}, []string{"reports[0].gpu_uuids[0]"}},
		{"too many gpus", []IdleReport{mod(func(r *IdleReport) {
			r.GPUUUIDs = slices.Repeat([]string{testUUID}, MaxGPUs+1)
		})}, []string{"reports[0].gpu_uuids"}},
		{"NUL in the user", []IdleReport{mod(func(r *IdleReport) { r.User = "a\x00" })}, []string{"reports[0].user"}},
		{"too many reports", slices.Repeat([]IdleReport{good}, MaxIdlePerBatch+1), []string{"reports"}},
		{"too many gpus in all", slices.Repeat([]IdleReport{mod(func(r *IdleReport) {
			r.GPUUUIDs = slices.Repeat([]string{testUUID}, MaxGPUs)
		})}, MaxIdleGPUsPerBatch/MaxGPUs+1), []string{"reports[16].gpu_uuids"}},
		{"reported before idle", []IdleReport{mod(func(r *IdleReport) { r.ReportedAt = t0.Add(-time.Second) })}, []string{"reports[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := IdleBatch{Node: "n1", Reports: tt.r}
			if got := invalidFields(t, b.Validate()); !slices.Equal(got, tt.want) {
				t.Errorf("fields = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAgentInventoryValidate(t *testing.T) {
	good := GPU{UUID: testUUID, Index: 0, Minor: 0, Model: "NVIDIA A100-SXM4-40GB", MemoryMiB: 40960}
	tests := []struct {
		name string
		gpus []GPU
		want []string
	}{
		{"valid", []GPU{good}, nil},
		{"no GPUs is valid (all out of service)", nil, nil},
		{"twice", []GPU{good, good}, []string{"gpus[1]"}},
		{"no model", []GPU{{UUID: testUUID, MemoryMiB: 1}}, []string{"gpus[0]"}},
		{"negative index", []GPU{{UUID: testUUID, Index: -1, Model: "x", MemoryMiB: 1}}, []string{"gpus[0]"}},
		{"index 64", []GPU{{UUID: testUUID, Index: 64, Model: "x", MemoryMiB: 1}}, []string{"gpus[0]"}},
		{"index 63", []GPU{{UUID: testUUID, Index: 63, Minor: 254, Model: "x", MemoryMiB: 16 << 20}}, nil},
		{"minor 255", []GPU{{UUID: testUUID, Minor: 255, Model: "x", MemoryMiB: 1}}, []string{"gpus[0]"}},
		{"memory over 16 TiB", []GPU{{UUID: testUUID, Model: "x", MemoryMiB: 16<<20 + 1}}, []string{"gpus[0]"}},
		{"NUL in the model", []GPU{{UUID: testUUID, Model: "A100\x00", MemoryMiB: 1}}, []string{"gpus[0]"}},
		{"index twice", []GPU{good, {UUID: testUUID + "0", Model: "x", MemoryMiB: 1}}, []string{"gpus[1]"}},
		{"65 GPUs", manyGPUs(65), []string{"gpus"}},
		{"64 GPUs", manyGPUs(64), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := Inventory{Node: "n1", GPUs: tt.gpus}
			if got := invalidFields(t, inv.Validate()); !slices.Equal(got, tt.want) {
				t.Errorf("fields = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAgentBookingActiveAt(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	b := Booking{ID: 1, StartsAt: t0, EndsAt: t0.Add(time.Hour), GPUUUIDs: []string{testUUID}}
	tests := []struct {
		name string
		at   time.Time
		want bool
	}{
		{"before", t0.Add(-time.Nanosecond), false},
		{"at start", t0, true},
		{"inside", t0.Add(30 * time.Minute), true},
		{"at end", t0.Add(time.Hour), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := b.ActiveAt(tt.at); got != tt.want {
				t.Errorf("ActiveAt = %v, want %v", got, tt.want)
			}
		})
	}
	if got, want := b.HasGPU(testUUID), true; got != want {
		t.Errorf("HasGPU = %v, want %v", got, want)
	}
}

// TestAgentUsageRecordJSON pins the wire form the portal parses: null
// utilisation for MIG and the key format.
func TestAgentUsageRecordJSON(t *testing.T) {
	r := goodRecord()
	r.UtilAvgPct, r.UtilMaxPct = nil, nil
	r.Users = nil
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"gpu_uuid":"` + testUUID + `","minute":"2026-03-02T14:05:00Z","util_avg_pct":null,"util_max_pct":null,"mem_used_mib":1000,"mem_total_mib":40960,"samples":6,"users":null}`
	if got := string(b); got != want {
		t.Errorf("json = %s\nwant   %s", got, want)
	}
	if got, want := r.Key("node1"), "node1|"+testUUID+"|2026-03-02T14:05:00Z"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
}

func manyUsers(n int) []UserUsage {
	out := make([]UserUsage, n)
	for i := range out {
		out[i] = UserUsage{User: "u" + strconv.Itoa(i), UID: 1000 + i}
	}
	return out
}

// manyRecords is n valid records of distinct minutes.
func manyRecords(n int) []UsageRecord {
	out := make([]UsageRecord, n)
	for i := range out {
		out[i] = goodRecord()
		out[i].Minute = out[i].Minute.Add(time.Duration(i) * time.Minute)
	}
	return out
}

// badRecords is n records that are all wrong.
func badRecords(n int) []UsageRecord {
	out := manyRecords(n)
	for i := range out {
		out[i].Samples = 0
	}
	return out
}

func manyGPUs(n int) []GPU {
	out := make([]GPU, n)
	for i := range out {
		out[i] = GPU{UUID: testUUID + strconv.Itoa(i), Index: i, Minor: i, Model: "NVIDIA H100", MemoryMiB: 81559}
	}
	return out
}

func TestAgentHeartbeatValidate(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	good := Heartbeat{Node: "n1", AgentVersion: "1.2.3", SentAt: t0, ScheduleETag: `"abc"`, SpoolDepth: 3, OldestSpooled: t0, NVMLOK: true}
	mod := func(f func(h *Heartbeat)) Heartbeat { h := good; f(&h); return h }
	tests := []struct {
		name string
		hb   Heartbeat
		want []string
	}{
		{"valid", good, nil},
		{"valid with health figures", mod(func(h *Heartbeat) {
			h.SpoolSetAside, h.SpoolSetAsideReason, h.SpoolSetAsideAt = 2, "records[3].minute: must be the start of a minute", t0
			h.SpoolDroppedUsage, h.SpoolDroppedEvents, h.NVMLDownSince = 40, 1, t0
			h.Lock = "detect (cannot lock: no cgroup devices controller (v1) and no cgroup2 mount under /sys/fs/cgroup)"
		}), nil},
		{"empty is valid", Heartbeat{}, nil},
		{"NUL in the version", mod(func(h *Heartbeat) { h.AgentVersion = "1\x00" }), []string{"agent_version"}},
		{"long version", mod(func(h *Heartbeat) { h.AgentVersion = strings.Repeat("1", 101) }), []string{"agent_version"}},
		{"newline in the node", mod(func(h *Heartbeat) { h.Node = "n1\nFAKE LOG LINE" }), []string{"node"}},
		{"spool depth 2^62", mod(func(h *Heartbeat) { h.SpoolDepth = 1 << 62 }), []string{"spool_depth"}},
		{"negative spool depth", mod(func(h *Heartbeat) { h.SpoolDepth = -1 }), []string{"spool_depth"}},
		{"oldest in year 1", mod(func(h *Heartbeat) { h.OldestSpooled = time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC) }), []string{"oldest_spooled"}},
		{"set aside 2^62", mod(func(h *Heartbeat) { h.SpoolSetAside = 1 << 62 }), []string{"spool_set_aside"}},
		{"NUL in the set-aside reason", mod(func(h *Heartbeat) { h.SpoolSetAsideReason = "bad\x00" }), []string{"spool_set_aside_reason"}},
		{"newline in the lock mode", mod(func(h *Heartbeat) { h.Lock = "detect (cannot lock:\nno cgroup)" }), []string{"lock"}},
		{"lock mode too long", mod(func(h *Heartbeat) { h.Lock = strings.Repeat("x", MaxLockLen+1) }), []string{"lock"}},
		{"negative drops", mod(func(h *Heartbeat) { h.SpoolDroppedEvents = -1 }), []string{"spool_dropped_usage"}},
		{"NVML down since year 1", mod(func(h *Heartbeat) { h.NVMLDownSince = time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC) }), []string{"nvml_down_since"}},
		{"sampling failing", mod(func(h *Heartbeat) { h.SampleError, h.SampleFailingSince = "nvml: GPU-1: Unknown Error", t0 }), nil},
		{"newline in the sample error", mod(func(h *Heartbeat) { h.SampleError = "nvml:\nUnknown Error" }), []string{"sample_error"}},
		{"sample error too long", mod(func(h *Heartbeat) { h.SampleError = strings.Repeat("x", 1025) }), []string{"sample_error"}},
		{"sampling failing since year 1", mod(func(h *Heartbeat) { h.SampleFailingSince = time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC) }), []string{"sample_failing_since"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := invalidFields(t, tt.hb.Validate()); !slices.Equal(got, tt.want) {
				t.Errorf("fields = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAgentEnrollRequestValidate(t *testing.T) {
	tests := []struct {
		name  string
		req   EnrollRequest
		want  []string
		token bool
	}{
		{"valid", EnrollRequest{Token: "gpbe_x", Hostname: "n1.example.org", AgentVersion: "1.0"}, nil, true},
		{"NUL in the hostname", EnrollRequest{Token: "gpbe_x", Hostname: "n1\x00"}, []string{"hostname"}, true},
		{"long hostname", EnrollRequest{Token: "gpbe_x", Hostname: strings.Repeat("h", 256)}, []string{"hostname"}, true},
		{"escape in the version", EnrollRequest{Token: "gpbe_x", AgentVersion: "\x1b]0;pwned\x07"}, []string{"agent_version"}, true},
		{"no token", EnrollRequest{}, nil, false},
		{"NUL in the token", EnrollRequest{Token: "gpbe\x00"}, nil, false},
		{"long token", EnrollRequest{Token: strings.Repeat("t", 257)}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := invalidFields(t, tt.req.Validate()); !slices.Equal(got, tt.want) {
				t.Errorf("fields = %v, want %v", got, tt.want)
			}
			if got := tt.req.UsableEnrollToken(); got != tt.token {
				t.Errorf("UsableEnrollToken = %v, want %v", got, tt.token)
			}
		})
	}
}

func TestAgentInventoryMIG(t *testing.T) {
	inst := func(n, gi, slices int, profile string) MIGInstance {
		return MIGInstance{UUID: fmt.Sprintf("MIG-%08d-0000-0000-0000-000000000000", n), Profile: profile, GPUInstance: gi, Slices: slices, MemoryMiB: 9728}
	}
	seven := func() []MIGInstance {
		var out []MIGInstance
		for i := range 7 {
			out = append(out, inst(i, 7+i, 1, "1g.10gb"))
		}
		return out
	}
	a100 := func(mod func(*GPU)) []GPU {
		g := GPU{UUID: testUUID, Model: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920, MIG: true, MIGSlices: 7, Instances: seven()}
		mod(&g)
		return []GPU{g}
	}
	tests := []struct {
		name string
		gpus []GPU
		want []string
	}{
		{"seven 1g.10gb", a100(func(*GPU) {}), nil},
		{"one 3g and one 4g", a100(func(g *GPU) {
			g.Instances = []MIGInstance{inst(1, 1, 3, "3g.40gb"), inst(2, 2, 4, "4g.40gb")}
		}), nil},
		{"MIG on, no instances yet", a100(func(g *GPU) { g.Instances, g.MIGSlices = nil, 0 }), nil},
		{"media extension profile", a100(func(g *GPU) { g.Instances = []MIGInstance{inst(1, 1, 1, "1g.10gb+me")} }), nil},
		{"all media extensions", a100(func(g *GPU) { g.Instances = []MIGInstance{inst(1, 1, 1, "1g.20gb+me.all")} }), nil},
		{"a compute instance smaller than its GPU instance", a100(func(g *GPU) { g.Instances = []MIGInstance{inst(1, 1, 1, "1c.2g.20gb")} }), nil},
		{"an unknown shape", a100(func(g *GPU) { g.Instances = []MIGInstance{inst(1, 1, 1, "1g.10gb.me")} }), []string{"gpus[0].mig_instances[0]"}},
		{"instances without MIG", a100(func(g *GPU) { g.MIG = false }), []string{"gpus[0]"}},
		{"instances without slices", a100(func(g *GPU) { g.MIGSlices = 0 }), []string{"gpus[0]"}},
		{"nine slices", a100(func(g *GPU) { g.MIGSlices = 9 }), []string{"gpus[0]"}},
		{"eight instances of one slice on seven", a100(func(g *GPU) { g.Instances = append(g.Instances, inst(8, 20, 1, "1g.10gb")) }), []string{"gpus[0].mig_instances"}},
		{"GPU UUID for an instance", a100(func(g *GPU) { g.Instances[3].UUID = testUUID }), []string{"gpus[0].mig_instances[3]"}},
		{"bad profile", a100(func(g *GPU) { g.Instances[0].Profile = "big" }), []string{"gpus[0].mig_instances[0]"}},
		{"gi out of range", a100(func(g *GPU) { g.Instances[0].GPUInstance = 64 }), []string{"gpus[0].mig_instances[0]"}},
		{"zero slices", a100(func(g *GPU) { g.Instances[0].Slices = 0 }), []string{"gpus[0].mig_instances[0]"}},
		{"more memory than the GPU", a100(func(g *GPU) { g.Instances[0].MemoryMiB = 81921 }), []string{"gpus[0].mig_instances[0]"}},
		{"same instance twice", a100(func(g *GPU) { g.Instances[1] = g.Instances[0] }), []string{"gpus[0].mig_instances"}},
		{"same gi and ci twice", a100(func(g *GPU) { g.Instances[1].GPUInstance = g.Instances[0].GPUInstance }), []string{"gpus[0].mig_instances"}},
		{"an instance under two GPUs", append(a100(func(*GPU) {}), GPU{UUID: testUUID + "1", Index: 1, Model: "x", MemoryMiB: 81920, MIG: true, MIGSlices: 7,
			Instances: []MIGInstance{inst(0, 1, 1, "1g.10gb")}}), []string{"gpus[1].mig_instances"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := Inventory{Node: "n1", GPUs: tt.gpus}
			if got := invalidFields(t, inv.Validate()); !slices.Equal(got, tt.want) {
				t.Errorf("fields = %v, want %v", got, tt.want)
			}
		})
	}
}
