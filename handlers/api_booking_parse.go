package handlers

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/api"
)

// MaxAPIBody bounds a JSON request body. A booking request is a few hundred
// bytes; 64 kB leaves room for a long note and nothing else.
const MaxAPIBody = 64 << 10

// The fields each body may have: those its models/api type declares, so
// that the parser accepts what the document lists and nothing else.
var (
	newBookingFields = api.FieldNames(api.NewBooking{})
	extendFields     = api.FieldNames(api.Extend{})
	newRequestFields = api.FieldNames(api.NewRequest{})
)

// maxReportedFields bounds how many unknown fields one answer lists, so that
// a hostile body cannot make the error larger than itself.
const maxReportedFields = 5

// ParseBookingRequest reads the body of POST /api/v1/bookings strictly:
// one JSON object with gpu_ids, starts_at, ends_at and an optional note;
// unknown or repeated fields, wrong JSON types, times without a zone,
// trailing data and bodies over MaxAPIBody are refused. Every problem comes
// back as a field error of one EINVALID *models.Error, so a script learns
// everything that is wrong at once, and no input can cause a 500. The
// default limits bound the note; the store validates the rest.
func ParseBookingRequest(body []byte) (models.NewBooking, error) {
	return parseBookingRequest(body, models.DefaultBookingLimits)
}

func parseBookingRequest(body []byte, lim models.BookingLimits) (models.NewBooking, error) {
	fe := models.FieldErrors{}
	fields, ok := parseObject(body, fe, newBookingFields...)
	if !ok {
		return models.NewBooking{}, fe.Err()
	}
	req := models.NewBooking{
		GPUIDs:   parseGPUIDs(fields["gpu_ids"], lim, fe),
		StartsAt: parseTimeField(fields, "starts_at", "err.start_required", fe),
		EndsAt:   parseTimeField(fields, "ends_at", "err.end_required", fe),
		Note:     parseNote(fields["note"], lim, fe),
	}
	if err := fe.Err(); err != nil {
		return models.NewBooking{}, err
	}
	return req, nil
}

// parseExtendRequest reads the body of POST /api/v1/bookings/:id/extend.
func parseExtendRequest(body []byte) (time.Time, error) {
	fe := models.FieldErrors{}
	fields, ok := parseObject(body, fe, extendFields...)
	if !ok {
		return time.Time{}, fe.Err()
	}
	end := parseTimeField(fields, "ends_at", "err.end_required", fe)
	return end, fe.Err()
}

// parseObject splits a JSON object into its raw fields, after checkJSON
// has refused repeated keys (encoding/json would silently keep the last),
// trailing data and anything but one object. ok is false when the body is
// refused; unknown fields are recorded in fe.
func parseObject(body []byte, fe models.FieldErrors, allowed ...string) (map[string]json.RawMessage, bool) {
	switch {
	case len(body) > MaxAPIBody:
		fe.Add("body", models.M("err.body_too_large"))
		return nil, false
	case len(bytes.TrimSpace(body)) == 0:
		fe.Add("body", models.M("err.body_required"))
		return nil, false
	}
	if p := checkJSON(body, apiShape); p != nil {
		switch p.fault {
		case faultDuplicate:
			fe.Add(p.field, models.M("err.field_duplicate"))
		case faultTrailing:
			fe.Add("body", models.M("err.json_trailing"))
		default:
			fe.Add("body", models.M("err.json_invalid"))
		}
		return nil, false
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(body, &fields); err != nil {
		fe.Add("body", models.M("err.json_invalid"))
		return nil, false
	}
	var unknown []string
	for key := range fields {
		if !slices.Contains(allowed, key) {
			unknown = append(unknown, key)
		}
	}
	reportUnknown(unknown, fe)
	return fields, true
}

// apiShape bounds /api/v1 bodies: a booking request is one flat object;
// its lists have their own, friendlier bounds (MaxGPUCount).
var apiShape = jsonShape{maxDepth: 16, otherLists: MaxAPIBody}

// reportUnknown adds the first few unknown fields, with bounded names.
func reportUnknown(unknown []string, fe models.FieldErrors) {
	sort.Strings(unknown)
	for i, k := range unknown {
		if i == maxReportedFields {
			break
		}
		fe.Add(truncateRunes(k, 64), models.M("err.field_unknown"))
	}
}

// parseGPUIDs reads an array of integers; models.CheckGPUIDs then applies
// the rules every list of GPUs obeys (how many, positive, distinct).
func parseGPUIDs(raw json.RawMessage, lim models.BookingLimits, fe models.FieldErrors) []int64 {
	if raw == nil {
		fe.Add("gpu_ids", models.M("err.gpus_required"))
		return nil
	}
	var elems []json.RawMessage
	if isNull(raw) || json.Unmarshal(raw, &elems) != nil {
		fe.Add("gpu_ids", models.M("err.json_type"))
		return nil
	}
	if len(elems) > lim.MaxGPUCount { // before parsing a long list
		fe.Add("gpu_ids", models.M("err.gpus_too_many", "Max", lim.MaxGPUCount))
		return nil
	}
	ids := make([]int64, 0, len(elems))
	for _, el := range elems {
		id, err := strconv.ParseInt(string(bytes.TrimSpace(el)), 10, 64)
		if err != nil {
			fe.Add("gpu_ids", models.M("err.gpu_id_invalid"))
			return nil
		}
		ids = append(ids, id)
	}
	if !models.CheckGPUIDs(ids, lim, fe) {
		return nil
	}
	return ids
}

// parseTimeField reads a required RFC 3339 time from fields[name].
func parseTimeField(fields map[string]json.RawMessage, name, missing string, fe models.FieldErrors) time.Time {
	raw, ok := fields[name]
	if !ok {
		fe.Add(name, models.M(missing))
		return time.Time{}
	}
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		fe.Add(name, models.M("err.json_type"))
		return time.Time{}
	}
	t, msg := ParseAPITime(s)
	if msg != nil {
		fe.Add(name, *msg)
	}
	return t
}

// ParseAPITime reads an RFC 3339 time with its zone. A time without a zone
// is refused with its own message rather than guessed: a guess in the wrong
// zone books the wrong hours. Years outside 1970–9999 are refused too.
func ParseAPITime(s string) (time.Time, *models.Msg) {
	t, err := time.Parse(time.RFC3339, s)
	if err == nil && t.Year() >= 1970 && t.Year() <= 9999 {
		return t.UTC(), nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if _, err := time.Parse(layout, s); err == nil {
			m := models.M("err.time_zone_missing")
			return time.Time{}, &m
		}
	}
	m := models.M("err.time_invalid")
	return time.Time{}, &m
}

// parseNote reads the optional note, trimmed and bounded in characters.
func parseNote(raw json.RawMessage, lim models.BookingLimits, fe models.FieldErrors) string {
	if raw == nil {
		return ""
	}
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		fe.Add("note", models.M("err.json_type"))
		return ""
	}
	if !fe.Check("note", &s, lim.NoteText()) {
		return ""
	}
	return s
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
