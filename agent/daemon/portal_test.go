package daemon_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/gpubook/gpubook/models/wire"
)

// fakePortal simulates the portal's agent API in-test (the real endpoints are
// built separately): it validates bodies with the real models rules, dedups
// usage by record key like the portal must, and counts every receipt so the
// tests can prove exactly-once delivery.
type fakePortal struct {
	t   *testing.T
	srv *httptest.Server

	mu         sync.Mutex
	down       bool
	loseAcks   int // store the next N usage batches, then answer 500 (agent crashed before the ack)
	schedule   wire.Schedule
	etag       string
	notMod     int
	inventory  *wire.Inventory
	records    map[string]wire.UsageRecord
	receipts   map[string]int
	acked      map[string]bool
	violations map[string]wire.Violation
	idle       map[string]wire.IdleReport
	heartbeats int
	heartbeat  wire.Heartbeat // the last one
}

func newFakePortal(t *testing.T) *fakePortal {
	p := &fakePortal{t: t, etag: `"1"`, records: map[string]wire.UsageRecord{}, receipts: map[string]int{},
		acked: map[string]bool{}, violations: map[string]wire.Violation{}, idle: map[string]wire.IdleReport{}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *fakePortal) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
}

func (p *fakePortal) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	if r.Header.Get("Authorization") != "Bearer node-cred" {
		http.Error(w, "no", http.StatusUnauthorized)
		return
	}
	switch r.URL.Path {
	case wire.PathSchedule:
		if r.Header.Get("If-None-Match") == p.etag {
			p.notMod++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", p.etag)
		_ = json.NewEncoder(w).Encode(p.schedule)
		return
	case wire.PathInventory:
		var inv wire.Inventory
		p.decode(w, r, &inv, inv.Validate)
		p.inventory = &inv
	case wire.PathUsage:
		p.usage(w, r)
		return
	case wire.PathViolations:
		var b wire.ViolationBatch
		if p.decode(w, r, &b, b.Validate) {
			for _, v := range b.Violations {
				p.violations[v.ID] = v
			}
		}
	case wire.PathIdle:
		var b wire.IdleBatch
		if p.decode(w, r, &b, b.Validate) {
			for _, x := range b.Reports {
				p.idle[x.ID] = x
			}
		}
	case wire.PathHeartbeat:
		p.heartbeats++
		if !p.decode(w, r, &p.heartbeat, p.heartbeat.Validate) {
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (p *fakePortal) decode(w http.ResponseWriter, r *http.Request, v any, validate func() error) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		p.t.Errorf("portal: bad JSON on %s: %v", r.URL.Path, err)
		return false
	}
	if err := validate(); err != nil {
		p.t.Errorf("portal: invalid body on %s: %v", r.URL.Path, err)
		return false
	}
	return true
}

// usage stores each key once (first wins) and flags any key that arrives
// again after the agent already got a 2xx for it.
func (p *fakePortal) usage(w http.ResponseWriter, r *http.Request) {
	var b wire.UsageBatch
	if !p.decode(w, r, &b, b.Validate) {
		return
	}
	for _, rec := range b.Records {
		k := rec.Key(b.Node)
		p.receipts[k]++
		if p.acked[k] {
			p.t.Errorf("portal: %s sent again after a successful ack", k)
		}
		if _, ok := p.records[k]; !ok {
			p.records[k] = rec
		}
	}
	if p.loseAcks > 0 {
		p.loseAcks--
		http.Error(w, "crashed before ack", http.StatusInternalServerError)
		return
	}
	for _, rec := range b.Records {
		p.acked[rec.Key(b.Node)] = true
	}
	w.WriteHeader(http.StatusNoContent)
}
