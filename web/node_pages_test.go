package web_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// pagedFixture is calFixture's two nodes and 148 more of one L40S each,
// node-p000 … node-p147: 150 nodes, so that the calendar and the status
// page show node-a, node-b and node-p000 … node-p097 on page 1 and
// node-p098 … node-p147 on page 2.
func pagedFixture(t *testing.T, d string) *calFixture {
	t.Helper()
	f := newCalFixture(t, d)
	ctx := context.Background()
	for i := 0; i < 148; i++ {
		name := fmt.Sprintf("node-p%03d", i)
		gpus, err := models.NewNodeGPUs(name, 1, "NVIDIA L40S", 46068)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.env.DB.CreateNode(ctx, &models.Node{Name: name}, gpus, models.CLIActor); err != nil {
			t.Fatal(err)
		}
	}
	nodes, err := f.env.DB.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.nodes = nodes
	return f
}

func (f *calFixture) nodeID(t *testing.T, name string) int64 {
	t.Helper()
	for _, n := range f.nodes {
		if n.Name == name {
			return n.ID
		}
	}
	t.Fatalf("no node %s", name)
	return 0
}

// pager reads a page's first pager: its range text and its links ("" when
// absent).
func pager(doc *goquery.Document) (text, prev, next string, n int) {
	p := doc.Find(testid("node-pager"))
	prev, _ = p.First().Find(testid("pager-prev")).Attr("href")
	next, _ = p.First().Find(testid("pager-next")).Attr("href")
	return p.First().Find(testid("pager-range")).Text(), prev, next, p.Length()
}

