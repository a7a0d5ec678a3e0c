package models

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The bounds of one import, so that an upload cannot hold the server's
// memory or one transaction for long: a lab's years of spreadsheet fit
// well inside them.
const (
	MaxImportBytes = 10 << 20
	MaxImportRows  = 100_000
	maxImportNote  = 500
)

// ImportRow is one booking of an import file (gpubook import bookings, the
// admin import page), as written: user email, node, GPU indexes, start,
// end, note. Past bookings enter only this way; the booking form refuses
// the past.
type ImportRow struct {
	Line       int
	Email      string
	Node       string
	GPUIndexes []int
	Start, End time.Time
	Note       string
}

// ImportReject is a row the import refused, with the reason to show.
type ImportReject struct {
	Line   int
	Reason Msg
}

// ImportResult says what an import did. Written is false when nothing was
// written (all or nothing, with rejects).
type ImportResult struct {
	Rows, Imported int
	Rejects        []ImportReject
	Written        bool
}

// ParseImportCSV reads the import file: comma-separated, an optional
// header line starting with "email", times in RFC 3339 or
// "YYYY-MM-DD HH:MM" in loc (the cluster's zone). Each malformed row
// becomes a reject naming its line; a file over the bounds is an error.
func ParseImportCSV(r io.Reader, loc *time.Location) ([]ImportRow, []ImportReject, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxImportBytes+1))
	if err != nil {
		return nil, nil, err
	}
	if len(body) > MaxImportBytes {
		return nil, nil, NewError(EINVALID, M("err.import_too_large", "MB", MaxImportBytes>>20))
	}
	cr := csv.NewReader(strings.NewReader(string(body)))
	cr.FieldsPerRecord, cr.TrimLeadingSpace = -1, true
	var rows []ImportRow
	var bad []ImportReject
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, nil, NewError(EINVALID, M("err.import_csv", "Line", line, "Error", err.Error()))
		}
		if len(rows)+len(bad) == 0 && len(rec) > 0 && strings.EqualFold(strings.TrimSpace(rec[0]), "email") {
			continue // the header
		}
		if len(rows)+len(bad) >= MaxImportRows {
			return nil, nil, NewError(EINVALID, M("err.import_too_many_rows", "Rows", MaxImportRows))
		}
		row, reason := parseImportRow(rec, loc)
		if reason != nil {
			bad = append(bad, ImportReject{Line: line, Reason: *reason})
			continue
		}
		row.Line = line
		rows = append(rows, row)
	}
	return rows, bad, nil
}

func parseImportRow(rec []string, loc *time.Location) (ImportRow, *Msg) {
	fail := func(key string, kv ...any) (ImportRow, *Msg) { m := M(key, kv...); return ImportRow{}, &m }
	if len(rec) < 5 || len(rec) > 6 {
		return fail("import.bad_columns", "Count", len(rec))
	}
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	row := ImportRow{Email: NormalizeEmail(rec[0]), Node: rec[1]}
	if !ValidEmail(row.Email) {
		return fail("import.bad_email", "Value", rec[0])
	}
	if row.Node == "" {
		return fail("import.bad_node")
	}
	seen := map[int]bool{}
	for _, s := range strings.FieldsFunc(rec[2], func(r rune) bool { return r == ';' || r == ' ' }) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || seen[n] {
			return fail("import.bad_gpus", "Value", rec[2])
		}
		seen[n] = true
		row.GPUIndexes = append(row.GPUIndexes, n)
	}
	if len(row.GPUIndexes) == 0 {
		return fail("import.bad_gpus", "Value", rec[2])
	}
	var ok bool
	if row.Start, ok = parseImportTime(rec[3], loc); !ok {
		return fail("import.bad_time", "Value", rec[3])
	}
	if row.End, ok = parseImportTime(rec[4], loc); !ok {
		return fail("import.bad_time", "Value", rec[4])
	}
	if !row.End.After(row.Start) {
		return fail("import.end_before_start")
	}
	if len(rec) == 6 {
		row.Note = rec[5]
	}
	if utf8.RuneCountInString(row.Note) > maxImportNote || !utf8.ValidString(row.Note) {
		return fail("import.bad_note", "Max", maxImportNote)
	}
	return row, nil
}

