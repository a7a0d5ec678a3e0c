package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestCalendarLargeClusterFilters checks, through the wired router on both
// databases, what keeps a cluster of hundreds of GPUs usable: above 64
// GPUs the nodes open collapsed with a free count, ?open=ID and ?open=all
// expand them, ?free=1 keeps the GPUs free now, and the node and model
// filters combine with them and survive navigation.
func TestCalendarLargeClusterFilters(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			for i := 0; i < 8; i++ { // 6 + 64 GPUs: more than a screenful
				f.addNode(t, fmt.Sprintf("rack-%d", i), 8, "NVIDIA L40S", 46068)
			}
			a0 := f.gpu(t, "node-a", 0)
			f.book(t, f.bob, []int64{a0}, -1, 2, "busy now")
			f.book(t, f.bob, []int64{f.gpu(t, "node-a", 1)}, 5, 8, "later today")
			nodeA := f.nodes[0].ID
			c := f.signedIn(f.alice)
			rows := func(res string) int { return c.Get(res).Doc.Find(`[data-testid^="cal-row-"]`).Length() }

			res := c.Get("/calendar")
			if res.Code != http.StatusOK {
				t.Fatalf("status %d", res.Code)
			}
			doc := res.Doc
			if n := doc.Find(`[data-testid^="cal-row-"]`).Length(); n != 0 {
				t.Errorf("collapsed by default: %d GPU rows, want none", n)
			}
			if n := doc.Find(`[data-testid="cal-node-open"]`).Length(); n != 10 {
				t.Errorf("%d nodes with a Show link, want 10", n)
			}
			if got := doc.Find(testid("cal-node-node-a") + ` [data-testid="cal-node-free"]`).Text(); got != "3 of 4 GPUs free" {
				t.Errorf("node-a summary %q, want 3 of 4 GPUs free", got)
			}
			open, _ := doc.Find(testid("cal-node-node-a") + ` [data-testid="cal-node-open"]`).Attr("href")
			if open != "/calendar?date=2026-06-03&open="+itoa(nodeA) {
				t.Errorf("open link %q", open)
			}
			if n := rows(open); n != 4 {
				t.Errorf("node-a opened: %d rows, want 4", n)
			}
			if n := rows("/calendar?open=all"); n != 70 {
				t.Errorf("open=all: %d rows, want 70", n)
			}
			if n := rows("/calendar?free=1&open=all"); n != 69 { // node-a GPU 0 is busy now; GPU 1 only later
				t.Errorf("free only: %d rows, want 69", n)
			}
			// Node and model filters: a node small enough is open at once.
			if n := rows("/calendar?node=" + itoa(nodeA)); n != 4 {
				t.Errorf("node filter: %d rows, want 4", n)
			}
			if n := rows("/calendar?node=" + itoa(nodeA) + "&free=1"); n != 3 {
				t.Errorf("node and free only: %d rows, want 3", n)
			}
			model := c.Get("/calendar?model=NVIDIA+H100+80GB+HBM3&free=1").Doc
			if n := model.Find(`[data-testid^="cal-row-"]`).Length(); n != 2 {
				t.Errorf("model filter: %d rows, want node-b's 2 H100s", n)
			}
			if next, _ := model.Find(testid("cal-next")).Attr("href"); next != "/calendar?date=2026-06-10&free=1&model=NVIDIA+H100+80GB+HBM3" {
				t.Errorf("next keeps the filters: %q", next)
			}
			if checked, _ := model.Find(testid("cal-free-only")).Attr("checked"); checked != "checked" && !model.Find(testid("cal-free-only")).Is("[checked]") {
				t.Error("free-only box not ticked")
			}
			if !strings.Contains(model.Find(testid("cal-filter")).Text(), "Free GPUs only") {
				t.Error("free-only label missing")
			}
		})
	}
}