// TestCalendarNodePages checks, through the wired router on both
// databases, a calendar of 150 nodes: it shows 100 nodes a page, in name
// order, with a pager above and below the grid whose links keep the
// view's other parameters; page 2 shows the other 50 with the bookings of
// its own nodes; a page past the last shows the last; a node open but not
// on the page is not shown; ?node=ID and a model that leaves few nodes
// show no pager; the node filter offers the page's nodes. It reads
// naturally in Chinese.
func TestCalendarNodePages(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := pagedFixture(t, d)
			f.book(t, f.bob, []int64{f.gpu(t, "node-p120", 0)}, -1, 2, "busy now")
			p120, nodeA := f.nodeID(t, "node-p120"), f.nodeID(t, "node-a")
			c := f.signedIn(f.alice)
			nodes := func(doc *goquery.Document) []string {
				var names []string
				doc.Find("div.nh strong").Each(func(_ int, s *goquery.Selection) { names = append(names, s.Text()) })
				return names
			}

			res := c.Get("/calendar")
			if res.Code != http.StatusOK {
				t.Fatalf("status %d", res.Code)
			}
			got := nodes(res.Doc)
			if len(got) != 100 || got[0] != "node-a" || got[1] != "node-b" || got[99] != "node-p097" {
				t.Errorf("page 1: %d nodes, %v … %v", len(got), got[:min(2, len(got))], got[max(0, len(got)-1):])
			}
			text, prev, next, n := pager(res.Doc)
			if text != "nodes 1–100 of 150" || prev != "" || next != "/calendar?date=2026-06-03&page=2" || n != 2 {
				t.Errorf("page 1 pager %q prev %q next %q, %d pagers (want above and below)", text, prev, next, n)
			}
			if opts := res.Doc.Find(`select[name="node"] option`).Length(); opts != 101 {
				t.Errorf("page 1: the node filter offers %d options, want all and the page's 100", opts)
			}

			page2 := c.Get(next).Doc
			got = nodes(page2)
			if len(got) != 50 || got[0] != "node-p098" || got[49] != "node-p147" {
				t.Errorf("page 2: %d nodes, %v", len(got), got)
			}
			if free := page2.Find(testid("cal-node-node-p120") + " " + testid("cal-node-free")).Text(); free != "0 of 1 GPU free" {
				t.Errorf("page 2: node-p120 %q, want its booking now", free)
			}
			text, prev, next, _ = pager(page2)
			if text != "nodes 101–150 of 150" || prev != "/calendar?date=2026-06-03" || next != "" {
				t.Errorf("page 2 pager %q prev %q next %q", text, prev, next)
			}
			if v, _ := page2.Find(`form[data-testid="cal-filter"] input[name="page"]`).Attr("value"); v != "2" {
				t.Errorf("page 2: the filter form keeps page %q, want 2", v)
			}

			// Every parameter kept; node-a is open but on page 1.
			q := fmt.Sprintf("/calendar?view=day&date=2026-06-03&free=1&open=%d&open=%d&page=2", nodeA, p120)
			res = c.Get(q)
			if rows := res.Doc.Find(`[data-testid^="cal-row-"]`).Length(); rows != 0 {
				t.Errorf("day view of page 2, free only: %d GPU rows, want none (node-p120 is busy, node-a is not on the page)", rows)
			}
			_, prev, _, _ = pager(res.Doc)
			if want := fmt.Sprintf("/calendar?date=2026-06-03&free=1&open=%d&open=%d&view=day", nodeA, p120); prev != want {
				t.Errorf("prev link %q, want %q", prev, want)
			}
			res = c.Get(fmt.Sprintf("/calendar?open=%d&open=%d&page=2", nodeA, p120))
			if rows := res.Doc.Find(`[data-testid^="cal-row-"]`).Length(); rows != 1 {
				t.Errorf("page 2 with node-a and node-p120 open: %d GPU rows, want node-p120's 1", rows)
			}
			if res.Doc.Find(testid("cal-node-node-a")).Length() != 0 {
				t.Error("node-a, open on page 1, shows on page 2")
			}

			if text, _, _, _ := pager(c.Get("/calendar?page=99").Doc); text != "nodes 101–150 of 150" {
				t.Errorf("page 99: pager %q, want the last page", text)
			}
			one := c.Get(fmt.Sprintf("/calendar?node=%d&page=2", p120)).Doc
			if got := nodes(one); len(got) != 1 || got[0] != "node-p120" {
				t.Errorf("node filter: nodes %v", got)
			}
			if _, _, _, n := pager(one); n != 0 {
				t.Errorf("node filter: %d pagers, want none", n)
			}
			if opts := one.Find(`select[name="node"] option`).Length(); opts != 51 {
				t.Errorf("node filter: %d options, want all and node-p120's page of 50", opts)
			}
			few := c.Get("/calendar?model=NVIDIA+H100+80GB+HBM3&page=2").Doc
			if got := nodes(few); len(got) != 1 || got[0] != "node-b" {
				t.Errorf("model filter: nodes %v", got)
			}
			if _, _, _, n := pager(few); n != 0 {
				t.Errorf("model filter: %d pagers, want none", n)
			}

			c.Header.Set("Accept-Language", "zh-CN")
			zh := c.Get("/calendar?page=2")
			if text, _, _, _ := pager(zh.Doc); text != "第 101–150 个节点，共 150 个" {
				t.Errorf("zh-CN pager %q", text)
			}
			zh.Doc.Find("script, style, code").Remove()
			check(t, "zh-CN paged /calendar", visibleText(zh.Doc.Find(".node-pager").First()))
		})
	}
}

