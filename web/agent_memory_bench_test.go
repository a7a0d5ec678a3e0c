package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// BenchmarkAgentBodyMemory posts the largest bodies the agent API accepts
// through the wired router (auth, body limit, strict JSON, validation,
// store) and reports, besides time and B/op, the bytes allocated per byte
// of body (alloc/body) and the heap's sampled peak above its level before
// the request (peak-heap-MiB): what one request of at most wire.MaxBody
// costs the server.
//
//	CI=true go test -run '^$' -bench AgentBodyMemory -benchtime 10x ./web/
func BenchmarkAgentBodyMemory(b *testing.B) {
	for _, dialect := range []string{store.SQLite, store.Postgres} {
		b.Run(dialect, func(b *testing.B) {
			x := newMemFixture(b, dialect)
			for _, c := range memBodies(x.booking) {
				b.Run(c.name, func(b *testing.B) { x.bench(b, c) })
			}
		})
	}
}

// TestAgentBodyMemoryBound: no body of at most wire.MaxBody makes the
// portal allocate more than 3 times its size (plus 128 KiB for what a
// request costs whatever its body) while it answers it. It bounds the
// bytes allocated, not time or a sampled peak: what the server allocates
// for a given body is the same from run to run, and the least of three
// tries leaves out what other goroutines allocate meanwhile. Before the
// batch was read one record at a time, the largest valid usage body cost
// 22 (SQLite) and 44 (PostgreSQL) times its size; before its rows went to
// the database in pieces (models/store/telemetry/agent_rows.go), 2.3 and 4.0, and
// the largest violation and idle batches 4.2–6.4; now all under 3.
func TestAgentBodyMemoryBound(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) { // not in parallel: it counts the process's allocations
			x := newMemFixture(t, d)
			for _, c := range memBodies(x.booking) {
				t.Run(c.name, func(t *testing.T) {
					least := uint64(math.MaxUint64)
					var size int
					for try := range 3 {
						body := c.make(100 + try)
						size = len(body)
						req := x.request(c, body)
						rec := httptest.NewRecorder()
						var before, after runtime.MemStats
						runtime.ReadMemStats(&before)
						x.env.Server.Echo.ServeHTTP(rec, req)
						runtime.ReadMemStats(&after)
						if rec.Code != c.want {
							t.Fatalf("%d %s, want %d", rec.Code, rec.Body.String(), c.want)
						}
						least = min(least, after.TotalAlloc-before.TotalAlloc)
					}
					if bound := uint64(memTimes*size + memFixed); least > bound {
						t.Errorf("a body of %d bytes allocated %d bytes (%.1f times), more than %d", size, least, float64(least)/float64(size), bound)
					}
				})
			}
		})
	}
}

// The bound of TestAgentBodyMemoryBound: memTimes bytes allocated per
// byte of body, plus memFixed.
const (
	memTimes = 3
	memFixed = 128 << 10
)

// request is a request that posts body as c says, with the node's credential.
func (x *memFixture) request(c memBody, body []byte) *http.Request {
	method := http.MethodPost
	if c.path == wire.PathInventory {
		method = http.MethodPut
	}
	req := httptest.NewRequest(method, c.path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+x.cred)
	return req
}

// memBody is one kind of body; make builds the i-th, so that stored
// bodies bring new rows every time.
type memBody struct {
	name, path string
	want       int
	make       func(i int) []byte
}

func memBodies(booking int64) []memBody {
	return []memBody{
		{"usage-valid-largest", wire.PathUsage, http.StatusNoContent, func(i int) []byte {
			return memValidUsage(e2eT0.Add(-time.Duration(2+i)*time.Hour), 11)
		}},
		{"usage-invalid-last", wire.PathUsage, http.StatusUnprocessableEntity, func(int) []byte { return memInvalidUsage() }},
		{"violations-valid-largest", wire.PathViolations, http.StatusNoContent, func(i int) []byte { return memViolations(i, false) }},
		{"violations-invalid-last", wire.PathViolations, http.StatusUnprocessableEntity, func(i int) []byte { return memViolations(i, true) }},
		{"inventory-padded", wire.PathInventory, http.StatusUnprocessableEntity, func(int) []byte { return memInventory() }},
		// 500 reports of one booking, stored, the newest read back and its
		// owner warned: about 3.0 (SQLite) and 3.2 (PostgreSQL) times the
		// body with the fixed part (8.8 and 13.7 while every report was
		// read back, 4.3 and 6.4 while the rows went as one JSON text).
		{"idle-valid-largest", wire.PathIdle, http.StatusNoContent, func(i int) []byte { return memIdle(i, booking, false) }},
		{"idle-too-many-gpus", wire.PathIdle, http.StatusUnprocessableEntity, func(i int) []byte { return memIdle(i, booking, true) }},
	}
}

