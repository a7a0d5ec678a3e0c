package models

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
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
		{"bad uuid", mod(func(r *AgentUsageRecord) { r.GPUUUID = "3; rm -rf /" }), []string{"records[0]"}},
		{"minute not truncated", mod(func(r *AgentUsageRecord) { r.Minute = r.Minute.Add(time.Second) }), []string{"records[0]"}},
		{"no samples", mod(func(r *AgentUsageRecord) { r.Samples = 0 }), []string{"records[0]"}},
		{"half utilisation", mod(func(r *AgentUsageRecord) { r.UtilMaxPct = nil }), []string{"records[0]"}},
		{"utilisation over 100", mod(func(r *AgentUsageRecord) { r.UtilMaxPct = f64(101) }), []string{"records[0]"}},
		{"avg above max", mod(func(r *AgentUsageRecord) { r.UtilAvgPct = f64(95) }), []string{"records[0]"}},
		{"used above total", mod(func(r *AgentUsageRecord) { r.MemUsedMiB = r.MemTotalMiB + 1 }), []string{"records[0]"}},
		{"user twice", mod(func(r *AgentUsageRecord) { r.Users = append(r.Users, r.Users[0]) }), []string{"records[0]"}},
		{"user without name", mod(func(r *AgentUsageRecord) { r.Users[0].User = "" }), []string{"records[0]"}},
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
		{"no gpus", []AgentIdleReport{mod(func(r *AgentIdleReport) { r.GPUUUIDs = nil })}, []string{"reports[0]"}},
		{"bad gpu", []AgentIdleReport{mod(func(r *AgentIdleReport) { r.GPUUUIDs = []string{"GPU-$(id)"} })}, []string{"reports[0]"}},
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
