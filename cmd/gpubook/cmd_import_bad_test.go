package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImportBadRowsCLI: "gpubook import bookings" refuses the rows the
// portal once stored or answered with a 500 (issue 36), each with its line
// and a reason whose values are escaped, on both databases; the date
// bounds are settable; CR-only line ends and a BOM read like any file.
func TestImportBadRowsCLI(t *testing.T) {
	t.Parallel()
	eachMigrated(t, func(t *testing.T, url string) {
		mustGpubook(t, url, "user", "add", "--email", "ada@example.org", "--name", "Ada")
		mustGpubook(t, url, "node", "add", "--name", "n1", "--gpus", "2", "--model", "A100", "--memory-mib", "81920")
		day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -3)
		at := func(d, h int) string {
			return day.AddDate(0, 0, d).Add(time.Duration(h) * time.Hour).Format(time.RFC3339)
		}
		row := func(email, start, end, note string) string {
			return email + ",n1,0," + start + "," + end + "," + note + "\n"
		}
		file := writeImport(t, "email,node,gpus,start,end,note\n"+
			row("ada@example.org", at(0, 1), at(0, 2), "a\x00b")+
			row("ada@example.org", at(0, 3), at(0, 4), "\x1b]0;Logged in as Admin\a")+
			row("ada@example.org", "2026-03-01T10:00:00Z", "2026-03-01T10:00:00.000000001Z", "")+
			row("ada@example.org", "0001-01-01T00:00:00Z", "0001-01-01T01:00:00Z", "")+
			row("ada@example.org", at(0, 5), "9999-12-31T23:00:00Z", "")+
			row("a\x1b[2Kda@example.org", at(0, 5), at(0, 6), "")+
			row("ada@example.org", at(1, 1), at(1, 2), "fine"))
		out, _, err := gpubook(t, url, "import", "bookings", file)
		if err == nil || !strings.Contains(err.Error(), "6 of 7 rows rejected; nothing imported") {
			t.Fatalf("all or nothing: %v\n%s", err, out)
		}
		for _, want := range []string{"line 2: the note contains control characters", "line 3: the note contains control characters",
			"line 4: the end is not after the start", "line 5: starts before", "line 6: ends after", `line 7: "a\x1b[2Kda@example.org" is not an email`} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if strings.ContainsAny(out, "\x00\x1b\a") {
			t.Errorf("raw control characters in the output: %q", out)
		}
		if out := mustGpubook(t, url, "import", "bookings", "--skip-bad", file); !strings.Contains(out, "imported 1 bookings of 7 rows; 6 rejected") {
			t.Errorf("skip bad: %q", out)
		}
		cr := writeImport(t, strings.ReplaceAll("\uFEFFemail,node,gpus,start,end,note\n"+row("ada@example.org", at(2, 1), at(2, 2), "cr")+
			row("ada@example.org", at(2, 3), at(2, 4), "only"), "\n", "\r"))
		if out := mustGpubook(t, url, "import", "bookings", cr); !strings.Contains(out, "imported 2 bookings of 2 rows; 0 rejected") {
			t.Errorf("BOM and CR-only line ends: %q", out)
		}
		ahead := writeImport(t, row("ada@example.org", at(10, 1), at(10, 2), ""))
		out, _, err = gpubookEnv(t, map[string]string{"GPUBOOK_DATABASE_URL": url, "GPUBOOK_IMPORT_YEARS_AHEAD": "0"}, "import", "bookings", ahead)
		if err == nil || !strings.Contains(out, "line 1: ends after") || !strings.Contains(out, "at most 0 years ahead") {
			t.Errorf("GPUBOOK_IMPORT_YEARS_AHEAD=0: %v\n%s", err, out)
		}
		if _, _, err := gpubookEnv(t, map[string]string{"GPUBOOK_DATABASE_URL": url, "GPUBOOK_IMPORT_YEARS_BACK": "-1"}, "import", "bookings", ahead); err == nil ||
			!strings.Contains(err.Error(), `GPUBOOK_IMPORT_YEARS_BACK: "-1" is not a whole number of years from 0 to 100`) {
			t.Errorf("a negative bound: %v", err)
		}
		if _, _, err := gpubook(t, url, "import", "bookings", writeImport(t, "email,node,gpus,start,end\r")); err == nil || !strings.Contains(err.Error(), "no rows to import") {
			t.Errorf("a CR-only header: %v", err)
		}
	})
}

func writeImport(t *testing.T, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "history.csv")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