// memFixture is a portal with an enrolled 64-GPU node "load".
type memFixture struct {
	env     *webtest.Env
	cred    string
	booking int64 // of the node's GPUs, for idle reports
}

func newMemFixture(b testing.TB, dialect string) *memFixture {
	env := webtest.New(b, dialect, func(c *web.Config) { c.Now = func() time.Time { return e2eT0 } })
	ctx := context.Background()
	gpus, err := models.NewNodeGPUs("load", wire.MaxNodeGPUs, "NVIDIA H100 80GB HBM3", 81559)
	if err != nil {
		b.Fatal(err)
	}
	n := &models.Node{Name: "load"}
	if err := env.DB.CreateNode(ctx, n, gpus, models.CLIActor); err != nil {
		b.Fatal(err)
	}
	tok, _, err := env.DB.CreateEnrollToken(ctx, n.ID, e2eT0, models.CLIActor)
	if err != nil {
		b.Fatal(err)
	}
	user := env.AddUser("load@example.org", "Load", false)
	node, err := env.DB.Node(ctx, n.ID)
	if err != nil {
		b.Fatal(err)
	}
	var gpuIDs []int64
	for _, g := range node.GPUs {
		gpuIDs = append(gpuIDs, g.ID)
	}
	bk, err := env.DB.CreateBooking(ctx, models.NewBooking{UserID: user.ID, GPUIDs: gpuIDs, StartsAt: e2eT0.Add(-time.Hour), EndsAt: e2eT0.Add(time.Hour)},
		models.DefaultBookingLimits, e2eT0.Add(-2*time.Hour), models.CLIActor)
	if err != nil {
		b.Fatal(err)
	}
	api := env.API(user)
	api.Token = ""
	var resp wire.EnrollResponse
	res := api.Post(wire.PathEnroll, wire.EnrollRequest{Token: tok, Hostname: "load", AgentVersion: "bench"})
	if res.Decode(&resp); res.Code != http.StatusOK {
		b.Fatalf("enrol: %d %s", res.Code, res.Body.String())
	}
	return &memFixture{env: env, cred: resp.Credential, booking: bk.ID}
}

func (x *memFixture) bench(b *testing.B, c memBody) {
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = c.make(i)
		if len(bodies[i]) > wire.MaxBody {
			b.Fatalf("%s: %d bytes, over the limit", c.name, len(bodies[i]))
		}
	}
	b.ReportAllocs()
	var peak int64
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		runtime.GC()
		base := heapBytes()
		req := x.request(c, bodies[i])
		rec := httptest.NewRecorder()
		stop := sampleHeap()
		b.StartTimer()
		x.env.Server.Echo.ServeHTTP(rec, req)
		b.StopTimer()
		peak = max(peak, stop()-base)
		if rec.Code != c.want {
			b.Fatalf("%s: %d %s, want %d", c.name, rec.Code, rec.Body.String(), c.want)
		}
		b.StartTimer()
	}
	b.StopTimer()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(bodies[0])), "alloc/body")
	b.ReportMetric(float64(len(bodies[0])), "body-bytes")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// heapBytes is the heap's live and not yet swept objects.
func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// sampleHeap samples heapBytes every 100 µs until the returned function
// is called, which reports the highest sample.
func sampleHeap() func() int64 {
	var mu sync.Mutex
	top := heapBytes()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				h := heapBytes()
				mu.Lock()
				top = max(top, h)
				mu.Unlock()
			}
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		return max(top, heapBytes())
	}
}

