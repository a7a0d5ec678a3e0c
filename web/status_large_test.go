package web_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestStatusLargeClusterCollapsed checks, through the wired router on both
// databases, the live status page of a cluster above 64 GPU rows: it opens
// with a summary row per node and no GPU row, ?open=ID shows that node's
// card in place (the other nodes stay summaries, and each link keeps the
// nodes already open), the card's close link collapses it again, and
// ?open=all shows every GPU. The collapsed page reads naturally in Chinese.
func TestStatusLargeClusterCollapsed(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			for i := 0; i < 8; i++ { // 6 + 64 GPUs
				f.addNode(t, fmt.Sprintf("node-r%d", i), 8, "NVIDIA L40S", 46068)
			}
			f.book(t, f.bob, []int64{f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1)}, -1, 2, "busy now")
			f.book(t, f.alice, []int64{f.gpu(t, "node-b", 0)}, 5, 8, "later today")
			if err := f.env.DB.SetGPUService(t.Context(), f.gpu(t, "node-a", 3), false, "fan", models.CLIActor); err != nil {
				t.Fatal(err)
			}
			nodeA, nodeB := f.nodes[0].ID, f.nodes[1].ID
			c := f.signedIn(f.bob)

			res := c.Get("/status")
			if res.Code != http.StatusOK {
				t.Fatalf("status %d", res.Code)
			}
			doc := res.Doc
			if n := doc.Find(`[data-testid^="status-gpu-"]`).Length(); n != 0 {
				t.Errorf("collapsed: %d GPU rows, want none", n)
			}
			if n := doc.Find(`[data-testid^="status-summary-"]`).Length(); n != 10 {
				t.Errorf("%d summary rows, want 10", n)
			}
			a := doc.Find(testid("status-summary-node-a"))
			if got := a.Find(testid("status-counts")).Text(); got != "4 GPUs · 2 booked · 1 free" {
				t.Errorf("node-a counts %q", got)
			}
			if got := a.Find(testid("summary-holders")).Text(); got != "Bob Builder" {
				t.Errorf("node-a holders %q", got)
			}
			if got := a.Find(testid("summary-out")).Text(); got != "1 out of service" {
				t.Errorf("node-a out badge %q", got)
			}
			if got := doc.Find(testid("status-summary-node-b") + " " + testid("status-counts")).Text(); got != "2 GPUs · 0 booked · 2 free" {
				t.Errorf("node-b counts %q (a booking later today holds nothing now)", got)
			}
			if a.Find(testid("agent-none")).Length() != 1 {
				t.Error("node-a row lacks its agent badge")
			}
			if all, _ := doc.Find(testid("status-open-all")).Attr("href"); all != "/status?open=all" {
				t.Errorf("open all link %q", all)
			}
			open, _ := a.Find(testid("status-node-open")).Attr("href")
			if open != "/status?open="+itoa(nodeA) {
				t.Fatalf("open link %q", open)
			}

			opened := c.Get(open).Doc
			if n := opened.Find(testid("status-node-node-a") + ` [data-testid^="status-gpu-"]`).Length(); n != 4 {
				t.Errorf("node-a opened: %d GPU rows in its card, want 4", n)
			}
			if n := opened.Find(`[data-testid^="status-gpu-"]`).Length(); n != 4 {
				t.Errorf("node-a opened: %d GPU rows on the page, want 4", n)
			}
			if n := opened.Find(`[data-testid^="status-summary-"]`).Length(); n != 9 {
				t.Errorf("node-a opened: %d summary rows, want the other 9", n)
			}
			if closeURL, _ := opened.Find(testid("status-node-node-a") + " " + testid("status-node-close")).Attr("href"); closeURL != "/status" {
				t.Errorf("close link %q", closeURL)
			}
			both, _ := opened.Find(testid("status-summary-node-b") + " " + testid("status-node-open")).Attr("href")
			if want := "/status?open=" + itoa(nodeA) + "&open=" + itoa(nodeB); both != want {
				t.Errorf("node-b's open link on the opened page %q, want %q", both, want)
			}
			if n := c.Get(both).Doc.Find(`[data-testid^="status-gpu-"]`).Length(); n != 6 {
				t.Errorf("node-a and node-b opened: %d GPU rows, want 6", n)
			}

			all := c.Get("/status?open=all").Doc
			if n := all.Find(`[data-testid^="status-gpu-"]`).Length(); n != 70 {
				t.Errorf("open=all: %d GPU rows, want 70", n)
			}
			if n := all.Find(`[data-testid^="status-summary-"]`).Length() + all.Find(testid("status-node-close")).Length(); n != 0 {
				t.Errorf("open=all: %d summary rows or close links, want none", n)
			}

			c.Header.Set("Accept-Language", "zh-CN")
			zh := c.Get(open)
			zh.Doc.Find("script, style, code").Remove()
			check(t, "zh-CN collapsed /status", visibleText(zh.Doc.Find("main")))
			if got := zh.Doc.Find(testid("status-summary-node-b") + " " + testid("status-counts")).Text(); got != "2 张 GPU · 0 张已预订 · 2 张空闲" {
				t.Errorf("node-b counts in zh-CN %q", got)
			}
		})
	}
}
