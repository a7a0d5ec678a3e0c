package handlers

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

func TestParseBookingRequest(t *testing.T) {
	start := time.Date(2031, 3, 10, 2, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		body   string
		want   models.NewBooking
		fields map[string]string // field → message key
	}{
		{"fine, zone converted to UTC, note trimmed",
			`{"gpu_ids":[3,1],"starts_at":"2031-03-10T10:00:00+08:00","ends_at":"2031-03-10T04:30:00Z","note":" run "}`,
			models.NewBooking{GPUIDs: []int64{3, 1}, StartsAt: start, EndsAt: start.Add(150 * time.Minute), Note: "run"}, nil},
		{"whitespace around is fine", " \n{\"gpu_ids\":[1],\"starts_at\":\"2031-03-10T02:00:00Z\",\"ends_at\":\"2031-03-10T03:00:00Z\"}\n",
			models.NewBooking{GPUIDs: []int64{1}, StartsAt: start, EndsAt: start.Add(time.Hour)}, nil},
		{"empty", ``, models.NewBooking{}, map[string]string{"body": "err.body_required"}},
		{"not an object", `"x"`, models.NewBooking{}, map[string]string{"body": "err.json_invalid"}},
		{"trailing", `{}{}`, models.NewBooking{}, map[string]string{"body": "err.json_trailing"}},
		{"too big", `{"note":"` + strings.Repeat("x", MaxAPIBody) + `"}`, models.NewBooking{}, map[string]string{"body": "err.body_too_large"}},
		{"every field wrong", `{"gpu_ids":[1,1],"starts_at":"2031-03-10 10:00","ends_at":"soon","note":7,"who":1}`, models.NewBooking{},
			map[string]string{"gpu_ids": "err.gpu_duplicate", "starts_at": "err.time_zone_missing", "ends_at": "err.time_invalid",
				"note": "err.json_type", "who": "err.field_unknown"}},
		{"missing", `{}`, models.NewBooking{},
			map[string]string{"gpu_ids": "err.gpus_required", "starts_at": "err.start_required", "ends_at": "err.end_required"}},
		{"nulls", `{"gpu_ids":null,"starts_at":null,"ends_at":null,"note":null}`, models.NewBooking{},
			map[string]string{"gpu_ids": "err.json_type", "starts_at": "err.json_type", "ends_at": "err.json_type", "note": "err.json_type"}},
		{"bad ids", `{"gpu_ids":[0],"starts_at":"2031-03-10T02:00:00Z","ends_at":"2031-03-10T03:00:00Z"}`, models.NewBooking{},
			map[string]string{"gpu_ids": "err.gpu_id_invalid"}},
		{"repeated key", `{"gpu_ids":[1],"gpu_ids":[2],"starts_at":"2031-03-10T02:00:00Z","ends_at":"2031-03-10T03:00:00Z"}`, models.NewBooking{},
			map[string]string{"gpu_ids": "err.field_duplicate"}},
		{"many unknown fields: five reported", `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"gpu_ids":[1],"starts_at":"2031-03-10T02:00:00Z","ends_at":"2031-03-10T03:00:00Z"}`,
			models.NewBooking{}, map[string]string{"a": "err.field_unknown", "b": "err.field_unknown", "c": "err.field_unknown", "d": "err.field_unknown", "e": "err.field_unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseBookingRequest([]byte(tt.body))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("request = %+v, want %+v", got, tt.want)
			}
			var fields map[string]string
			if err != nil {
				e := models.AsError(err)
				if e.Code != models.EINVALID || e.Msg.Key != "err.invalid" {
					t.Errorf("error = %v, want EINVALID err.invalid", err)
				}
				fields = map[string]string{}
				for k, m := range e.Fields {
					fields[k] = m.Key
				}
			}
			if !reflect.DeepEqual(fields, tt.fields) {
				t.Errorf("fields = %v, want %v", fields, tt.fields)
			}
		})
	}
}

// FuzzParseBookingRequest checks that no body makes the parser panic, and
// that it either refuses the body with EINVALID field errors or returns a
// request whose shape the validator accepts: the only problems left for
// ValidateNewBooking are the range's (end before start, too short, too long).
func FuzzParseBookingRequest(f *testing.F) {
	for _, s := range []string{
		`{"gpu_ids":[1,2],"starts_at":"2031-03-10T10:00:00+08:00","ends_at":"2031-03-10T12:00:00+08:00","note":"x"}`,
		`{"gpu_ids":[1],"starts_at":"2031-03-10T10:00:00Z","ends_at":"2031-03-10T09:00:00Z"}`,
		`{"gpu_ids":[1,1],"starts_at":"2031-03-10T10:00:00","ends_at":"x"}`,
		`{"gpu_ids":["1"],"starts_at":1,"ends_at":null,"note":[]}`,
		`{"a":{"b":[1,{"c":2}]},"gpu_ids":[9223372036854775807]}`,
		`{"note":"\ud800\udc00\u0000"}`, `[]`, `null`, `{}{}`, ``, `{"gpu_ids":[1e3]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParseBookingRequest(body)
		if err != nil {
			e := models.AsError(err)
			if e.Code != models.EINVALID || len(e.Fields) == 0 {
				t.Fatalf("error %v: want EINVALID with field errors", err)
			}
			return
		}
		gpus := map[int64]models.GPU{}
		for _, id := range req.GPUIDs {
			gpus[id] = models.GPU{ID: id, NodeID: 1, InService: true}
		}
		_, err = models.ValidateNewBooking(req, gpus, models.DefaultBookingLimits, req.StartsAt)
		if err == nil {
			return
		}
		e := models.AsError(err)
		for k := range e.Fields {
			if k != "ends_at" {
				t.Fatalf("parsed %+v, but the validator refuses %s: %v", req, k, err)
			}
		}
	})
}

// FuzzValidateNewBooking checks the validator never panics and always
// answers a valid booking or an EINVALID with fields, on arbitrary values.
func FuzzValidateNewBooking(f *testing.F) {
	f.Add(int64(1), int64(2), int64(1925000000), int64(3600), "note", int64(1925000000))
	f.Add(int64(-1), int64(1), int64(-62135596800), int64(-1), "\xff", int64(0))
	f.Fuzz(func(t *testing.T, id1, id2, start, length int64, note string, now int64) {
		gpus := map[int64]models.GPU{1: {ID: 1, NodeID: 1, InService: true}, 2: {ID: 2, NodeID: 1, InService: true}}
		req := models.NewBooking{GPUIDs: []int64{id1, id2}, StartsAt: time.Unix(start, 0), EndsAt: time.Unix(start, 0).Add(time.Duration(length) * time.Second), Note: note}
		got, err := models.ValidateNewBooking(req, gpus, models.DefaultBookingLimits, time.Unix(now, 0))
		if err != nil {
			if e := models.AsError(err); e.Code != models.EINVALID || len(e.Fields) == 0 {
				t.Fatalf("error %v: want EINVALID with fields", err)
			}
			return
		}
		if !got.EndsAt.After(got.StartsAt) || got.EndsAt.Sub(got.StartsAt) > models.DefaultBookingLimits.MaxLength || len(got.GPUIDs) != 2 {
			t.Fatalf("accepted %+v", got)
		}
	})
}
