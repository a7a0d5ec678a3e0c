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

// ImportRules are what an import is checked against besides the file: the
// cluster's zone for local times, and the dates a row may hold. A
// spreadsheet's typo (year 0001, an end in 9999 that would hold a GPU for
// ever) is refused with its line instead of stored.
type ImportRules struct {
	Location *time.Location // the cluster's zone; nil means UTC
	// Now is when the import runs; the bounds are counted from it. Zero
	// means no bounds (fixtures that build a history of their own).
	Now time.Time
	// YearsBack is how far back a row may start, YearsAhead how far
	// ahead it may end (GPUBOOK_IMPORT_YEARS_BACK and _AHEAD).
	YearsBack, YearsAhead int
}

// Default import bounds: a lab's history rarely goes further back, and
// nobody plans GPU time further ahead.
const (
	DefaultImportYearsBack  = 10
	DefaultImportYearsAhead = 2
)

// ParseImportCSV reads the import file with no date bounds; the import
// commands use ImportRules.Parse.
func ParseImportCSV(r io.Reader, loc *time.Location) ([]ImportRow, []ImportReject, error) {
	return ImportRules{Location: loc}.Parse(r)
}

// Parse reads the import file: comma-separated, an optional header line
// that names the columns (checked, and read by its names: see
// importHeader), times in RFC 3339 or "YYYY-MM-DD HH:MM" in the
// cluster's zone. A UTF-8 byte order mark and CR-only line ends (old
// spreadsheet exports) are read like plain LF files. Each malformed row
// becomes a reject naming its line; a file over the bounds, or with no
// row at all, is an error.
func (ir ImportRules) Parse(r io.Reader) ([]ImportRow, []ImportReject, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxImportBytes+1))
	if err != nil {
		return nil, nil, err
	}
	if len(body) > MaxImportBytes {
		return nil, nil, NewError(EINVALID, M("err.import_too_large", "MB", MaxImportBytes>>20))
	}
	cr := csv.NewReader(strings.NewReader(importText(body)))
	cr.FieldsPerRecord, cr.TrimLeadingSpace = -1, true
	var rows []ImportRow
	var bad []ImportReject
	var order []int // the header's order of the columns, if it has one
	first := true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, nil, NewError(EINVALID, M("err.import_csv", "Line", line, "Error", ShowText(err.Error())))
		}
		if first {
			first = false
			var header bool
			var reason *Msg
			if order, header, reason = importHeader(rec, line); reason != nil {
				return nil, nil, NewError(EINVALID, *reason)
			} else if header {
				continue
			}
		}
		rec = reorderImport(rec, order)
		if len(rows)+len(bad) >= MaxImportRows {
			return nil, nil, NewError(EINVALID, M("err.import_too_many_rows", "Rows", MaxImportRows))
		}
		row, reason := ir.parseRow(rec)
		if reason != nil {
			bad = append(bad, ImportReject{Line: line, Reason: *reason})
			continue
		}
		row.Line = line
		rows = append(rows, row)
	}
	if len(rows)+len(bad) == 0 {
		return nil, nil, NewError(EINVALID, M("err.import_empty"))
	}
	return rows, bad, nil
}

// importText is the file as the CSV reader wants it: without a byte order
// mark, and with CR LF and lone CR line ends as LF.
func importText(body []byte) string {
	s := strings.TrimPrefix(string(body), "\uFEFF")
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// parseRow checks one row's fields, then its dates against the bounds.
func (ir ImportRules) parseRow(rec []string) (ImportRow, *Msg) {
	loc := ir.Location
	if loc == nil {
		loc = time.UTC
	}
	row, reason := parseImportRow(rec, loc)
	if reason != nil || ir.Now.IsZero() {
		return row, reason
	}
	if lo := ir.Now.AddDate(-ir.YearsBack, 0, 0); row.Start.Before(lo) {
		m := M("import.start_too_early", "Min", lo.In(loc).Format("2006-01-02"), "Years", ir.YearsBack)
		return ImportRow{}, &m
	}
	if hi := ir.Now.AddDate(ir.YearsAhead, 0, 0); row.End.After(hi) {
		m := M("import.end_too_late", "Max", hi.In(loc).Format("2006-01-02"), "Years", ir.YearsAhead)
		return ImportRow{}, &m
	}
	return row, nil
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
		return fail("import.bad_email", "Value", ShowText(rec[0]))
	}
	if row.Node == "" {
		return fail("import.bad_node")
	}
	seen := map[int]bool{}
	for _, s := range strings.FieldsFunc(rec[2], func(r rune) bool { return r == ';' || r == ' ' }) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || seen[n] {
			return fail("import.bad_gpus", "Value", ShowText(rec[2]))
		}
		seen[n] = true
		row.GPUIndexes = append(row.GPUIndexes, n)
	}
	if len(row.GPUIndexes) == 0 {
		return fail("import.bad_gpus", "Value", ShowText(rec[2]))
	}
	var ok bool
	if row.Start, ok = parseImportTime(rec[3], loc); !ok {
		return fail("import.bad_time", "Value", ShowText(rec[3]))
	}
	if row.End, ok = parseImportTime(rec[4], loc); !ok {
		return fail("import.bad_time", "Value", ShowText(rec[4]))
	}
	if !row.End.After(row.Start) {
		return fail("import.end_before_start")
	}
	if len(rec) == 6 {
		var reason *Msg
		if row.Note, reason = importNote(rec[5]); reason != nil {
			return ImportRow{}, reason
		}
	}
	return row, nil
}

// importNote holds a row's note to the rule of every booking note: NUL,
// escape sequences and other control characters would reach PostgreSQL (a
// 500), pages, the calendar feed and terminals.
func importNote(s string) (string, *Msg) {
	note, reason := TextRule{Max: maxImportNote, Multiline: true}.Clean(s)
	if reason == nil {
		return note, nil
	}
	key := map[string]string{"err.text_invalid": "import.note_invalid", "err.text_control": "import.note_control"}[reason.Key]
	if key == "" {
		key = "import.bad_note"
	}
	m := M(key, "Max", maxImportNote)
	return "", &m
}

// parseImportTime reads a time to the whole second, as every booking is
// stored: an end a nanosecond after its start is no booking (the
// database's own check refused it with a 500).
func parseImportTime(s string, loc *time.Location) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC().Truncate(time.Second), true
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
		return fail("import.unknown_node", "Node", ShowText(r.Node))
	}
	for _, i := range r.GPUIndexes {
		g := t.GPUs[b.NodeID][i]
		if g == 0 {
			return fail("import.unknown_gpu", "Node", ShowText(r.Node), "Index", i)
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
