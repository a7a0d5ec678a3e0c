package models

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testUUID = "GPU-8c3e7a3b-4d6f-4b9c-9a51-0e6c2d1f0a11"

func f64(f float64) *float64 { return &f }

// invalidFields returns the sorted field names of an EINVALID error, nil for nil.
func invalidFields(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != EINVALID {
		t.Fatalf("error %v is not an EINVALID *Error", err)
	}
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func goodRecord() AgentUsageRecord {
	return AgentUsageRecord{
		GPUUUID: testUUID, Minute: time.Date(2026, 3, 2, 14, 5, 0, 0, time.UTC),
		UtilAvgPct: f64(40), UtilMaxPct: f64(90), MemUsedMiB: 1000, MemTotalMiB: 40960, Samples: 6,
		Users: []AgentUserUsage{{User: "alice", UID: 1001, MemoryMiB: 1000, Processes: 1, Busy: true}},
	}
}

func TestAgentUsageBatchValidate(t *testing.T) {
	mod := func(f func(r *AgentUsageRecord)) []AgentUsageRecord {
		r := goodRecord()
		f(&r)
		return []AgentUsageRecord{r}
	}
	tests := []struct {
		name    string
		records []AgentUsageRecord
		want    []string
	}{
		{"valid", []AgentUsageRecord{goodRecord()}, nil},
		{"MIG without utilisation is valid", mod(func(r *AgentUsageRecord) { r.UtilAvgPct, r.UtilMaxPct = nil, nil }), nil},
		{"empty", nil, []string{"records"}},
		{"bad uuid", mod(func(r *AgentUsageRecord) { r.GPUUUID = "3; rm -rf /" }), []string{"records[0].gpu_uuid"}},
		{"minute not truncated", mod(func(r *AgentUsageRecord) { r.Minute = r.Minute.Add(time.Second) }), []string{"records[0].minute"}},
		{"no samples", mod(func(r *AgentUsageRecord) { r.Samples = 0 }), []string{"records[0].samples"}},
		{"absurd samples", mod(func(r *AgentUsageRecord) { r.Samples = 1 << 40 }), []string{"records[0].samples"}},
		{"half utilisation", mod(func(r *AgentUsageRecord) { r.UtilMaxPct = nil }), []string{"records[0]"}},
		{"utilisation over 100", mod(func(r *AgentUsageRecord) { r.UtilMaxPct = f64(101) }), []string{"records[0]"}},
		{"avg above max", mod(func(r *AgentUsageRecord) { r.UtilAvgPct = f64(95) }), []string{"records[0]"}},
		{"used above total", mod(func(r *AgentUsageRecord) { r.MemUsedMiB = r.MemTotalMiB + 1 }), []string{"records[0]"}},
		{"user twice", mod(func(r *AgentUsageRecord) { r.Users = append(r.Users, r.Users[0]) }), []string{"records[0].users[1]"}},
		{"user without name", mod(func(r *AgentUsageRecord) { r.Users[0].User = "" }), []string{"records[0].users[0]"}},
		{"NUL in a user name", mod(func(r *AgentUsageRecord) { r.Users[0].User = "al\x00ice" }), []string{"records[0].users[0]"}},
		{"newline in a user name", mod(func(r *AgentUsageRecord) { r.Users[0].User = "alice\nroot" }), []string{"records[0].users[0]"}},
		{"C1 control in a user name", mod(func(r *AgentUsageRecord) { r.Users[0].User = "alice\u009b" }), []string{"records[0].users[0]"}},
		{"user name over 256 bytes", mod(func(r *AgentUsageRecord) { r.Users[0].User = strings.Repeat("a", 257) }), []string{"records[0].users[0]"}},
		{"uid beyond int4", mod(func(r *AgentUsageRecord) { r.Users[0].UID = 1 << 62 }), []string{"records[0].users[0]"}},
		{"uid below -1", mod(func(r *AgentUsageRecord) { r.Users[0].UID = -2 }), []string{"records[0].users[0]"}},
		{"processes beyond pid_max", mod(func(r *AgentUsageRecord) { r.Users[0].Processes = 1 << 62 }), []string{"records[0].users[0]"}},
		{"user memory over 16 TiB", mod(func(r *AgentUsageRecord) { r.Users[0].MemoryMiB = 1 << 62 }), []string{"records[0].users[0]"}},
		{"total memory over 16 TiB", mod(func(r *AgentUsageRecord) { r.MemTotalMiB = 16<<20 + 1 }), []string{"records[0]"}},
		{"too many users", mod(func(r *AgentUsageRecord) { r.Users = manyUsers(AgentMaxUsersPerRecord + 1) }), []string{"records[0].users"}},
		{"as many users as allowed", mod(func(r *AgentUsageRecord) { r.Users = manyUsers(AgentMaxUsersPerRecord) }), nil},
		{"too many records: one error", manyRecords(AgentMaxRecordsPerBatch + 1), []string{"records"}},
		{"many bad records: one error", badRecords(50), []string{"records[0].samples"}},
		{"duplicate key", []AgentUsageRecord{goodRecord(), goodRecord()}, []string{"records[1]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := AgentUsageBatch{Node: "n1", BatchID: "1", Records: tt.records}
			if got := invalidFields(t, b.Validate()); !slices.Equal(got, tt.want) {
				t.Errorf("fields = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAgentViolationBatchValidate(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	good := AgentViolation{ID: "n1:unbooked_use:x:42:1", Kind: ViolationUnbooked, GPUUUID: testUUID,
		User: "bob", UID: 1002, PID: 42, FirstSeen: t0, LastSeen: t0.Add(time.Minute), Action: ActionWarned}
	mod := func(f func(v *AgentViolation)) AgentViolation { v := good; f(&v); return v }
	tests := []struct {
		name string
		v    []AgentViolation
		want []string
	}{
		{"valid", []AgentViolation{good}, nil},
		{"memory without process needs no user", []AgentViolation{mod(func(v *AgentViolation) {
			v.Kind, v.User, v.PID, v.Action = ViolationMemoryNoProcess, "", 0, ActionNone
		})}, nil},
		{"empty", nil, []string{"violations"}},
		{"unknown kind", []AgentViolation{mod(func(v *AgentViolation) { v.Kind = "bad" })}, []string{"violations[0]"}},
		{"no pid", []AgentViolation{mod(func(v *AgentViolation) { v.PID = 0 })}, []string{"violations[0]"}},
		{"no id", []AgentViolation{mod(func(v *AgentViolation) { v.ID = "" })}, []string{"violations[0]"}},
		{"last before first", []AgentViolation{mod(func(v *AgentViolation) { v.LastSeen = t0.Add(-time.Second) })}, []string{"violations[0]"}},
		{"unknown action", []AgentViolation{mod(func(v *AgentViolation) { v.Action = "nuke" })}, []string{"violations[0]"}},
		{"NUL in the user", []AgentViolation{mod(func(v *AgentViolation) { v.User = "bob\x00" })}, []string{"violations[0]"}},
		{"escape in the id", []AgentViolation{mod(func(v *AgentViolation) { v.ID = "x\x1b[2J" })}, []string{"violations[0]"}},
		{"pid 2^62", []AgentViolation{mod(func(v *AgentViolation) { v.PID = 1 << 62 })}, []string{"violations[0]"}},
		{"uid 2^62", []AgentViolation{mod(func(v *AgentViolation) { v.UID = 1 << 62 })}, []string{"violations[0]"}},
		{"memory 2^62", []AgentViolation{mod(func(v *AgentViolation) { v.MemoryMiB = 1 << 62 })}, []string{"violations[0]"}},
		{"negative booking", []AgentViolation{mod(func(v *AgentViolation) { v.BookingID = -1 })}, []string{"violations[0]"}},
		{"year 0", []AgentViolation{mod(func(v *AgentViolation) { v.FirstSeen = time.Time{} })}, []string{"violations[0]"}},
		{"too many", slices.Repeat([]AgentViolation{good}, AgentMaxViolationsPerBatch+1), []string{"violations"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := AgentViolationBatch{Node: "n1", Violations: tt.v}
			if got := invalidFields(t, b.Validate()); !slices.Equal(got, tt.want) {
				t.Errorf("fields = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAgentIdleBatchValidate(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	good := AgentIdleReport{ID: "7:1", BookingID: 7, User: "alice", GPUUUIDs: []string{testUUID}, IdleSince: t0, ReportedAt: t0.Add(30 * time.Minute)}
	mod := func(f func(r *AgentIdleReport)) AgentIdleReport { r := good; f(&r); return r }
	tests := []struct {
		name string
		r    []AgentIdleReport
		want []string
	}{
		{"valid", []AgentIdleReport{good}, nil},
		{"empty", nil, []string{"reports"}},
		{"no booking", []AgentIdleReport{mod(func(r *AgentIdleReport) { r.BookingID = 0 })}, []string{"reports[0]"}},
		{"no gpus", []AgentIdleReport{mod(func(r *AgentIdleReport) { r.GPUUUIDs = nil })}, []string{"reports[0].gpu_uuids"}},
		{"bad gpu", []AgentIdleReport{mod(func(r *AgentIdleReport) { r.GPUUUIDs = []string{"GPU-$(id)"} })}, []string{"reports[0].gpu_uuids[0]"}},
		{"too many gpus", []AgentIdleReport{mod(func(r *AgentIdleReport) {
			r.GPUUUIDs = slices.Repeat([]string{testUUID}, AgentMaxGPUs+1)
		})}, []string{"reports[0].gpu_uuids"}},
		{"NUL in the user", []AgentIdleReport{mod(func(r *AgentIdleReport) { r.User = "a\x00" })}, []string{"reports[0].user"}},
		{"too many reports", slices.Repeat([]AgentIdleReport{good}, AgentMaxIdlePerBatch+1), []string{"reports"}},
		{"reported before idle", []AgentIdleReport{mod(func(r *AgentIdleReport) { r.ReportedAt = t0.Add(-time.Second) })}, []string{"reports[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := AgentIdleBatch{Node: "n1", Reports: tt.r}
			if got := invalidFields(t, b.Validate()); !slices.Equal(got, tt.want) {
				t.Errorf("fields = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAgentInventoryValidate(t *testing.T) {
	good := AgentGPU{UUID: testUUID, Index: 0, Minor: 0, Model: "NVIDIA A100-SXM4-40GB", MemoryMiB: 40960}
	tests := []struct {
		name string
		gpus []AgentGPU
		want []string
	}{
		{"valid", []AgentGPU{good}, nil},
		{"no GPUs is valid (all out of service)", nil, nil},
		{"twice", []AgentGPU{good, good}, []string{"gpus[1]"}},
		{"no model", []AgentGPU{{UUID: testUUID, MemoryMiB: 1}}, []string{"gpus[0]"}},
		{"negative index", []AgentGPU{{UUID: testUUID, Index: -1, Model: "x", MemoryMiB: 1}}, []string{"gpus[0]"}},
		{"index 64", []AgentGPU{{UUID: testUUID, Index: 64, Model: "x", MemoryMiB: 1}}, []string{"gpus[0]"}},
		{"index 63", []AgentGPU{{UUID: testUUID, Index: 63, Minor: 254, Model: "x", MemoryMiB: 16 << 20}}, nil},
		{"minor 255", []AgentGPU{{UUID: testUUID, Minor: 255, Model: "x", MemoryMiB: 1}}, []string{"gpus[0]"}},
		{"memory over 16 TiB", []AgentGPU{{UUID: testUUID, Model: "x", MemoryMiB: 16<<20 + 1}}, []string{"gpus[0]"}},
		{"NUL in the model", []AgentGPU{{UUID: testUUID, Model: "A100\x00", MemoryMiB: 1}}, []string{"gpus[0]"}},
		{"index twice", []AgentGPU{good, {UUID: testUUID + "0", Model: "x", MemoryMiB: 1}}, []string{"gpus[1]"}},
		{"65 GPUs", manyGPUs(65), []string{"gpus"}},
		{"64 GPUs", manyGPUs(64), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := AgentInventory{Node: "n1", GPUs: tt.gpus}
			if got := invalidFields(t, inv.Validate()); !slices.Equal(got, tt.want) {
				t.Errorf("fields = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAgentBookingActiveAt(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	b := AgentBooking{ID: 1, StartsAt: t0, EndsAt: t0.Add(time.Hour), GPUUUIDs: []string{testUUID}}
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

func manyUsers(n int) []AgentUserUsage {
	out := make([]AgentUserUsage, n)
	for i := range out {
		out[i] = AgentUserUsage{User: "u" + strconv.Itoa(i), UID: 1000 + i}
	}
	return out
}

// manyRecords is n valid records of distinct minutes.
func manyRecords(n int) []AgentUsageRecord {
	out := make([]AgentUsageRecord, n)
	for i := range out {
		out[i] = goodRecord()
		out[i].Minute = out[i].Minute.Add(time.Duration(i) * time.Minute)
	}
	return out
}

// badRecords is n records that are all wrong.
func badRecords(n int) []AgentUsageRecord {
	out := manyRecords(n)
	for i := range out {
		out[i].Samples = 0
	}
	return out
}

func manyGPUs(n int) []AgentGPU {
	out := make([]AgentGPU, n)
	for i := range out {
		out[i] = AgentGPU{UUID: testUUID + strconv.Itoa(i), Index: i, Minor: i, Model: "NVIDIA H100", MemoryMiB: 81559}
	}
	return out
}

func TestAgentHeartbeatValidate(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	good := AgentHeartbeat{Node: "n1", AgentVersion: "1.2.3", SentAt: t0, ScheduleETag: `"abc"`, SpoolDepth: 3, OldestSpooled: t0, NVMLOK: true}
	mod := func(f func(h *AgentHeartbeat)) AgentHeartbeat { h := good; f(&h); return h }
	tests := []struct {
		name string
		hb   AgentHeartbeat
		want []string
	}{
		{"valid", good, nil},
		{"valid with health figures", mod(func(h *AgentHeartbeat) {
			h.SpoolSetAside, h.SpoolSetAsideReason, h.SpoolSetAsideAt = 2, "records[3].minute: must be the start of a minute", t0
			h.SpoolDroppedUsage, h.SpoolDroppedEvents, h.NVMLDownSince = 40, 1, t0
		}), nil},
		{"empty is valid", AgentHeartbeat{}, nil},
		{"NUL in the version", mod(func(h *AgentHeartbeat) { h.AgentVersion = "1\x00" }), []string{"agent_version"}},
		{"long version", mod(func(h *AgentHeartbeat) { h.AgentVersion = strings.Repeat("1", 101) }), []string{"agent_version"}},
		{"newline in the node", mod(func(h *AgentHeartbeat) { h.Node = "n1\nFAKE LOG LINE" }), []string{"node"}},
		{"spool depth 2^62", mod(func(h *AgentHeartbeat) { h.SpoolDepth = 1 << 62 }), []string{"spool_depth"}},
		{"negative spool depth", mod(func(h *AgentHeartbeat) { h.SpoolDepth = -1 }), []string{"spool_depth"}},
		{"oldest in year 1", mod(func(h *AgentHeartbeat) { h.OldestSpooled = time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC) }), []string{"oldest_spooled"}},
		{"set aside 2^62", mod(func(h *AgentHeartbeat) { h.SpoolSetAside = 1 << 62 }), []string{"spool_set_aside"}},
		{"NUL in the set-aside reason", mod(func(h *AgentHeartbeat) { h.SpoolSetAsideReason = "bad\x00" }), []string{"spool_set_aside_reason"}},
		{"negative drops", mod(func(h *AgentHeartbeat) { h.SpoolDroppedEvents = -1 }), []string{"spool_dropped_usage"}},
		{"NVML down since year 1", mod(func(h *AgentHeartbeat) { h.NVMLDownSince = time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC) }), []string{"nvml_down_since"}},
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
		req   AgentEnrollRequest
		want  []string
		token bool
	}{
		{"valid", AgentEnrollRequest{Token: "gpbe_x", Hostname: "n1.example.org", AgentVersion: "1.0"}, nil, true},
		{"NUL in the hostname", AgentEnrollRequest{Token: "gpbe_x", Hostname: "n1\x00"}, []string{"hostname"}, true},
		{"long hostname", AgentEnrollRequest{Token: "gpbe_x", Hostname: strings.Repeat("h", 256)}, []string{"hostname"}, true},
		{"escape in the version", AgentEnrollRequest{Token: "gpbe_x", AgentVersion: "\x1b]0;pwned\x07"}, []string{"agent_version"}, true},
		{"no token", AgentEnrollRequest{}, nil, false},
		{"NUL in the token", AgentEnrollRequest{Token: "gpbe\x00"}, nil, false},
		{"long token", AgentEnrollRequest{Token: strings.Repeat("t", 257)}, nil, false},
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
