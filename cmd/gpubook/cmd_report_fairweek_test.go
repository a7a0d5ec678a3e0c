package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/storetest/fairweek"
)

// TestReportPreviewFairWeek prints every user's "gpubook report preview"
// of the fairness fixture's DST week and normal week
// (models/store/storetest/fairweek), in the cluster zone Europe/Berlin, on
// both databases, and checks each cell of its figures, days and trend
// tables and its fair-share sentence against the hand-worked figures.
func TestReportPreviewFairWeek(t *testing.T) {
	t.Parallel()
	for _, c := range fairweek.Weeks {
		t.Run(c.Week, func(t *testing.T) {
			t.Parallel()
			previewFairWeek(t, c)
		})
	}
}

func previewFairWeek(t *testing.T, c fairweek.Case) {
	w := c.Parse()
	want := fairweek.Expect(c, models.DefaultReportRules.UnbookedWeight)
	now := w.End.Add(50 * time.Hour)
	eachMigrated(t, func(t *testing.T, url string) {
		db := storetest.OpenURL(t, url)
		fairweek.Build(t, db, w)
		env := envOf(map[string]string{"GPUBOOK_DATABASE_URL": url, "GPUBOOK_TIMEZONE": "Europe/Berlin"})
		for _, name := range fairweek.Names {
			var out, errOut syncBuffer
			args := []string{"gpubook", "report", "preview", "--email", fairweek.Email(name), "--week", c.Week}
			if err := runIO(ctx, args, env, cliIO{stdout: &out, stderr: &errOut, now: func() time.Time { return now }}); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, errOut.String())
			}
			if !strings.Contains(out.String(), want.Sentence[name]+"\n") {
				t.Errorf("%s: the preview lacks %q:\n%s", name, want.Sentence[name], out.String())
			}
			for id, tb := range map[string]fairweek.Table{"figures": want.Figures[name], "days": want.Days[name], "trend": want.Trend[name]} {
				got, ok := fairweek.TextTable(out.String(), tb.Head)
				if !ok {
					t.Errorf("%s: no %s table in the preview:\n%s", name, id, out.String())
					continue
				}
				fairweek.Check(t, name+" preview "+id, got, tb)
			}
		}
	})
}
