package web_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

func TestAPICancel(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAPIFixture(t, d)
			b := f.book(t, f.adaAPI, []int64{f.gpus[0].ID, f.gpus[1].ID}, 1, 3, "")
			path := fmt.Sprintf("/api/v1/bookings/%d", b.ID)
			wantError(t, f.bobAPI.Do(http.MethodDelete, path, nil), http.StatusForbidden, models.EFORBIDDEN,
				"This is someone else's booking: only its owner or an admin may change it.")
			wantError(t, f.adaAPI.Do(http.MethodDelete, "/api/v1/bookings/999999", nil), http.StatusNotFound, models.ENOTFOUND, "The booking does not exist.")
			wantError(t, f.adaAPI.Do(http.MethodDelete, "/api/v1/bookings/x", nil), http.StatusNotFound, models.ENOTFOUND, "")

			res := f.adaAPI.Do(http.MethodDelete, path, nil)
			var got bookingBody
			res.Decode(&got)
			want := b
			want.Status, want.Phase = "cancelled", "cancelled"
			if res.Code != http.StatusOK || !reflect.DeepEqual(got, want) {
				t.Errorf("cancel: %d\n got %+v\nwant %+v", res.Code, got, want)
			}
			wantError(t, f.adaAPI.Do(http.MethodDelete, path, nil), http.StatusUnprocessableEntity, models.EINVALID,
				"This booking is cancelled and can no longer change.")
			f.book(t, f.bobAPI, []int64{f.gpus[1].ID}, 1, 3, "") // free again

			active := f.book(t, f.adaAPI, []int64{f.gpus[2].ID}, 0, 2, "")
			f.clock.Set(hoursAfter(0.5))
			zh := *f.adaAPI
			zh.Header = http.Header{"Accept-Language": {"zh-CN"}}
			wantError(t, zh.Do(http.MethodDelete, fmt.Sprintf("/api/v1/bookings/%d", active.ID), nil), http.StatusUnprocessableEntity, models.EINVALID,
				"该预订已经开始：请提前释放，而不是取消。")
		})
	}
}

func TestAPIRelease(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAPIFixture(t, d)
			b := f.book(t, f.adaAPI, []int64{f.gpus[0].ID}, 1, 5, "")
			path := fmt.Sprintf("/api/v1/bookings/%d/release", b.ID)
			wantError(t, f.adaAPI.Post(path, nil), http.StatusUnprocessableEntity, models.EINVALID,
				"This booking has not started yet: cancel it instead of releasing it.")
			f.clock.Set(hoursAfter(2).Add(250 * time.Millisecond))
			wantError(t, f.bobAPI.Post(path, nil), http.StatusForbidden, models.EFORBIDDEN, "")

			res := f.adaAPI.Post(path, nil)
			var got bookingBody
			res.Decode(&got)
			end := hoursAfter(2)
			want := b
			want.EndsAt, want.ReleasedAt, want.Phase, want.UpdatedAt = end, &end, "past", end
			if res.Code != http.StatusOK || !reflect.DeepEqual(got, want) {
				t.Errorf("release: %d\n got %+v\nwant %+v", res.Code, got, want)
			}
			wantError(t, f.adaAPI.Post(path, nil), http.StatusUnprocessableEntity, models.EINVALID, "This booking is over; past bookings are read-only.")
			// The GPU is free at once for someone else.
			f.book(t, f.bobAPI, []int64{f.gpus[0].ID}, 2, 4, "")
		})
	}
}

func TestAPIExtend(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAPIFixture(t, d)
			b := f.book(t, f.adaAPI, []int64{f.gpus[0].ID, f.gpus[1].ID}, 0, 2, "")
			f.book(t, f.bobAPI, []int64{f.gpus[1].ID}, 7.5, 9, "")
			path := fmt.Sprintf("/api/v1/bookings/%d/extend", b.ID)
			f.clock.Set(hoursAfter(1))

			res := f.adaAPI.Post(path, map[string]string{"ends_at": at(4)})
			var got bookingBody
			res.Decode(&got)
			want := b
			want.EndsAt, want.Phase, want.UpdatedAt = hoursAfter(4), "active", hoursAfter(1)
			if res.Code != http.StatusOK || !reflect.DeepEqual(got, want) {
				t.Errorf("extend: %d\n got %+v\nwant %+v", res.Code, got, want)
			}
			e := wantError(t, f.adaAPI.Post(path, map[string]string{"ends_at": at(10)}), http.StatusConflict, models.ECONFLICT,
				"The GPUs are booked by someone else later on; this booking can be extended until 2031-03-10 16:30 UTC.")
			if len(e.Error.Conflicts) != 1 || e.Error.Conflicts[0].UserName != "Bob" || !e.Error.Conflicts[0].StartsAt.Equal(hoursAfter(7.5)) {
				t.Errorf("conflicts = %+v", e.Error.Conflicts)
			}
			zh := *f.adaAPI
			zh.Header = http.Header{"Accept-Language": {"zh-CN"}}
			wantError(t, zh.Post(path, map[string]string{"ends_at": at(10)}), http.StatusConflict, models.ECONFLICT,
				"这些 GPU 之后已被他人预订；该预订最多可延长到 2031-03-10 16:30 UTC。")
			wantError(t, f.adaAPI.Post(path, map[string]string{"ends_at": at(3)}), http.StatusUnprocessableEntity, models.EINVALID, "", "ends_at")
			wantError(t, f.adaAPI.Post(path, map[string]string{"ends_at": "2031-03-10T15:00:00"}), http.StatusUnprocessableEntity, models.EINVALID, "", "ends_at")
			wantError(t, f.adaAPI.Post(path, `{"ends_at":"`+at(5)+`","starts_at":"`+at(0)+`"}`), http.StatusUnprocessableEntity, models.EINVALID, "", "starts_at")
			wantError(t, f.bobAPI.Post(path, map[string]string{"ends_at": at(5)}), http.StatusForbidden, models.EFORBIDDEN, "")
			f.book(t, f.bobAPI, []int64{f.gpus[0].ID}, 4, 6, "")
			wantError(t, f.adaAPI.Post(path, map[string]string{"ends_at": at(5)}), http.StatusConflict, models.ECONFLICT,
				"The GPUs are booked by someone else right after this booking, so it cannot be extended.")
		})
	}
}

