package web_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// apiStart is the API tests' clock at the start of each test: a whole hour.
var apiStart = time.Date(2031, 3, 10, 9, 0, 0, 0, time.UTC)

// testClock is a clock the test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

// apiFixture is a wired server with three users and two nodes:
// gpu01 with four A100 (ids gpus[0..3]) and gpu02 with two H100 (gpus[4..5]).
type apiFixture struct {
	env             *webtest.Env
	clock           *testClock
	ada, bob, admin *models.User
	adaAPI, bobAPI  *webtest.APIClient
	adminAPI        *webtest.APIClient
	gpus            []models.GPU
}

func newAPIFixture(t *testing.T, dialect string, opts ...func(*web.Config)) *apiFixture {
	t.Helper()
	clock := &testClock{now: apiStart}
	env := webtest.New(t, dialect, append([]func(*web.Config){func(c *web.Config) { c.Now = clock.Now }}, opts...)...)
	f := &apiFixture{env: env, clock: clock}
	f.admin = env.AddUser("root@example.org", "Root", true)
	f.ada = env.AddUser("ada@example.org", "Ada", false)
	f.bob = env.AddUser("bob@example.org", "Bob", false)
	f.adaAPI, f.bobAPI, f.adminAPI = env.API(f.ada), env.API(f.bob), env.API(f.admin)
	for _, n := range []struct {
		name, model string
		count       int
	}{{"gpu01", "NVIDIA A100-SXM4-80GB", 4}, {"gpu02", "NVIDIA H100 80GB HBM3", 2}} {
		gpus, err := models.NewNodeGPUs(n.name, n.count, n.model, 81920)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.DB.CreateNode(context.Background(), &models.Node{Name: n.name}, gpus, models.CLIActor); err != nil {
			t.Fatal(err)
		}
	}
	gpus, err := env.DB.GPUs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f.gpus = gpus
	return f
}

// at is apiStart plus h hours, in RFC 3339.
func at(h float64) string { return hoursAfter(h).Format(time.RFC3339) }

func hoursAfter(h float64) time.Time { return apiStart.Add(time.Duration(h * float64(time.Hour))) }

