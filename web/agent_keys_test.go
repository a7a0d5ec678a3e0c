package web_test

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
)

// unknownKeysHeartbeat is a heartbeat just under wire.MaxBody whose
// fields are followed by about 93,000 keys no agent sends.
func unknownKeysHeartbeat() []byte {
	var b bytes.Buffer
	b.WriteString(`{"node":"load","agent_version":"bench","sent_at":"2026-01-01T00:00:00Z","nvml_ok":true`)
	for i := 0; b.Len() < wire.MaxBody-32; i++ {
		fmt.Fprintf(&b, `,"k%d":0`, i)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// TestAgentUnknownKeysRefusedCheaply: a heartbeat of tens of thousands of
// unknown keys is refused at the first key over the bound of one object,
// and costs little beyond reading its body once: before, the walk kept a
// record and a hash entry of every key, about 7 times the body.
func TestAgentUnknownKeysRefusedCheaply(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) { // not in parallel: it counts the process's allocations
			x := newMemFixture(t, d)
			body := unknownKeysHeartbeat()
			least := uint64(math.MaxUint64)
			var rec *httptest.ResponseRecorder
			for range 3 {
				req := x.request(memBody{path: wire.PathHeartbeat}, body)
				rec = httptest.NewRecorder()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				x.env.Server.Echo.ServeHTTP(rec, req)
				runtime.ReadMemStats(&after)
				least = min(least, after.TotalAlloc-before.TotalAlloc)
			}
			t.Logf("%d keys, %d bytes: %d bytes allocated (%.2f times)", strings.Count(string(body), ":"), len(body), least, float64(least)/float64(len(body)))
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "more than 64 fields in one object") {
				t.Errorf("%d %s, want 422 naming the bound", rec.Code, rec.Body.String())
			}
			if bound := uint64(len(body) + len(body)/4 + 128<<10); least > bound {
				t.Errorf("a body of %d bytes allocated %d bytes (%.1f times), more than %d", len(body), least, float64(least)/float64(len(body)), bound)
			}
		})
	}
}
