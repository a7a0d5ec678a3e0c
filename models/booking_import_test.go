package models

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseImportCSV(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, tc := range []struct {
		name, file string
		rows       int
		rejects    string // reason keys by line
		errKey     string
	}{
		{"header and local time", "email,node,gpus,start,end,note\na@x.org,n1,0;1,2026-03-29 01:00,2026-03-29 04:00,hi\n", 1, "", ""},
		{"no header, RFC 3339", "a@x.org,n1,0,2026-03-01T10:00:00Z,2026-03-01T11:00:00+01:00\n", 0, "1:import.end_before_start", ""},
		{"bad rows", "a@x.org,n1,0;0,2026-03-01 10:00,2026-03-01 11:00\nnot-an-email,n1,0,2026-03-01 10:00,2026-03-01 11:00\na@x.org,,0,2026-03-01 10:00,2026-03-01 11:00\n",
			0, "1:import.bad_gpus 2:import.bad_email 3:import.bad_node", ""},
		{"too large", strings.Repeat("x", MaxImportBytes+1), 0, "", "err.import_too_large"},
		{"too many rows", strings.Repeat("a@x.org,n1,0,2026-03-01 10:00,2026-03-01 11:00\n", MaxImportRows+1), 0, "", "err.import_too_many_rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, bad, err := ParseImportCSV(strings.NewReader(tc.file), berlin)
			if tc.errKey != "" {
				var e *Error
				if !errors.As(err, &e) || e.Msg.Key != tc.errKey {
					t.Fatalf("err %v, want %s", err, tc.errKey)
				}
				return
			}
			var got []string
			for _, b := range bad {
				got = append(got, strconv.Itoa(b.Line)+":"+b.Reason.Key)
			}
			if err != nil || len(rows) != tc.rows || strings.Join(got, " ") != tc.rejects {
				t.Errorf("rows %d, rejects %q, %v; want %d, %q", len(rows), strings.Join(got, " "), err, tc.rows, tc.rejects)
			}
		})
	}
	rows, _, _ := ParseImportCSV(strings.NewReader("a@x.org,n1,0;1,2026-03-29 01:00,2026-03-29 04:00,hi\n"), berlin)
	if r := rows[0]; r.End.Sub(r.Start) != 2*time.Hour || r.Note != "hi" || len(r.GPUIndexes) != 2 || r.Line != 1 {
		t.Errorf("a DST night's row: %+v", r) // 01:00 CET to 04:00 CEST is two hours
	}
}

func TestFreezeThawVersion(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	w, _ := ParseWeek("2026-W43", berlin)
	d := &WeekData{Week: w, AsOf: w.End, Spans: ReportSpans(w, w.End), ByUser: map[int64][]Figures{7: make([]Figures, ReportDays+TrendWeeks-1)},
		Users: []User{{ID: 7, Name: "Ann"}}, GPUCount: 3}
	d.ByUser[7][0].BookedSec = 7200
	f, err := FreezeWeek(d, w.End, "test")
	if err != nil {
		t.Fatal(err)
	}
	back, err := f.Thaw(w)
	if err != nil || back.State != WeekFrozen || back.GPUCount != 3 || back.WeekFigures(7).BookedSec != 7200 || back.Week.Start.Location() != berlin {
		t.Fatalf("thawed %+v, %v", back, err)
	}
	if got, want := back.UserReport(User{ID: 7, Name: "Ann"}).Figures, d.UserReport(User{ID: 7, Name: "Ann"}).Figures; got != want {
		t.Errorf("a thawed week differs from its original: %+v, want %+v", got, want)
	}
	f.Version = WeekDataVersion + 1
	if _, err := f.Thaw(w); ErrorCode(err) != EINTERNAL {
		t.Errorf("an unknown version: %v", err)
	}
}