func parseImportTime(s string, loc *time.Location) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), true
	}
	if t, err := time.ParseInLocation("2006-01-02 15:04", s, loc); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// ImportTargets is what the rows are resolved against: users by email,
// nodes by name with their GPUs by index, and the blocking GPU ranges
// already booked.
type ImportTargets struct {
	Users    map[string]int64
	Nodes    map[string]int64
	GPUs     map[int64]map[int]int64 // node id → index → GPU id
	Existing map[int64][]Span        // GPU id → blocking ranges, any order
}

// ImportBooking is a row resolved to ids, ready to insert.
type ImportBooking struct {
	Row    ImportRow
	UserID int64
	NodeID int64
	GPUIDs []int64
}

// CheckImport resolves each row and refuses unknown users, nodes and GPUs
// and every overlap, with existing bookings or with an earlier row of the
// file (the first row keeps its GPUs). It reports the rejects in line order.
func CheckImport(rows []ImportRow, t ImportTargets) ([]ImportBooking, []ImportReject) {
	taken := map[int64][]importSpan{}
	var ok []ImportBooking
	var bad []ImportReject
	for _, r := range rows {
		b, reason := resolveImport(r, t)
		if reason == nil {
			reason = importOverlap(b, t.Existing, taken)
		}
		if reason != nil {
			bad = append(bad, ImportReject{Line: r.Line, Reason: *reason})
			continue
		}
		for _, g := range b.GPUIDs {
			taken[g] = append(taken[g], importSpan{Span{r.Start, r.End}, r.Line})
		}
		ok = append(ok, b)
	}
	sort.SliceStable(bad, func(i, j int) bool { return bad[i].Line < bad[j].Line })
	return ok, bad
}

type importSpan struct {
	Span
	line int
}

func resolveImport(r ImportRow, t ImportTargets) (ImportBooking, *Msg) {
	fail := func(key string, kv ...any) (ImportBooking, *Msg) { m := M(key, kv...); return ImportBooking{}, &m }
	b := ImportBooking{Row: r, UserID: t.Users[r.Email], NodeID: t.Nodes[r.Node]}
	if b.UserID == 0 {
		return fail("import.unknown_user", "Email", r.Email)
	}
	if b.NodeID == 0 {
		return fail("import.unknown_node", "Node", r.Node)
	}
	for _, i := range r.GPUIndexes {
		g := t.GPUs[b.NodeID][i]
		if g == 0 {
			return fail("import.unknown_gpu", "Node", r.Node, "Index", i)
		}
		b.GPUIDs = append(b.GPUIDs, g)
	}
	return b, nil
}

// importOverlap finds the first clash of b with a booking or an earlier row.
func importOverlap(b ImportBooking, existing map[int64][]Span, taken map[int64][]importSpan) *Msg {
	for _, g := range b.GPUIDs {
		for _, s := range existing[g] {
			if Overlaps(b.Row.Start, b.Row.End, s.Start, s.End) {
				m := M("import.overlap_existing", "Start", s.Start.Format(time.RFC3339), "End", s.End.Format(time.RFC3339))
				return &m
			}
		}
		for _, s := range taken[g] {
			if Overlaps(b.Row.Start, b.Row.End, s.Start, s.End) {
				m := M("import.overlap_file", "Line", s.line)
				return &m
			}
		}
	}
	return nil
}

// ImportStore writes an import in one transaction (models/store).
type ImportStore interface {
	ImportBookings(ctx context.Context, rows []ImportRow, rejects []ImportReject, skipBad bool, now time.Time, by Actor) (ImportResult, error)
}
