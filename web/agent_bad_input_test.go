package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// agentFix is a portal with one enrolled node, talked to through the wired
// router with raw bodies, as a hostile or broken agent would.
type agentFix struct {
	env     *webtest.Env
	api     *webtest.APIClient
	nodeID  int64
	booking int64
}

func newAgentFix(t *testing.T, dialect string) *agentFix {
	t.Helper()
	env := webtest.New(t, dialect, func(c *web.Config) {
		c.Now = func() time.Time { return e2eT0 }
		c.SignInRate = web.Rate{PerMinute: 6000, Burst: 1000} // the suite enrols many times from one address
	})
	ctx := context.Background()
	gpus, _ := models.NewNodeGPUs("n1", 8, "NVIDIA A100-SXM4-40GB", 40960)
	n := &models.Node{Name: "n1"}
	if err := env.DB.CreateNode(ctx, n, gpus, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	alice := env.AddUser("alice@example.org", "Alice", false)
	f := &agentFix{env: env, api: env.API(alice), nodeID: n.ID}
	f.api.Token = ""
	var resp wire.EnrollResponse
	res := f.api.Post(wire.PathEnroll, wire.EnrollRequest{Token: f.enrollToken(), Hostname: "n1", AgentVersion: "test"})
	if res.Decode(&resp); res.Code != http.StatusOK || resp.Credential == "" {
		t.Fatalf("enroll: %d %s", res.Code, res.Body.String())
	}
	f.api.Token = resp.Credential
	node, _ := env.DB.Node(ctx, n.ID)
	b, err := env.DB.CreateBooking(ctx, models.NewBooking{UserID: alice.ID, GPUIDs: []int64{node.GPUs[0].ID},
		StartsAt: e2eT0.Add(time.Hour), EndsAt: e2eT0.Add(2 * time.Hour)}, models.DefaultBookingLimits, e2eT0, models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	f.booking = b.ID
	return f
}

func (f *agentFix) enrollToken() string {
	tok, _, err := f.env.DB.CreateEnrollToken(context.Background(), f.nodeID, e2eT0, models.CLIActor)
	if err != nil {
		f.env.T.Fatal(err)
	}
	return tok
}

// state is everything an agent request may write, but the last-seen time.
func (f *agentFix) state() string {
	f.env.T.Helper()
	var b strings.Builder
	for _, q := range []string{
		"SELECT gpu_id, minute, samples, mem_used_mib FROM gpu_usage_minutes ORDER BY gpu_id, minute",
		"SELECT gpu_id, minute, user_name, uid, memory_mib, processes FROM gpu_user_usage_minutes ORDER BY gpu_id, minute, user_name",
		"SELECT agent_key, user_name, uid, pid, memory_mib, action, last_seen FROM agent_violations ORDER BY agent_key",
		"SELECT agent_key, user_name, gpu_uuids, reported_at FROM agent_idle_reports ORDER BY agent_key",
		"SELECT idx, uuid, model, memory_mib, in_service FROM gpus ORDER BY id",
		"SELECT hostname, agent_version, driver_version, spool_depth, schedule_etag, nvml_ok, inventory_at, credential_hash FROM agent_nodes",
		"SELECT COUNT(*) FROM agent_enroll_tokens WHERE used_at IS NOT NULL",
		"SELECT COUNT(*) FROM audit_events",
	} {
		rows, err := f.env.DB.SQL.Query(q)
		if err != nil {
			f.env.T.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				f.env.T.Fatal(err)
			}
			fmt.Fprintf(&b, "%v\n", vals)
		}
		rows.Close()
	}
	return b.String()
}

// Bodies that are accepted as they are; each bad case changes one thing.
var (
	goodUser  = `{"user":"alice","uid":1001,"memory_mib":100,"processes":1,"busy":true}`
	goodUsage = `{"node":"n1","batch_id":"n1-1","records":[{"gpu_uuid":"GPU-manual-n1-0","minute":"2026-03-02T13:59:00Z",` +
		`"util_avg_pct":10,"util_max_pct":20,"mem_used_mib":100,"mem_total_mib":40960,"samples":6,"users":[` + goodUser + `]}]}`
	goodViolations = `{"node":"n1","batch_id":"n1-2","violations":[{"id":"v1","kind":"unbooked_use","gpu_uuid":"GPU-manual-n1-1",` +
		`"user":"bob","uid":1002,"pid":4242,"memory_mib":500,"first_seen":"2026-03-02T13:50:00Z","last_seen":"2026-03-02T13:55:00Z","action":"warned"}]}`
	goodIdle = `{"node":"n1","batch_id":"n1-3","reports":[{"id":"i1","booking_id":BOOKING,"user":"alice","gpu_uuids":["GPU-manual-n1-0"],` +
		`"idle_since":"2026-03-02T13:00:00Z","reported_at":"2026-03-02T13:30:00Z"}]}`
	goodInventory = `{"node":"n1","agent_version":"1.0","driver_version":"550.54","reported_at":"2026-03-02T13:59:00Z","gpus":[` +
		`{"uuid":"GPU-manual-n1-0","index":0,"minor":0,"model":"NVIDIA A100-SXM4-40GB","memory_mib":40960,"mig":false}]}`
	goodHeartbeat = `{"node":"n1","agent_version":"1.0","sent_at":"2026-03-02T13:59:00Z","schedule_etag":"\"e\"","spool_depth":2,"nvml_ok":true}`
	goodEnroll    = `{"token":"TOKEN","hostname":"n1","agent_version":"1.0"}`
)

// sub replaces old (which must be there) by repl in s.
func sub(t *testing.T, s, old, repl string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("%q not in %s", old, s)
	}
	return strings.Replace(s, old, repl, 1)
}

