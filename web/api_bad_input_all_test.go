package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
)

// TestAPIBadInputEveryRoute sends every /api/v1 route that changes
// something text with NUL and control characters, over-long strings, wrong
// types, huge numbers and bad ids, deeply nested and oversized bodies. Each
// answer is a 4xx in the documented error shape, and nothing is stored.
func TestAPIBadInputEveryRoute(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			// A rate limit high enough that every call reaches its handler.
			f := newAPIFixture(t, d, func(c *web.Config) { c.APIRate = web.Rate{PerMinute: 1e6, Burst: 1e6} })
			var bk bookingBody
			f.adaAPI.Post("/api/v1/bookings", fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"%s"}`, f.gpus[0].ID, at(1), at(3))).Decode(&bk)
			if bk.ID == 0 {
				t.Fatal("the booking to extend was not made")
			}
			b := itoa(bk.ID)
			g := f.gpus[1].ID
			book := func(extra string) string {
				return fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"%s"%s}`, g, at(5), at(6), extra)
			}
			request := func(extra string) string {
				return book(`,"purpose":"p","urgency":"u","plan":"p","give_back":"g"` + extra)
			}
			nested := strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat(`}`, 10000)
			deepArray := fmt.Sprintf(`{"gpu_ids":%s%d%s,"starts_at":"%s","ends_at":"%s"}`, strings.Repeat("[", 5000), g, strings.Repeat("]", 5000), at(5), at(6))
			huge := `{"note":"` + strings.Repeat("x", 2<<20) + `"}`
			type call struct{ method, path, body string }
			var calls []call
			for _, s := range []struct{ name, value string }{
				{"NUL", `"a\u0000b"`}, {"raw NUL", "\"a\x00b\""}, {"escape", `"a\u001bb"`}, {"lone CR", `"a\rb"`},
				{"invalid UTF-8", "\"a\xff\xfeb\""},
				{"over-long", `"` + strings.Repeat("界", 5000) + `"`},
				{"number", `1e999`}, {"object", `{"$ne":1}`}, {"array", `["x"]`}, {"bool", `true`},
			} {
				calls = append(calls,
					call{"POST", "/api/v1/bookings", book(`,"note":` + s.value)},
					call{"POST", "/api/v1/requests", request(`,"note":` + s.value)},
					call{"POST", "/api/v1/requests", strings.Replace(request(""), `"purpose":"p"`, `"purpose":`+s.value, 1)},
					call{"POST", "/api/v1/requests", strings.Replace(request(""), `"give_back":"g"`, `"give_back":`+s.value, 1)},
					call{"POST", "/api/v1/bookings/" + b + "/extend", `{"ends_at":` + s.value + `}`},
					call{"POST", "/api/v1/bookings", strings.Replace(book(""), `"starts_at":"`+at(5)+`"`, `"starts_at":`+s.value, 1)},
				)
			}
			for _, n := range []string{"99999999999999999999999", "-1", "0", "1.5", "1e308", `"1"`, "null"} {
				calls = append(calls,
					call{"POST", "/api/v1/bookings", fmt.Sprintf(`{"gpu_ids":[%s],"starts_at":"%s","ends_at":"%s"}`, n, at(5), at(6))},
					call{"POST", "/api/v1/requests", strings.Replace(request(""), fmt.Sprintf("[%d]", g), "["+n+"]", 1)},
					call{"POST", "/api/v1/requests", request(`,"preempt":` + n)},
				)
			}
			for _, id := range []string{"99999999999999999999", "-1", "0", "x", "1e3", "%00"} {
				calls = append(calls,
					call{"POST", "/api/v1/bookings/" + id + "/extend", `{"ends_at":"` + at(4) + `"}`},
					call{"POST", "/api/v1/bookings/" + id + "/release", ``},
					call{"DELETE", "/api/v1/bookings/" + id, ``},
				)
			}
			for _, body := range []string{nested, deepArray, huge, `{"a":` + strings.Repeat("[", 100000), "\x00", `{"ends_at":"` + at(4) + `"}` + "\x00"} {
				calls = append(calls,
					call{"POST", "/api/v1/bookings", body},
					call{"POST", "/api/v1/requests", body},
					call{"POST", "/api/v1/bookings/" + b + "/extend", body},
				)
			}
			before := snapshot(t, f.env)
			for _, c := range calls {
				res := f.adaAPI.Do(c.method, c.path, c.body)
				var e errorBody
				err := json.Unmarshal(res.Body.Bytes(), &e)
				if res.Code < 400 || res.Code >= 500 || err != nil || e.Error.Code == "" || e.Error.Message == "" || e.Error.RequestID == "" {
					t.Errorf("%s %s %.80q: %d %.200s", c.method, c.path, c.body, res.Code, res.Body.String())
				}
			}
			if after := snapshot(t, f.env); after != before {
				t.Error("bad API calls changed the database")
			}
		})
	}
}
