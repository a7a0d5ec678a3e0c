package models

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestImportRulesParse: notes follow the text rule, times are whole
// seconds, dates stay within the bounds, and BOM or CR-only files read
// like any other (issue 36).
func TestImportRulesParse(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	rules := ImportRules{Location: time.UTC, Now: now, YearsBack: DefaultImportYearsBack, YearsAhead: DefaultImportYearsAhead}
	row := func(start, end, note string) string { return "a@x.org,n1,0," + start + "," + end + "," + note + "\n" }
	ok := func(note string) string { return row("2026-03-01 10:00", "2026-03-01 11:00", note) }
	for _, tc := range []struct {
		name    string
		rules   ImportRules
		file    string
		notes   string // the accepted rows' notes, "|" between
		rejects string // reason keys by line
		errKey  string
	}{
		{"plain note", rules, ok("from the sheet"), "from the sheet", "", ""},
		{"quoted note with CR LF", rules, ok("\"two\r\nlines\""), "two\nlines", "", ""},
		{"NUL note", rules, ok("a\x00b"), "", "1:import.note_control", ""},
		{"escape note", rules, ok("\x1b[31mred"), "", "1:import.note_control", ""},
		{"BEL note", rules, ok("ding\a"), "", "1:import.note_control", ""},
		{"NEL note", rules, ok("a\u0085b"), "", "1:import.note_control", ""},
		{"invalid UTF-8 note", rules, ok("a\xffb"), "", "1:import.note_invalid", ""},
		{"long note", rules, ok(strings.Repeat("x", maxImportNote+1)), "", "1:import.bad_note", ""},
		{"end 1 ns after start", rules, row("2026-03-01T10:00:00Z", "2026-03-01T10:00:00.000000001Z", ""), "", "1:import.end_before_start", ""},
		{"sub-second times", rules, row("2026-03-01T10:00:00.9Z", "2026-03-01T10:00:01.5Z", ""), "", "", ""},
		{"year 0001", rules, row("0001-01-01T00:00:00Z", "0001-01-01T01:00:00Z", ""), "", "1:import.start_too_early", ""},
		{"ends 9999-12-31", rules, row("2026-03-01 10:00", "9999-12-31 23:00", ""), "", "1:import.end_too_late", ""},
		{"just inside the bounds", rules, row("2016-06-01 12:00", "2028-06-01 12:00", ""), "", "", ""},
		{"a second outside", rules, row("2016-06-01T11:59:59Z", "2016-06-01T13:00:00Z", "") + row("2028-06-01T11:00:00Z", "2028-06-01T12:00:01Z", ""),
			"", "1:import.start_too_early 2:import.end_too_late", ""},
		{"bounds are settable", ImportRules{Now: now, YearsBack: 1, YearsAhead: 0}, ok("") + row("2026-07-01 10:00", "2026-07-01 11:00", ""),
			"", "2:import.end_too_late", ""},
		{"no bounds without now", ImportRules{}, row("0001-01-01T00:00:00Z", "9999-12-31T00:00:00Z", ""), "", "", ""},
		{"CR-only line ends", rules, strings.ReplaceAll("email,node,gpus,start,end,note\n"+ok("one")+ok("two"), "\n", "\r"), "one|two", "", ""},
		{"BOM before the header", rules, "\uFEFFemail,node,gpus,start,end,note\r\n" + ok("bom"), "bom", "", ""},
		{"escaped values in reasons", rules, "a\x1b]0;x\a@x.org,n1,0,2026-03-01 10:00,2026-03-01 11:00\n", "", "1:import.bad_email", ""},
		{"header only", rules, "email,node,gpus,start,end,note\n", "", "", "err.import_empty"},
		{"empty", rules, "", "", "", "err.import_empty"},
		{"CR-only header only", rules, "email,node,gpus,start,end\r", "", "", "err.import_empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, bad, err := tc.rules.Parse(strings.NewReader(tc.file))
			if got := ErrorCode(err); tc.errKey != "" {
				if e, isErr := err.(*Error); !isErr || e.Msg.Key != tc.errKey {
					t.Fatalf("err %v (%s), want %s", err, got, tc.errKey)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var notes, rejects []string
			for _, r := range rows {
				notes = append(notes, r.Note)
				if !r.Start.Equal(r.Start.Truncate(time.Second)) || !r.End.After(r.Start) {
					t.Errorf("line %d: %v – %v, want whole seconds, end after start", r.Line, r.Start, r.End)
				}
			}
			for _, b := range bad {
				rejects = append(rejects, strconv.Itoa(b.Line)+":"+b.Reason.Key)
				if v, _ := b.Reason.Data["Value"].(string); strings.ContainsAny(v, "\x1b\a") {
					t.Errorf("line %d: the reason shows %q raw", b.Line, v)
				}
			}
			if got := strings.Join(notes, "|"); got != tc.notes {
				t.Errorf("notes %q, want %q", got, tc.notes)
			}
			if got := strings.Join(rejects, " "); got != tc.rejects {
				t.Errorf("rejects %q, want %q", got, tc.rejects)
			}
		})
	}
}