// nested is a list nested n deep as a record's users.
func nested(n int) string {
	return strings.Replace(goodUsage, `"users":[`+goodUser+`]`, `"users":`+strings.Repeat("[", n)+strings.Repeat("]", n), 1)
}

// manyRecords is a usage batch of n records (invalid ones: only the count matters).
func manyRecords(n int, rec string) string {
	return `{"node":"n1","records":[` + strings.TrimSuffix(strings.Repeat(rec+",", n), ",") + `]}`
}

type badCase struct {
	name, method, path, body string
}

// badAgentInput lists, per route, bodies that must be refused.
func badAgentInput(t *testing.T, f *agentFix) []badCase {
	idle := strings.Replace(goodIdle, "BOOKING", fmt.Sprint(f.booking), 1)
	post := func(name, path, body string) badCase { return badCase{name, http.MethodPost, path, body} }
	put := func(name, body string) badCase { return badCase{name, http.MethodPut, wire.PathInventory, body} }
	u, v, i, hb := wire.PathUsage, wire.PathViolations, wire.PathIdle, wire.PathHeartbeat
	var cases []badCase
	for path, good := range map[string]string{u: goodUsage, v: goodViolations, i: idle, hb: goodHeartbeat} {
		cases = append(cases,
			post(path+" empty", path, ``), post(path+" null", path, `null`), post(path+" array", path, `[`+good+`]`),
			post(path+" garbage", path, `{"node":`), post(path+" trailing garbage", path, good+` x`),
			post(path+" trailing object", path, good+`{}`), post(path+" duplicate key", path, sub(t, good, `{"node":"n1"`, `{"node":"n1","node":"n2"`)),
			post(path+" duplicate key in another case", path, sub(t, good, `{"node":"n1"`, `{"node":"n1","NODE":"n2"`)),
			post(path+" NUL in the node", path, sub(t, good, `"node":"n1"`, `"node":"n1\u0000"`)),
			post(path+" over-long node", path, sub(t, good, `"node":"n1"`, `"node":"`+strings.Repeat("n", 300)+`"`)),
			post(path+" deeply nested unknown field", path, sub(t, good, `{"node":"n1"`, `{"x":`+strings.Repeat("[", 5000)+strings.Repeat("]", 5000)+`,"node":"n1"`)),
			post(path+" long unknown list", path, sub(t, good, `{"node":"n1"`, `{"x":[`+strings.Repeat("0,", 500)+`0],"node":"n1"`)),
			post(path+" over the body limit", path, sub(t, good, `"node":"n1"`, `"node":"`+strings.Repeat(" ", wire.MaxBody)+`"`)),
		)
	}
	return append(cases,
		post("usage: NUL in a user", u, sub(t, goodUsage, `"user":"alice"`, `"user":"ali\u0000ce"`)),
		post("usage: escape in a user", u, sub(t, goodUsage, `"user":"alice"`, `"user":"\u001b[2Jalice"`)),
		post("usage: over-long user", u, sub(t, goodUsage, `"user":"alice"`, `"user":"`+strings.Repeat("a", 257)+`"`)),
		post("usage: uid 2^62", u, sub(t, goodUsage, `"uid":1001`, `"uid":4611686018427387904`)),
		post("usage: uid 1e400", u, sub(t, goodUsage, `"uid":1001`, `"uid":1e400`)),
		post("usage: memory 2^63", u, sub(t, goodUsage, `"mem_total_mib":40960`, `"mem_total_mib":9223372036854775808`)),
		post("usage: memory over 16 TiB", u, sub(t, goodUsage, `"memory_mib":100`, `"memory_mib":17592186044416`)),
		post("usage: processes 2^62", u, sub(t, goodUsage, `"processes":1`, `"processes":4611686018427387904`)),
		post("usage: samples 2^62", u, sub(t, goodUsage, `"samples":6`, `"samples":4611686018427387904`)),
		post("usage: samples as a string", u, sub(t, goodUsage, `"samples":6`, `"samples":"6"`)),
		post("usage: users as an object", u, sub(t, goodUsage, `"users":[`+goodUser+`]`, `"users":`+goodUser)),
		post("usage: minute as a number", u, sub(t, goodUsage, `"minute":"2026-03-02T13:59:00Z"`, `"minute":1772459940`)),
		post("usage: minute in year 0", u, sub(t, goodUsage, `"minute":"2026-03-02T13:59:00Z"`, `"minute":"0000-01-01T00:00:00Z"`)),
		post("usage: duplicate user key", u, sub(t, goodUsage, `{"user":"alice"`, `{"user":"alice","user":"bob"`)),
		post("usage: 65 users", u, sub(t, goodUsage, `"users":[`+goodUser+`]`, `"users":[`+strings.TrimSuffix(strings.Repeat(`{"user":"x"},`, 65), ",")+`]`)),
		post("usage: 1001 records", u, manyRecords(wire.MaxRecordsPerBatch+1, `{}`)),
		post("usage: 16 MB of bad records", u, manyRecords(16<<20/60, `{"gpu_uuid":"x","minute":"x","samples":0,"users":[]}`)),
		post("usage: nested 10000 deep", u, nested(10000)),
		post("violations: NUL in the user", v, sub(t, goodViolations, `"user":"bob"`, `"user":"bob\u0000"`)),
		post("violations: pid 2^62", v, sub(t, goodViolations, `"pid":4242`, `"pid":4611686018427387904`)),
		post("violations: uid 2^62", v, sub(t, goodViolations, `"uid":1002`, `"uid":4611686018427387904`)),
		post("violations: memory 2^62", v, sub(t, goodViolations, `"memory_mib":500`, `"memory_mib":4611686018427387904`)),
		post("violations: NUL in the id", v, sub(t, goodViolations, `"id":"v1"`, `"id":"v\u00001"`)),
		post("violations: 501", v, `{"violations":[`+strings.TrimSuffix(strings.Repeat(`{},`, 501), ",")+`]}`),
		post("idle: NUL in the user", i, sub(t, idle, `"user":"alice"`, `"user":"alice\u0000"`)),
		post("idle: 65 GPUs", i, sub(t, idle, `"gpu_uuids":["GPU-manual-n1-0"]`, `"gpu_uuids":[`+strings.TrimSuffix(strings.Repeat(`"GPU-manual-n1-0",`, 65), ",")+`]`)),
		post("idle: 501 reports", i, `{"reports":[`+strings.TrimSuffix(strings.Repeat(`{},`, 501), ",")+`]}`),
		post("idle: booking id as a float", i, sub(t, idle, fmt.Sprintf(`"booking_id":%d`, f.booking), `"booking_id":1.5`)),
		post("heartbeat: spool depth 2^62", hb, sub(t, goodHeartbeat, `"spool_depth":2`, `"spool_depth":4611686018427387904`)),
		post("heartbeat: NUL in the version", hb, sub(t, goodHeartbeat, `"agent_version":"1.0"`, `"agent_version":"1.0\u0000"`)),
		post("heartbeat: long ETag", hb, sub(t, goodHeartbeat, `"schedule_etag":"\"e\""`, `"schedule_etag":"`+strings.Repeat("e", 101)+`"`)),
		post("heartbeat: nvml_ok as a string", hb, sub(t, goodHeartbeat, `"nvml_ok":true`, `"nvml_ok":"yes"`)),
		put("inventory: index 64", sub(t, goodInventory, `"index":0`, `"index":64`)),
		put("inventory: index 2^62", sub(t, goodInventory, `"index":0`, `"index":4611686018427387904`)),
		put("inventory: minor 300", sub(t, goodInventory, `"minor":0`, `"minor":300`)),
		put("inventory: memory 2^62", sub(t, goodInventory, `"memory_mib":40960`, `"memory_mib":4611686018427387904`)),
		put("inventory: memory over 16 TiB", sub(t, goodInventory, `"memory_mib":40960`, `"memory_mib":16777217`)),
		put("inventory: NUL in the model", sub(t, goodInventory, `"model":"NVIDIA A100-SXM4-40GB"`, `"model":"A100\u0000"`)),
		put("inventory: control in the driver", sub(t, goodInventory, `"driver_version":"550.54"`, `"driver_version":"550\r\n54"`)),
		put("inventory: over-long model", sub(t, goodInventory, `"model":"NVIDIA A100-SXM4-40GB"`, `"model":"`+strings.Repeat("A", 101)+`"`)),
		put("inventory: 65 GPUs", `{"gpus":[`+strings.TrimSuffix(strings.Repeat(`{},`, 65), ",")+`]}`),
		put("inventory: duplicate key in a GPU", sub(t, goodInventory, `"index":0`, `"index":0,"index":1`)),
		put("inventory: trailing garbage", goodInventory+`]`),
		put("inventory: gpus as a string", sub(t, goodInventory, `"gpus":[`, `"gpus":"x","y":[`)),
	)
}

