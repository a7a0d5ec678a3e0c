package main

import (
	"strings"
	"testing"
	"time"
)

// TestImportHeaderCLI: a spreadsheet's export, with its header row in the
// spreadsheet's words and a byte order mark, imports (issue 41: "'user' is
// not an email address"); a header naming an unknown column is refused
// with its line, and nothing is imported.
func TestImportHeaderCLI(t *testing.T) {
	t.Parallel()
	eachMigrated(t, func(t *testing.T, url string) {
		mustGpubook(t, url, "user", "add", "--email", "ada@example.org", "--name", "Ada")
		mustGpubook(t, url, "node", "add", "--name", "n1", "--gpus", "2", "--model", "A100", "--memory-mib", "81920")
		day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -3)
		at := func(h int) string { return day.Add(time.Duration(h) * time.Hour).Format(time.RFC3339) }
		bad := writeImport(t, "user,node,gpus,start,end,project\r\nada@example.org,n1,0,"+at(1)+","+at(2)+",x\r\n")
		if out, _, err := gpubook(t, url, "import", "bookings", bad); err == nil || !strings.Contains(err.Error(), `Line 1 is a header, but "project" names no column`) {
			t.Fatalf("unknown column: %v\n%s", err, out)
		}
		good := writeImport(t, "\uFEFFUser,Node,GPUs,Start,End,Note\r\n"+
			"ada@example.org,n1,0;1,"+at(1)+","+at(2)+",from the sheet\r\n"+
			"ada@example.org,n1,1,"+at(3)+","+at(4)+",\r\n")
		if out := mustGpubook(t, url, "import", "bookings", good); !strings.Contains(out, "imported 2 bookings of 2 rows; 0 rejected") {
			t.Errorf("header import: %q", out)
		}
	})
}
