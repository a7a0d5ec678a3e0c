package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
)

// kind is one kind of body, one per request so that valid ones store new rows.
type kind struct {
	name, path string
	bodies     [][]byte
}

// buildBodies makes count bodies of each kind, all before the idle figure
// is taken, so that the client's own memory is never in it (the server is
// another process anyway).
func buildBodies(count int, booking int64) ([]kind, error) {
	ks := []kind{
		{name: "usage, invalid at its last record (900 records × 64 users)", path: wire.PathUsage},
		{name: "violations, invalid at the last (500 of the largest)", path: wire.PathViolations},
		{name: "usage, 1,001 records (refused before decoding)", path: wire.PathUsage},
		{name: "usage, 16 MB (refused by its length)", path: wire.PathUsage},
		{name: "usage, valid and largest (960 records, 10,560 user rows)", path: wire.PathUsage},
		{name: "violations, valid and largest (500, stored)", path: wire.PathViolations},
		{name: "idle, valid and largest (500 reports, 1,024 GPUs in all, stored)", path: wire.PathIdle},
		{name: "idle, 500 reports × 64 GPUs (refused by the JSON walk)", path: wire.PathIdle},
	}
	now := time.Now().UTC().Truncate(time.Minute)
	for i := range count {
		bodies := [][]byte{invalidUsage(), invalidViolations(), tooManyRecords(), huge(), nil, validViolations(i), validIdle(i, booking, false), validIdle(i, booking, true)}
		var err error
		if bodies[4], err = validUsage(now.Add(-time.Duration(2+i)*time.Hour), 11); err != nil {
			return nil, err
		}
		for j := range ks {
			ks[j].bodies = append(ks[j].bodies, bodies[j])
		}
	}
	return ks, nil
}

func uuid(i int) string { return models.PlaceholderUUID("load", i) }

// validUsage is 15 minutes of the 64 GPUs from start, users per record.
func validUsage(start time.Time, users int) ([]byte, error) {
	b := wire.UsageBatch{Node: "load", BatchID: "load-" + start.Format("150405")}
	for m := range 15 {
		for g := range wire.MaxNodeGPUs {
			util := 55.5
			r := wire.UsageRecord{GPUUUID: uuid(g), Minute: start.Add(time.Duration(m) * time.Minute), UtilAvgPct: &util,
				UtilMaxPct: &util, MemUsedMiB: 40000, MemTotalMiB: 81559, Samples: 6}
			for u := range users {
				r.Users = append(r.Users, wire.UserUsage{User: fmt.Sprintf("user%04d", u), UID: 2000 + u, MemoryMiB: 1000, Processes: 2, Busy: true})
			}
			b.Records = append(b.Records, r)
		}
	}
	raw, _ := json.Marshal(b)
	if err := b.Validate(); err != nil || len(raw) > wire.MaxBody {
		return nil, fmt.Errorf("the valid body is not: %d bytes, %v", len(raw), err)
	}
	return raw, nil
}

// invalidUsage is 900 records of 64 short users each, the last with no samples.
func invalidUsage() []byte {
	var users []string
	for u := range wire.MaxUsersPerRecord {
		users = append(users, fmt.Sprintf(`{"user":"u%d"}`, u))
	}
	var recs []string
	for i := range 900 {
		samples := 1
		if i == 899 {
			samples = 0
		}
		recs = append(recs, fmt.Sprintf(`{"gpu_uuid":"%s","minute":"2026-01-01T%02d:%02d:00Z","mem_total_mib":1,"samples":%d,"users":[%s]}`,
			uuid(i%64), i/60, i%60, samples, strings.Join(users, ",")))
	}
	return []byte(`{"node":"load","records":[` + strings.Join(recs, ",") + `]}`)
}

// invalidViolations is 500 violations with every text at its longest, the last of an unknown kind.
func invalidViolations() []byte {
	b := wire.ViolationBatch{Node: "load"}
	t := time.Now().UTC()
	for i := range wire.MaxViolationsPerBatch {
		v := wire.Violation{ID: fmt.Sprintf("%0256d", i), Kind: wire.ViolationUnbooked, GPUUUID: uuid(i % 64), User: strings.Repeat("u", 256),
			UID: 1000, PID: 1 + i, FirstSeen: t, LastSeen: t, Action: wire.ActionWarned}
		if i == wire.MaxViolationsPerBatch-1 {
			v.Kind = "bogus"
		}
		b.Violations = append(b.Violations, v)
	}
	raw, _ := json.Marshal(b)
	return raw
}

func tooManyRecords() []byte {
	return []byte(`{"records":[` + strings.TrimSuffix(strings.Repeat(`{"users":[{},{},{},{}]},`, wire.MaxRecordsPerBatch+1), ",") + `]}`)
}

func huge() []byte {
	return []byte(`{"records":[` + strings.TrimSuffix(strings.Repeat(`{"gpu_uuid":"x","samples":0,"users":[{"user":"a"}]},`, 16<<20/52), ",") + `]}`)
}

// validViolations is 500 violations with every text at its longest, new
// episodes in every body.
func validViolations(batch int) []byte {
	b := wire.ViolationBatch{Node: "load"}
	t := time.Now().UTC().Add(-time.Minute)
	for i := range wire.MaxViolationsPerBatch {
		b.Violations = append(b.Violations, wire.Violation{ID: fmt.Sprintf("%08d%0248d", batch, i), Kind: wire.ViolationUnbooked, GPUUUID: uuid(i % 64),
			User: strings.Repeat("u", 256), UID: 1000, PID: 1 + i, FirstSeen: t, LastSeen: t, Action: wire.ActionWarned})
	}
	raw, _ := json.Marshal(b)
	return raw
}

// validIdle is the largest idle batch accepted: 500 reports of one
// booking with the longest texts and wire.MaxIdleGPUsPerBatch GPUs in all
// (2 each); with all, every report names all 64 GPUs (refused by the JSON
// walk, as the GPUs in all are too many).
func validIdle(batch int, booking int64, all bool) []byte {
	b := wire.IdleBatch{Node: "load"}
	t := time.Now().UTC()
	for i := range wire.MaxIdlePerBatch {
		r := wire.IdleReport{ID: fmt.Sprintf("%08d%0248d", batch, i), BookingID: booking, User: strings.Repeat("u", 256),
			IdleSince: t.Add(-time.Hour), ReportedAt: t}
		n := wire.MaxIdleGPUsPerBatch / wire.MaxIdlePerBatch
		if all {
			n = wire.MaxNodeGPUs
		}
		for g := range n {
			r.GPUUUIDs = append(r.GPUUUIDs, uuid((2*i+g)%wire.MaxNodeGPUs))
		}
		b.Reports = append(b.Reports, r)
	}
	raw, _ := json.Marshal(b)
	return raw
}