// TestAgentAPIBadInput: every refused body gets one short EINVALID answer
// in the API's error shape, never a 500, and changes nothing stored.
func TestAgentAPIBadInput(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAgentFix(t, d)
			before := f.state()
			for _, c := range badAgentInput(t, f) {
				t.Run(c.name, func(t *testing.T) {
					wantAgentRefusal(t, f.api.Do(c.method, c.path, c.body), models.EINVALID)
					if got := f.state(); got != before {
						t.Errorf("stored state changed:\n%s\nwant\n%s", got, before)
					}
				})
			}
			f.wantGoodAccepted(t)
		})
	}
}

// wantAgentRefusal checks a 4xx with one field error (or none, for a
// refused token) and a body far smaller than any that caused it.
func wantAgentRefusal(t *testing.T, res *webtest.APIResponse, code string) {
	t.Helper()
	if res.Code < 400 || res.Code >= 500 {
		t.Fatalf("got %d, want a 4xx: %.300s", res.Code, res.Body.String())
	}
	var e errorBody
	res.Decode(&e)
	if res.Code < 400 || res.Code >= 500 || e.Error.Code != code || e.Error.RequestID == "" {
		t.Fatalf("got %d %q, want a 4xx %s: %.300s", res.Code, e.Error.Code, code, res.Body.String())
	}
	if code == models.EINVALID && len(e.Error.Fields) > 1 {
		t.Errorf("%d field errors, want at most one: %v", len(e.Error.Fields), e.Error.Fields)
	}
	if res.Body.Len() > 1024 {
		t.Errorf("error body is %d bytes, want at most 1 kB", res.Body.Len())
	}
}