// TestStatusNodePages checks the live status page of 150 nodes on both
// databases: 100 summary rows a page with a pager whose links keep the
// open nodes, page 2 with the bookings now of its own nodes, ?open=all
// opening the page's nodes only, and a node open off the page not shown.
func TestStatusNodePages(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := pagedFixture(t, d)
			f.book(t, f.bob, []int64{f.gpu(t, "node-p120", 0)}, -1, 2, "busy now")
			p120, nodeA := f.nodeID(t, "node-p120"), f.nodeID(t, "node-a")
			c := f.signedIn(f.bob)
			summaries := `[data-testid^="status-summary-"]`

			res := c.Get("/status")
			if res.Code != http.StatusOK {
				t.Fatalf("status %d", res.Code)
			}
			if n := res.Doc.Find(summaries).Length(); n != 100 {
				t.Errorf("page 1: %d summary rows, want 100", n)
			}
			if res.Doc.Find(testid("status-summary-node-p097")).Length() != 1 || res.Doc.Find(testid("status-summary-node-p098")).Length() != 0 {
				t.Error("page 1 does not end at node-p097")
			}
			text, prev, next, n := pager(res.Doc)
			if text != "nodes 1–100 of 150" || prev != "" || next != "/status?page=2" || n != 2 {
				t.Errorf("page 1 pager %q prev %q next %q, %d pagers", text, prev, next, n)
			}

			page2 := c.Get(next).Doc
			if n := page2.Find(summaries).Length(); n != 50 {
				t.Errorf("page 2: %d summary rows, want 50", n)
			}
			if got := page2.Find(testid("status-summary-node-p120") + " " + testid("status-counts")).Text(); got != "1 GPU · 1 booked · 0 free" {
				t.Errorf("page 2: node-p120 counts %q", got)
			}
			if got := page2.Find(testid("status-summary-node-p120") + " " + testid("summary-holders")).Text(); got != "Bob Builder" {
				t.Errorf("page 2: node-p120 holders %q", got)
			}
			text, prev, next, _ = pager(page2)
			if text != "nodes 101–150 of 150" || prev != "/status" || next != "" {
				t.Errorf("page 2 pager %q prev %q next %q", text, prev, next)
			}

			opened := c.Get(fmt.Sprintf("/status?open=%d&open=%d&page=2", nodeA, p120)).Doc
			if n := opened.Find(`[data-testid^="status-gpu-"]`).Length(); n != 1 {
				t.Errorf("page 2 with node-a and node-p120 open: %d GPU rows, want node-p120's 1", n)
			}
			if opened.Find(testid("status-node-node-a")).Length()+opened.Find(testid("status-summary-node-a")).Length() != 0 {
				t.Error("node-a, on page 1, shows on page 2")
			}
			_, prev, _, _ = pager(opened)
			if want := fmt.Sprintf("/status?open=%d&open=%d", nodeA, p120); prev != want {
				t.Errorf("prev link %q, want %q", prev, want)
			}
			all := c.Get("/status?open=all&page=2").Doc
			if n := all.Find(`[data-testid^="status-gpu-"]`).Length(); n != 50 {
				t.Errorf("open=all, page 2: %d GPU rows, want 50", n)
			}
			if _, prev, _, _ := pager(all); prev != "/status?open=all" {
				t.Errorf("open=all, page 2: prev link %q", prev)
			}
			if text, _, _, _ := pager(c.Get("/status?page=0").Doc); text != "nodes 1–100 of 150" {
				t.Errorf("page 0: pager %q, want the first page", text)
			}
		})
	}
}

// TestSmallLabHasNoNodePages: a lab of NodesPerPage nodes or fewer sees
// every node and no pager, whatever ?page says.
func TestSmallLabHasNoNodePages(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			c := f.signedIn(f.alice)
			for _, path := range []string{"/calendar", "/calendar?page=2", "/status", "/status?page=2"} {
				doc := c.Get(path).Doc
				if _, _, _, n := pager(doc); n != 0 {
					t.Errorf("%s: %d pagers, want none", path, n)
				}
				if n := doc.Find(testid("cal-node-node-b")).Length() + doc.Find(testid("status-node-node-b")).Length(); n != 1 {
					t.Errorf("%s: node-b shows %d times, want once", path, n)
				}
			}
		})
	}
}

// TestStatusPageFlagsItsOwnNodes: a page of a large lab's status counts
// its own nodes' recent violations, however many more recent ones other
// nodes have (it read the lab's 500 most recent and missed the rest).
func TestStatusPageFlagsItsOwnNodes(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := pagedFixture(t, d)
			now := *f.now
			violate := func(node string, n int, ago time.Duration) {
				t.Helper()
				id, gpu := f.nodeID(t, node), f.gpu(t, node, 0)
				for i := range n {
					at := now.Add(-ago).UTC()
					if err := f.env.DB.Gorm.Exec(`INSERT INTO agent_violations (node_id, agent_key, kind, gpu_id, user_name, uid, pid, memory_mib, action, first_seen, last_seen, received_at)
						VALUES (?, ?, 'unbooked_use', ?, 'mallory', 1666, ?, 1000, 'none', ?, ?, ?)`,
						id, fmt.Sprintf("%s:%d", node, i), gpu, 1000+i, at, at, at).Error; err != nil {
						t.Fatal(err)
					}
				}
			}
			violate("node-a", 501, time.Minute)
			violate("node-p120", 1, 2*time.Minute)
			page2 := f.signedIn(f.bob).Get("/status?page=2").Doc
			if got := page2.Find(testid("status-summary-node-p120") + " " + testid("summary-flagged")).Length(); got != 1 {
				t.Errorf("page 2: node-p120 flagged badge %d, want 1 (its violation is older than 501 on node-a)", got)
			}
		})
	}
}