func memUUID(i int) string { return models.PlaceholderUUID("load", i) }

// memValidUsage is 15 minutes of the 64 GPUs from start, users per record:
// the largest valid usage body under wire.MaxBody (as scripts/agentload).
func memValidUsage(start time.Time, users int) []byte {
	bt := wire.UsageBatch{Node: "load", BatchID: "load-" + start.Format("150405")}
	for m := range 15 {
		for g := range wire.MaxNodeGPUs {
			util := 55.5
			r := wire.UsageRecord{GPUUUID: memUUID(g), Minute: start.Add(time.Duration(m) * time.Minute), UtilAvgPct: &util,
				UtilMaxPct: &util, MemUsedMiB: 40000, MemTotalMiB: 81559, Samples: 6}
			for u := range users {
				r.Users = append(r.Users, wire.UserUsage{User: fmt.Sprintf("user%04d", u), UID: 2000 + u, MemoryMiB: 1000, Processes: 2, Busy: true})
			}
			bt.Records = append(bt.Records, r)
		}
	}
	raw, _ := json.Marshal(bt)
	return raw
}

// memInvalidUsage is 900 records of 64 short users each, the last with no
// samples: decoded in full and refused at its last record.
func memInvalidUsage() []byte {
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
			memUUID(i%64), i/60, i%60, samples, strings.Join(users, ",")))
	}
	return []byte(`{"node":"load","records":[` + strings.Join(recs, ",") + `]}`)
}

// memViolations is 500 violations with every text at its longest; with
// invalid, the last is of an unknown kind.
func memViolations(batch int, invalid bool) []byte {
	bt := wire.ViolationBatch{Node: "load"}
	t := e2eT0.Add(-time.Hour)
	for i := range wire.MaxViolationsPerBatch {
		v := wire.Violation{ID: fmt.Sprintf("%08d%0248d", batch, i), Kind: wire.ViolationUnbooked, GPUUUID: memUUID(i % 64),
			User: strings.Repeat("u", 256), UID: 1000, PID: 1 + i, FirstSeen: t, LastSeen: t, Action: wire.ActionWarned}
		if invalid && i == wire.MaxViolationsPerBatch-1 {
			v.Kind = "bogus"
		}
		bt.Violations = append(bt.Violations, v)
	}
	raw, _ := json.Marshal(bt)
	return raw
}

// memInventory is the 64 GPUs with a model name just under MaxBody: a
// string far beyond its 100-byte bound, refused by validation.
func memInventory() []byte {
	inv := wire.Inventory{Node: "load", AgentVersion: "bench", ReportedAt: e2eT0}
	for g := range wire.MaxNodeGPUs {
		inv.GPUs = append(inv.GPUs, wire.GPU{UUID: memUUID(g), Index: g, Minor: g, Model: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559})
	}
	inv.GPUs[63].Model = strings.Repeat("m", wire.MaxBody-12<<10)
	raw, _ := json.Marshal(inv)
	return raw
}

// memIdle is the largest idle batch accepted: 500 reports with the
// longest texts and MaxIdleGPUsPerBatch GPUs in all (2 each) — or, with
// all, every report of all 64 GPUs, refused by the JSON walk.
func memIdle(batch int, booking int64, all bool) []byte {
	bt := wire.IdleBatch{Node: "load"}
	for i := range wire.MaxIdlePerBatch {
		r := wire.IdleReport{ID: fmt.Sprintf("%08d%0248d", batch, i), BookingID: booking, User: strings.Repeat("u", 256),
			IdleSince: e2eT0.Add(-time.Hour), ReportedAt: e2eT0}
		for g := range wire.MaxIdleGPUsPerBatch / wire.MaxIdlePerBatch {
			r.GPUUUIDs = append(r.GPUUUIDs, memUUID((2*i+g)%wire.MaxNodeGPUs))
		}
		if all {
			r.User = "load"
			r.GPUUUIDs = nil
			for g := range wire.MaxNodeGPUs {
				r.GPUUUIDs = append(r.GPUUUIDs, memUUID(g))
			}
		}
		bt.Reports = append(bt.Reports, r)
	}
	raw, _ := json.Marshal(bt)
	return raw
}