// TestAPIAdminActsOnOthers checks that admins may cancel, release and
// extend anyone's booking, and that the audit log names both people.
func TestAPIAdminActsOnOthers(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAPIFixture(t, d)
			up := f.book(t, f.adaAPI, []int64{f.gpus[0].ID}, 1, 2, "")
			act := f.book(t, f.adaAPI, []int64{f.gpus[1].ID}, 0, 2, "")
			rel := f.book(t, f.adaAPI, []int64{f.gpus[2].ID}, 0, 2, "")
			f.clock.Set(hoursAfter(0.5))
			for _, tt := range []struct {
				action, method, path string
				body                 any
			}{
				{models.AuditBookingCancel, http.MethodDelete, fmt.Sprintf("/api/v1/bookings/%d", up.ID), nil},
				{models.AuditBookingExtend, http.MethodPost, fmt.Sprintf("/api/v1/bookings/%d/extend", act.ID), map[string]string{"ends_at": at(3)}},
				{models.AuditBookingRelease, http.MethodPost, fmt.Sprintf("/api/v1/bookings/%d/release", rel.ID), nil},
			} {
				t.Run(tt.action, func(t *testing.T) {
					wantError(t, f.bobAPI.Do(tt.method, tt.path, tt.body), http.StatusForbidden, models.EFORBIDDEN, "")
					if res := f.adminAPI.Do(tt.method, tt.path, tt.body); res.Code != http.StatusOK {
						t.Fatalf("admin: %d %s", res.Code, res.Body.String())
					}
					evs, err := f.env.DB.AuditEvents(context.Background(), models.AuditFilter{Action: tt.action})
					if err != nil || len(evs) != 1 {
						t.Fatalf("audit: %v %v", evs, err)
					}
					ev := evs[0]
					if ev.ActorID == nil || *ev.ActorID != f.admin.ID || ev.TargetType != "booking" ||
						!strings.Contains(ev.Details, fmt.Sprintf(`"user_id":%d`, f.ada.ID)) || !strings.Contains(ev.Details, `"as_admin":true`) {
						t.Errorf("audit event = %+v", ev)
					}
				})
			}
		})
	}
}

func TestAPISlots(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAPIFixture(t, d)
			f.clock.Set(hoursAfter(0).Add(10 * time.Minute)) // rounds up to 09:30
			f.book(t, f.bobAPI, []int64{f.gpus[4].ID}, 1, 3, "")
			res := f.adaAPI.Get("/api/v1/slots?gpus=2&hours=1.5&model=nvidia+h100+80gb+hbm3")
			var got struct {
				Slots []map[string]any `json:"slots"`
			}
			res.Decode(&got)
			want := []map[string]any{
				{"node_id": float64(f.gpus[4].NodeID), "node": "gpu02", "model": "NVIDIA H100 80GB HBM3",
					"gpu_ids": []any{float64(f.gpus[4].ID), float64(f.gpus[5].ID)}, "starts_at": "2031-03-10T12:00:00Z", "ends_at": "2031-03-10T13:30:00Z"},
			}
			if res.Code != http.StatusOK || !reflect.DeepEqual(got.Slots, want) {
				t.Errorf("slots: %d\n got %v\nwant %v", res.Code, got.Slots, want)
			}
			res = f.adaAPI.Get("/api/v1/slots?gpus=1&hours=2&after=" + at(5))
			res.Decode(&got)
			if res.Code != http.StatusOK || len(got.Slots) != 2 || got.Slots[0]["starts_at"] != "2031-03-10T14:00:00Z" || got.Slots[0]["node"] != "gpu01" {
				t.Errorf("slots after: %d %s", res.Code, res.Body.String())
			}
			for _, tt := range []struct {
				name, query string
				fields      []string
			}{
				{"nothing", "", []string{"gpus", "hours"}},
				{"zero and negative", "gpus=0&hours=-1", []string{"gpus", "hours"}},
				{"NaN hours", "gpus=1&hours=NaN", []string{"hours"}},
				{"huge hours", "gpus=1&hours=1e300", []string{"hours"}},
				{"too many GPUs", "gpus=65&hours=1", []string{"gpus"}},
				{"unknown model", "gpus=1&hours=1&model=V100", []string{"model"}},
				{"after without zone", "gpus=1&hours=1&after=2031-03-10T10:00:00", []string{"after"}},
			} {
				t.Run(tt.name, func(t *testing.T) {
					wantError(t, f.adaAPI.Get("/api/v1/slots?"+tt.query), http.StatusUnprocessableEntity, models.EINVALID, "", tt.fields...)
				})
			}
		})
	}
}