// bookingBody is what the API returns for a booking.
type bookingBody struct {
	ID         int64      `json:"id"`
	UserID     int64      `json:"user_id"`
	UserName   string     `json:"user_name"`
	NodeID     int64      `json:"node_id"`
	Node       string     `json:"node"`
	GPUIDs     []int64    `json:"gpu_ids"`
	GPUUUIDs   []string   `json:"gpu_uuids"`
	StartsAt   time.Time  `json:"starts_at"`
	EndsAt     time.Time  `json:"ends_at"`
	Note       string     `json:"note"`
	Kind       string     `json:"kind"`
	Status     string     `json:"status"`
	Phase      string     `json:"phase"`
	ReleasedAt *time.Time `json:"released_at"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

type errorBody struct {
	Error struct {
		Code      string            `json:"code"`
		Message   string            `json:"message"`
		Fields    map[string]string `json:"fields"`
		Conflicts []models.Conflict `json:"conflicts"`
		RequestID string            `json:"request_id"`
	} `json:"error"`
}

func (f *apiFixture) book(t *testing.T, c *webtest.APIClient, gpus []int64, start, end float64, note string) bookingBody {
	t.Helper()
	res := c.Post("/api/v1/bookings", map[string]any{"gpu_ids": gpus, "starts_at": at(start), "ends_at": at(end), "note": note})
	if res.Code != http.StatusCreated {
		t.Fatalf("book: status %d: %s", res.Code, res.Body.String())
	}
	var b bookingBody
	res.Decode(&b)
	return b
}

// wantError checks status, code and (when given) message and field keys.
func wantError(t *testing.T, res *webtest.APIResponse, status int, code, message string, fields ...string) errorBody {
	t.Helper()
	var e errorBody
	res.Decode(&e)
	if res.Code != status || e.Error.Code != code || e.Error.RequestID == "" {
		t.Fatalf("got %d %q (request id %q), want %d %q: %s", res.Code, e.Error.Code, e.Error.RequestID, status, code, res.Body.String())
	}
	if message != "" && e.Error.Message != message {
		t.Errorf("message = %q, want %q", e.Error.Message, message)
	}
	var got []string
	for k := range e.Error.Fields {
		got = append(got, k)
	}
	if len(fields) > 0 && !sameSet(got, fields) {
		t.Errorf("fields = %v, want %v", e.Error.Fields, fields)
	}
	return e
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}

func TestAPIMe(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAPIFixture(t, d)
			res := f.adaAPI.Get("/api/v1/me")
			var got map[string]any
			res.Decode(&got)
			want := map[string]any{"id": float64(f.ada.ID), "email": "ada@example.org", "name": "Ada", "language": "", "time_zone": "", "is_admin": false}
			if res.Code != http.StatusOK || !reflect.DeepEqual(got, want) {
				t.Errorf("got %d %v, want 200 %v", res.Code, got, want)
			}
			anon := *f.adaAPI
			anon.Token = ""
			wantError(t, anon.Get("/api/v1/me"), http.StatusUnauthorized, models.EUNAUTHORIZED, "The API token is missing, unknown or revoked.")
			anon.Token = "gpb_nope"
			anon.Header.Set("Accept-Language", "zh-CN,zh;q=0.9")
			e := wantError(t, anon.Get("/api/v1/me"), http.StatusUnauthorized, models.EUNAUTHORIZED, "")
			if e.Error.Message == "The API token is missing, unknown or revoked." {
				t.Errorf("message not translated for zh-CN: %q", e.Error.Message)
			}
		})
	}
}

func TestAPIGPUs(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAPIFixture(t, d)
			if err := f.env.DB.SetGPUService(context.Background(), f.gpus[5].ID, false, "fan broken", models.CLIActor); err != nil {
				t.Fatal(err)
			}
			res := f.bobAPI.Get("/api/v1/gpus")
			var got struct {
				GPUs []map[string]any `json:"gpus"`
			}
			res.Decode(&got)
			if res.Code != http.StatusOK || len(got.GPUs) != 6 {
				t.Fatalf("got %d %s", res.Code, res.Body.String())
			}
			g := f.gpus[5]
			want := map[string]any{"id": float64(g.ID), "node_id": float64(g.NodeID), "node": "gpu02", "index": float64(1),
				"uuid": g.UUID, "model": "NVIDIA H100 80GB HBM3", "memory_mib": float64(81920), "in_service": false,
				"parent_id": nil, "mig_profile": "", "mig_slices": float64(0), "weight": float64(1), "split": false}
			if !reflect.DeepEqual(got.GPUs[5], want) {
				t.Errorf("gpu = %v, want %v", got.GPUs[5], want)
			}
			if got.GPUs[0]["node"] != "gpu01" || got.GPUs[0]["in_service"] != true || got.GPUs[0]["index"] != float64(0) {
				t.Errorf("first gpu = %v", got.GPUs[0])
			}
		})
	}
}

func TestAPICreateAndListBookings(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAPIFixture(t, d)
			ids := []int64{f.gpus[1].ID, f.gpus[0].ID}
			b := f.book(t, f.adaAPI, ids, 1, 3, " fine-tune ")
			want := bookingBody{ID: b.ID, UserID: f.ada.ID, UserName: "Ada", NodeID: f.gpus[0].NodeID, Node: "gpu01",
				GPUIDs: []int64{f.gpus[0].ID, f.gpus[1].ID}, GPUUUIDs: []string{f.gpus[0].UUID, f.gpus[1].UUID},
				StartsAt: hoursAfter(1), EndsAt: hoursAfter(3), Note: "fine-tune",
				Kind: "standard", Status: "confirmed", Phase: "upcoming", CreatedAt: apiStart, UpdatedAt: apiStart}
			if !reflect.DeepEqual(b, want) {
				t.Errorf("created\n got %+v\nwant %+v", b, want)
			}
			// A start in another zone is the same instant.
			shanghai := time.FixedZone("CST", 8*3600)
			res := f.bobAPI.Post("/api/v1/bookings", map[string]any{"gpu_ids": []int64{f.gpus[4].ID},
				"starts_at": hoursAfter(2).In(shanghai).Format(time.RFC3339), "ends_at": hoursAfter(4).In(shanghai).Format(time.RFC3339)})
			var bob bookingBody
			res.Decode(&bob)
			if res.Code != http.StatusCreated || !bob.StartsAt.Equal(hoursAfter(2)) || bob.StartsAt.Location() != time.UTC {
				t.Fatalf("bob's booking: %d %s", res.Code, res.Body.String())
			}
			list := func(c *webtest.APIClient, query string) []int64 {
				t.Helper()
				res := c.Get("/api/v1/bookings?" + query)
				var got struct {
					Bookings []bookingBody `json:"bookings"`
				}
				res.Decode(&got)
				if res.Code != http.StatusOK {
					t.Fatalf("list %s: %d %s", query, res.Code, res.Body.String())
				}
				ids := []int64{}
				for _, b := range got.Bookings {
					ids = append(ids, b.ID)
					if len(b.GPUUUIDs) != len(b.GPUIDs) || len(b.GPUUUIDs) == 0 || b.GPUUUIDs[0] == "" {
						t.Errorf("booking %d: gpu_uuids %q for gpu_ids %v", b.ID, b.GPUUUIDs, b.GPUIDs)
					}
				}
				return ids
			}
			q := fmt.Sprintf("from=%s&to=%s", at(0), at(24))
			for _, tt := range []struct {
				name  string
				c     *webtest.APIClient
				query string
				want  []int64
			}{
				{"all, by start", f.bobAPI, q, []int64{b.ID, bob.ID}},
				{"mine", f.bobAPI, q + "&mine=true", []int64{bob.ID}},
				{"mine=false", f.bobAPI, q + "&mine=false", []int64{b.ID, bob.ID}},
				{"one gpu", f.adaAPI, q + fmt.Sprintf("&gpu=%d", f.gpus[4].ID), []int64{bob.ID}},
				{"touching range is outside", f.adaAPI, fmt.Sprintf("from=%s&to=%s", at(4), at(5)), []int64{}},
				{"zone offsets in the query", f.adaAPI, "from=2031-03-10T18:30:00%2B08:00&to=2031-03-10T19:30:00%2B08:00", []int64{b.ID, bob.ID}},
			} {
				t.Run(tt.name, func(t *testing.T) {
					if got := list(tt.c, tt.query); !reflect.DeepEqual(got, tt.want) {
						t.Errorf("got %v, want %v", got, tt.want)
					}
				})
			}
		})
	}
}

func TestAPIListBookingsBadQuery(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAPIFixture(t, d)
			for _, tt := range []struct {
				name, query string
				fields      []string
			}{
				{"nothing", "", []string{"from", "to"}},
				{"no zone", "from=2031-03-10T09:00:00&to=" + at(2), []string{"from"}},
				{"garbage", "from=yesterday&to=" + at(2), []string{"from"}},
				{"to before from", "from=" + at(3) + "&to=" + at(2), []string{"to"}},
				{"longer than 62 days", "from=" + at(0) + "&to=" + at(62*24+1), []string{"to"}},
				{"bad gpu and mine", "from=" + at(0) + "&to=" + at(2) + "&gpu=-1&mine=yes", []string{"gpu", "mine"}},
			} {
				t.Run(tt.name, func(t *testing.T) {
					wantError(t, f.adaAPI.Get("/api/v1/bookings?"+tt.query), http.StatusUnprocessableEntity, models.EINVALID, "Some values are not valid.", tt.fields...)
				})
			}
		})
	}
}

func TestAPIConflictInBothLanguages(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAPIFixture(t, d)
			a := f.book(t, f.adaAPI, []int64{f.gpus[0].ID, f.gpus[1].ID}, 1, 3, "")
			body := map[string]any{"gpu_ids": []int64{f.gpus[1].ID, f.gpus[2].ID}, "starts_at": at(2), "ends_at": at(4)}
			e := wantError(t, f.bobAPI.Post("/api/v1/bookings", body), http.StatusConflict, models.ECONFLICT, "The GPUs are already booked at that time.")
			want := []models.Conflict{{GPUID: f.gpus[1].ID, GPUIndex: 1, BookingID: a.ID, UserName: "Ada", StartsAt: hoursAfter(1), EndsAt: hoursAfter(3)}}
			if !reflect.DeepEqual(e.Error.Conflicts, want) {
				t.Errorf("conflicts = %+v, want %+v", e.Error.Conflicts, want)
			}
			zh := *f.bobAPI
			zh.Header = http.Header{"Accept-Language": {"zh-CN"}}
			e = wantError(t, zh.Post("/api/v1/bookings", body), http.StatusConflict, models.ECONFLICT, "该时段这些 GPU 已被预订（冲突 1 个）。")
			if !reflect.DeepEqual(e.Error.Conflicts, want) {
				t.Errorf("zh-CN conflicts = %+v", e.Error.Conflicts)
			}
			// Touching ranges are fine.
			f.book(t, f.bobAPI, []int64{f.gpus[1].ID}, 3, 4, "")
		})
	}
}
