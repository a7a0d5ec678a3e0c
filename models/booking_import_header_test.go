package models

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A spreadsheet's export starts with a header row; it is read by its
// names and checked, with or without a byte order mark.
func TestImportHeader(t *testing.T) {
	const row = "a@x.org,n1,0;1,2026-03-01 10:00,2026-03-01 12:00,hi\n"
	for _, tc := range []struct {
		name, file string
		rows       int
		rejects    string
		errKey     string
		wantNote   string
	}{
		{"spreadsheet words", "user,node,gpus,start,end,note\n" + row, 1, "", "", "hi"},
		{"byte order mark", "\uFEFFUser,Node,GPUs,Start,End,Note\r\n" + row, 1, "", "", "hi"},
		{"quoted title case", "\"User email\",\"Node\",\"GPU indexes\",\"Start time\",\"End time\",\"Note\"\n" + row, 1, "", "", "hi"},
		{"Chinese", "用户,节点,显卡,开始,结束,备注\n" + row, 1, "", "", "hi"},
		{"no note column", "email,node,gpus,start,end\na@x.org,n1,0,2026-03-01 10:00,2026-03-01 12:00\n", 1, "", "", ""},
		{"another order", "note,start,end,user,node,gpus\nhi,2026-03-01 10:00,2026-03-01 12:00,a@x.org,n1,0;1\n", 1, "", "", "hi"},
		{"no header", row, 1, "", "", "hi"},
		{"a bad first row is no header", "nobody,n1,0,2026-03-01 10:00,2026-03-01 12:00\n" + row, 1, "1:import.bad_email", "", "hi"},
		{"unknown column", "user,node,gpus,start,end,project\n" + row, 0, "", "err.import_header_unknown", ""},
		{"column twice", "user,email,gpus,start,end\n" + row, 0, "", "err.import_header_twice", ""},
		{"column missing", "user,node,start,end\n" + row, 0, "", "err.import_header_missing", ""},
		{"short row under a header", "user,node,gpus,start,end,note\na@x.org,n1,0;1,2026-03-01 10:00\n", 0, "2:import.bad_columns", "", ""},
		{"long row under a header", "user,node,gpus,start,end\na@x.org,n1,0,2026-03-01 10:00,2026-03-01 12:00,x,y\n", 0, "2:import.bad_columns", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, bad, err := ParseImportCSV(strings.NewReader(tc.file), time.UTC)
			if tc.errKey != "" {
				var e *Error
				if !errors.As(err, &e) || e.Msg.Key != tc.errKey || e.Msg.Data["Line"] != 1 {
					t.Fatalf("err %v, want %s on line 1", err, tc.errKey)
				}
				return
			}
			var got []string
			for _, b := range bad {
				got = append(got, strconv.Itoa(b.Line)+":"+b.Reason.Key)
			}
			if err != nil || len(rows) != tc.rows || strings.Join(got, " ") != tc.rejects {
				t.Fatalf("rows %d, rejects %q, %v; want %d, %q", len(rows), strings.Join(got, " "), err, tc.rows, tc.rejects)
			}
			if tc.rows == 0 {
				return
			}
			r := rows[len(rows)-1]
			start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			if r.Email != "a@x.org" || r.Node != "n1" || !r.Start.Equal(start) || !r.End.Equal(start.Add(2*time.Hour)) || r.Note != tc.wantNote || len(r.GPUIndexes) == 0 || r.GPUIndexes[0] != 0 {
				t.Errorf("row %+v", r)
			}
		})
	}
}
