package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestAPIBadBookingInput sends every kind of bad booking request and checks
// that each gets a clear 4xx, that nothing is written and that none is a 500.
func TestAPIBadBookingInput(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAPIFixture(t, d)
			g0, g1, h0 := f.gpus[0].ID, f.gpus[1].ID, f.gpus[4].ID
			ok := func(extra string) string {
				return fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"%s"%s}`, g0, at(1), at(2), extra)
			}
			tests := []struct {
				name   string
				body   string
				status int
				fields []string
			}{
				{"empty body", ``, 422, []string{"body"}},
				{"garbage", `not json`, 422, []string{"body"}},
				{"array", `[1,2]`, 422, []string{"body"}},
				{"null", `null`, 422, []string{"body"}},
				{"truncated", `{"gpu_ids":[1`, 422, []string{"body"}},
				{"trailing data", ok(``) + `{}`, 422, []string{"body"}},
				{"trailing garbage", ok(``) + ` x`, 422, []string{"body"}},
				{"garbage times", fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"tomorrow","ends_at":"2031-13-40T99:00:00Z"}`, g0), 422, []string{"starts_at", "ends_at"}},
				{"times without a zone", fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"2031-03-10T10:00:00","ends_at":"2031-03-10T11:00"}`, g0), 422, []string{"starts_at", "ends_at"}},
				{"times as numbers", fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":1925000000,"ends_at":true}`, g0), 422, []string{"starts_at", "ends_at"}},
				{"year zero", fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"0000-01-01T00:00:00Z","ends_at":"%s"}`, g0, at(2)), 422, []string{"starts_at"}},
				{"end before start", fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"%s"}`, g0, at(3), at(2)), 422, []string{"ends_at"}},
				{"shorter than a slot", fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"%s"}`, g0, at(1), at(1.25)), 422, []string{"ends_at"}},
				{"huge range", fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"9999-12-31T23:59:59Z"}`, g0, at(1)), 422, []string{"ends_at"}},
				{"far ahead", fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"2099-01-01T00:00:00Z","ends_at":"2099-01-01T01:00:00Z"}`, g0), 422, []string{"starts_at"}},
				{"in the past", fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"%s"}`, g0, at(-2), at(-1)), 422, []string{"starts_at"}},
				{"unknown gpu", fmt.Sprintf(`{"gpu_ids":[999999],"starts_at":"%s","ends_at":"%s"}`, at(1), at(2)), 422, []string{"gpu_ids"}},
				{"duplicate gpu", fmt.Sprintf(`{"gpu_ids":[%d,%d],"starts_at":"%s","ends_at":"%s"}`, g0, g0, at(1), at(2)), 422, []string{"gpu_ids"}},
				{"gpus of two nodes", fmt.Sprintf(`{"gpu_ids":[%d,%d],"starts_at":"%s","ends_at":"%s"}`, g1, h0, at(1), at(2)), 422, []string{"gpu_ids"}},
				{"no gpus", fmt.Sprintf(`{"gpu_ids":[],"starts_at":"%s","ends_at":"%s"}`, at(1), at(2)), 422, []string{"gpu_ids"}},
				{"gpu ids as strings", fmt.Sprintf(`{"gpu_ids":["%d"],"starts_at":"%s","ends_at":"%s"}`, g0, at(1), at(2)), 422, []string{"gpu_ids"}},
				{"gpu ids as floats", fmt.Sprintf(`{"gpu_ids":[%d.5],"starts_at":"%s","ends_at":"%s"}`, g0, at(1), at(2)), 422, []string{"gpu_ids"}},
				{"gpu ids overflow", fmt.Sprintf(`{"gpu_ids":[99999999999999999999999],"starts_at":"%s","ends_at":"%s"}`, at(1), at(2)), 422, []string{"gpu_ids"}},
				{"gpu_ids not an array", fmt.Sprintf(`{"gpu_ids":%d,"starts_at":"%s","ends_at":"%s"}`, g0, at(1), at(2)), 422, []string{"gpu_ids"}},
				{"too many gpus", fmt.Sprintf(`{"gpu_ids":[%s],"starts_at":"%s","ends_at":"%s"}`, strings.Repeat("1,", 64)+"1", at(1), at(2)), 422, []string{"gpu_ids"}},
				{"note as a number", ok(`,"note":42`), 422, []string{"note"}},
				{"note null", ok(`,"note":null`), 422, []string{"note"}},
				{"note over 500 characters", ok(`,"note":"` + strings.Repeat("é", 501) + `"`), 422, []string{"note"}},
				{"100 kB note", ok(`,"note":"` + strings.Repeat("x", 100<<10) + `"`), 422, []string{"body"}},
				{"unknown field", ok(`,"user_id":1`), 422, []string{"user_id"}},
				{"field in another case", ok(`,"Note":"x"`), 422, []string{"Note"}},
				{"repeated field", ok(`,"note":"a","note":"b"`), 422, []string{"note"}},
				{"everything missing", `{}`, 422, []string{"gpu_ids", "starts_at", "ends_at"}},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					e := wantError(t, f.adaAPI.Post("/api/v1/bookings", tt.body), tt.status, models.EINVALID, "", tt.fields...)
					for k, m := range e.Error.Fields {
						if m == "" || strings.HasPrefix(m, "err.") {
							t.Errorf("field %s has no translated message: %q", k, m)
						}
					}
				})
			}
			wantNoBookings(t, f)
		})
	}
}

func wantNoBookings(t *testing.T, f *apiFixture) {
	t.Helper()
	var n int64
	if err := f.env.DB.Gorm.Table("bookings").Count(&n).Error; err != nil || n != 0 {
		t.Errorf("bookings in the database = %d (%v), want 0", n, err)
	}
	var links int64
	if err := f.env.DB.Gorm.Table("booking_gpus").Count(&links).Error; err != nil || links != 0 {
		t.Errorf("booking_gpus rows = %d (%v), want 0", links, err)
	}
}

// TestAPIBodyOverTheServerLimit checks a body over the server's own 1 MB
// limit: still a clear JSON error, not a dropped connection or a 500.
func TestAPIBodyOverTheServerLimit(t *testing.T) {
	t.Parallel()
	f := newAPIFixture(t, "sqlite")
	res := f.adaAPI.Post("/api/v1/bookings", `{"note":"`+strings.Repeat("x", 2<<20)+`"}`)
	if res.Code >= 500 || res.Code < 400 {
		t.Fatalf("status %d: %.200s", res.Code, res.Body.String())
	}
	wantNoBookings(t, f)
}
