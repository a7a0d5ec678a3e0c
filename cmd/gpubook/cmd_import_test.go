package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImportAndFrozenWeekCLI: a sent week's preview does not change when a
// booking of that week is imported afterwards; "report recompute" takes it
// in, prints the diff, and the preview then shows it. The import refuses a
// file with a bad row unless --skip-bad, naming the line.
func TestImportAndFrozenWeekCLI(t *testing.T) {
	t.Parallel()
	eachMigrated(t, func(t *testing.T, url string) {
		w := reportWeekData(t, url)
		mustGpubook(t, url, "report", "send", "--week", w.String())
		sent := mustGpubook(t, url, "report", "preview", "--email", "ann@example.org", "--week", w.String())
		from := w.Start.Add(58 * time.Hour).UTC() // Wednesday 10:00 in Shanghai
		file := filepath.Join(t.TempDir(), "history.csv")
		body := "email,node,gpus,start,end,note\n" +
			"ben@example.org,n1,0," + from.Format(time.RFC3339) + "," + from.Add(2*time.Hour).Format(time.RFC3339) + ",from the sheet\n" +
			"ben@example.org,n1,7," + from.Format(time.RFC3339) + "," + from.Add(time.Hour).Format(time.RFC3339) + ",\n"
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		out, _, err := gpubook(t, url, "import", "bookings", file)
		if err == nil || !strings.Contains(out, "line 3: node n1 has no GPU 7") || !strings.Contains(err.Error(), "nothing imported") {
			t.Fatalf("all or nothing: %q %v", out, err)
		}
		out = mustGpubook(t, url, "import", "bookings", "--skip-bad", file)
		if !strings.Contains(out, "imported 1 bookings of 2 rows; 1 rejected") {
			t.Errorf("skip bad: %q", out)
		}
		// The sent week is the one frozen week the booking changes: the
		// import says so, and how to take it in.
		if want := "frozen weeks these bookings change, which keep their figures until recomputed: " + w.String() + "\n" +
			"  gpubook report recompute --week " + w.String() + "\n"; !strings.HasSuffix(out, want) {
			t.Errorf("import output %q, want it to end with %q", out, want)
		}
		if got := mustGpubook(t, url, "report", "preview", "--email", "ann@example.org", "--week", w.String()); got != sent {
			t.Errorf("the sent week changed:\n%s\n---\n%s", sent, got)
		}
		diff := mustGpubook(t, url, "report", "recompute", "--week", w.String())
		if !strings.Contains(diff, "(was frozen: true)") || !strings.Contains(diff, "Ben (user") || !strings.Contains(diff, "Figures, GPU-hours booked: 0.0 -> 2.0") {
			t.Errorf("recompute diff: %q", diff)
		}
		if got := mustGpubook(t, url, "report", "preview", "--email", "ann@example.org", "--week", w.String()); !strings.Contains(got, "50%") || got == sent {
			t.Errorf("after the recompute ann's share of booked hours should be 50%%:\n%s", got)
		}
	})
}