// wantGoodAccepted posts the unchanged bodies: each is accepted, so every
// bad case above differed from an accepted body in what it names.
func (f *agentFix) wantGoodAccepted(t *testing.T) {
	t.Helper()
	idle := strings.Replace(goodIdle, "BOOKING", fmt.Sprint(f.booking), 1)
	for _, c := range []badCase{{"inventory", http.MethodPut, wire.PathInventory, goodInventory},
		{"usage", http.MethodPost, wire.PathUsage, goodUsage}, {"violations", http.MethodPost, wire.PathViolations, goodViolations},
		{"idle", http.MethodPost, wire.PathIdle, idle}, {"heartbeat", http.MethodPost, wire.PathHeartbeat, goodHeartbeat}} {
		if res := f.api.Do(c.method, c.path, c.body); res.Code != http.StatusNoContent {
			t.Errorf("good %s: %d %s", c.name, res.Code, res.Body.String())
		}
	}
	var n int64
	f.env.DB.Gorm.Table("gpu_user_usage_minutes").Where("user_name = ?", "alice").Count(&n)
	if n != 1 {
		t.Errorf("good usage stored %d user rows, want 1", n)
	}
}

// TestAgentAPIBadEnrollAndSchedule: enrolment refuses bad descriptive
// fields with 422 without spending the token, and bad tokens with 401; the
// schedule ignores a body and a huge If-None-Match.
func TestAgentAPIBadEnrollAndSchedule(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAgentFix(t, d)
			cred := f.api.Token
			f.api.Token = ""
			tok := f.enrollToken()
			good := strings.Replace(goodEnroll, "TOKEN", tok, 1)
			before := f.state()
			for name, body := range map[string]string{
				"NUL in the hostname":       sub(t, good, `"hostname":"n1"`, `"hostname":"n1\u0000"`),
				"newline in the version":    sub(t, good, `"agent_version":"1.0"`, `"agent_version":"1.0\nFAKE"`),
				"over-long hostname":        sub(t, good, `"hostname":"n1"`, `"hostname":"`+strings.Repeat("h", 256)+`"`),
				"hostname as a number":      sub(t, good, `"hostname":"n1"`, `"hostname":1`),
				"duplicate token":           sub(t, good, `{"token"`, `{"token":"x","token"`),
				"trailing garbage":          good + `,`,
				"deeply nested":             sub(t, good, `{"token"`, `{"x":`+strings.Repeat("[", 100)+strings.Repeat("]", 100)+`,"token"`),
				"over the enrol body limit": sub(t, good, `"hostname":"n1"`, `"hostname":"`+strings.Repeat(" ", wire.MaxEnrollBody)+`"`),
			} {
				t.Run(name, func(t *testing.T) {
					wantAgentRefusal(t, f.api.Post(wire.PathEnroll, body), models.EINVALID)
					if got := f.state(); got != before {
						t.Errorf("stored state changed:\n%s\nwant\n%s", got, before)
					}
				})
			}
			for name, token := range map[string]string{"NUL in the token": tok + `\u0000`, "over-long token": strings.Repeat("t", 300)} {
				t.Run(name, func(t *testing.T) {
					wantAgentRefusal(t, f.api.Post(wire.PathEnroll, sub(t, good, tok, token)), models.EUNAUTHORIZED)
				})
			}
			if got := f.state(); got != before {
				t.Errorf("stored state changed:\n%s\nwant\n%s", got, before)
			}
			f.api.Token = cred
			f.api.Header.Set("If-None-Match", strings.Repeat(`"x",`, 2000))
			if res := f.api.Do(http.MethodGet, wire.PathSchedule, `{"node":"n1\u0000"}`+strings.Repeat("x", 1000)); res.Code != http.StatusOK {
				t.Errorf("schedule: %d %s", res.Code, res.Body.String())
			}
			f.api.Header.Del("If-None-Match")
			f.api.Token = ""
			if res := f.api.Post(wire.PathEnroll, good); res.Code != http.StatusOK {
				t.Errorf("the token should still work after the refusals: %d %s", res.Code, res.Body.String())
			}
		})
	}
}
