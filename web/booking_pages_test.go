package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// Booking blocks carry no test ids (a busy week has thousands): the
// viewer's own are links to the bookings page, others' are <b> elements.
const (
	calMine  = `.gr > a[href^="bookings#booking-"]`
	calOther = `.gr > b`
)

func TestCalendarWeekView(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			a0, a1, a2 := f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1), f.gpu(t, "node-a", 2)
			mine := f.book(t, f.alice, []int64{a0, a1}, -1, 3, "llama finetune")
			f.book(t, f.bob, []int64{a2}, 5, 30, "sweep")
			if err := f.env.DB.SetGPUService(context.Background(), f.gpu(t, "node-a", 3), false, "fan broken", models.CLIActor); err != nil {
				t.Fatal(err)
			}
			res := f.signedIn(f.alice).Get("/calendar")
			if res.Code != http.StatusOK {
				t.Fatalf("status = %d: %s", res.Code, res.Body.String())
			}
			doc := res.Doc
			if got := doc.Find(testid("cal-day")).Length(); got != 7 {
				t.Errorf("days = %d, want 7", got)
			}
			if got := strings.TrimSpace(doc.Find(testid("cal-day")).First().Text()); got != "Mon 1 Jun" {
				t.Errorf("first day = %q, want Mon 1 Jun (weeks start on Monday)", got)
			}
			if doc.Find(testid("cal-node-node-a")).Length() != 1 || doc.Find(testid("cal-node-node-b")).Length() != 1 {
				t.Error("node headers missing")
			}
			if got := doc.Find(`[data-testid^="cal-row-"]`).Length(); got != 6 {
				t.Errorf("GPU rows = %d, want 6", got)
			}
			m := doc.Find(calMine)
			if title, _ := m.First().Attr("title"); m.Length() != 2 || title != "★ llama finetune" || strings.TrimSpace(m.First().Text()) != "★" {
				t.Errorf("my blocks = %d %q title %q, want 2 narrow blocks showing ★ with the note in the title", m.Length(), m.First().Text(), title)
			}
			if href, _ := m.First().Attr("href"); href != "bookings#booking-"+itoa(mine.ID) {
				t.Errorf("my block links %q, want my booking %d", href, mine.ID)
			}
			o := doc.Find(calOther)
			if o.Length() != 1 || strings.TrimSpace(o.Text()) != "Bob Builder · sweep" {
				t.Errorf("other blocks = %d %q, want the full text where it fits", o.Length(), o.Text())
			}
			if title, _ := o.Attr("title"); title != "Bob Builder · sweep" {
				t.Errorf("other block title %q lacks its text label", title)
			}
			out := doc.Find(testid("cal-row-" + itoa(f.gpu(t, "node-a", 3))))
			if !out.HasClass("r-out") || !strings.Contains(out.Text(), "out of service") || out.Find("a.f").Length() != 0 {
				t.Errorf("out-of-service row: class %v text %q, %d book links", out.HasClass("r-out"), out.Text(), out.Find("a.f").Length())
			}
			if doc.Find(testid("cal-now")).Length() != 1 {
				t.Error("no now line")
			}
			if n := doc.Find("a.f").Length(); n != 0 {
				t.Errorf("week view has %d free-cell links, want none (the overview stays small; drag or the day view books)", n)
			}
			day := f.signedIn(f.alice).Get("/calendar?view=day").Doc
			free := day.Find(testid("cal-row-"+itoa(a2)) + " a.f").First()
			href, _ := free.Attr("href")
			if href != "/bookings/new?gpu="+itoa(a2)+"&start=2026-06-03T10:12Z&end=2026-06-03T11:00Z" {
				t.Errorf("first free link of the day view = %q", href)
			}
			if label, _ := free.Attr("aria-label"); label != "Book node-a GPU 2, Wed 3 Jun 10:12–11:00" {
				t.Errorf("aria-label = %q", label)
			}
			if got := doc.Find(`.p`).Length(); got == 0 {
				t.Error("no past cells")
			}
		})
	}
}

func TestCalendarChinese(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	c := f.signedIn(f.bob)
	c.Header.Set("Accept-Language", "zh-CN,zh;q=0.9")
	res := c.Get("/calendar?view=day&date=2026-06-04")
	if res.Code != http.StatusOK {
		t.Fatalf("status = %d", res.Code)
	}
	if got := strings.TrimSpace(res.Doc.Find(testid("cal-day")).Text()); got != "6月4日 周四" {
		t.Errorf("day = %q, want 6月4日 周四", got)
	}
	if got := res.Doc.Find(testid("cal-switch")).Text(); !strings.Contains(got, "周视图") {
		t.Errorf("switch = %q", got)
	}
	if label, _ := res.Doc.Find("a.f").First().Attr("aria-label"); !strings.HasPrefix(label, "预订 node-a GPU 0，6月4日 周四 00:00–01:00") {
		t.Errorf("aria-label = %q", label)
	}
	if res.Doc.Find(testid("cal-now")).Length() != 0 {
		t.Error("now line on another day")
	}
}

func TestCalendarNavigationAndFilters(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	c := f.signedIn(f.bob)
	res := c.Get("/calendar?date=2026-06-10&model=NVIDIA+H100+80GB+HBM3")
	doc := res.Doc
	for id, want := range map[string]string{
		"cal-prev":  "/calendar?date=2026-06-03&model=NVIDIA+H100+80GB+HBM3",
		"cal-next":  "/calendar?date=2026-06-17&model=NVIDIA+H100+80GB+HBM3",
		"cal-today": "/calendar?date=2026-06-03&model=NVIDIA+H100+80GB+HBM3",
	} {
		if got, _ := doc.Find(testid(id)).Attr("href"); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	if doc.Find(testid("cal-node-node-a")).Length() != 0 || doc.Find(`[data-testid^="cal-row-"]`).Length() != 2 {
		t.Error("model filter did not keep only node-b's H100s")
	}
	node := f.nodes[0].ID
	res = c.Get("/calendar?view=day&date=garbage&node=" + itoa(node))
	if res.Code != http.StatusOK || res.Doc.Find(`[data-testid^="cal-row-"]`).Length() != 4 {
		t.Errorf("node filter with a bad date: status %d, rows %d", res.Code, res.Doc.Find(`[data-testid^="cal-row-"]`).Length())
	}
	if got := strings.TrimSpace(res.Doc.Find(testid("cal-day")).Text()); got != "Wed 3 Jun" {
		t.Errorf("bad date shows %q, want today", got)
	}
}

func TestCalendarNeedsSignIn(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	res := f.env.Client().Get("/calendar")
	if res.Code != http.StatusSeeOther || !strings.HasPrefix(res.Header().Get("Location"), "/login") {
		t.Errorf("anonymous calendar: %d %s", res.Code, res.Header().Get("Location"))
	}
}

func TestCalendarTimeZones(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	b := f.book(t, f.bob, []int64{f.gpu(t, "node-b", 0)}, 3.8, 5.8, "tz") // 14:00–16:00 UTC
	for _, tt := range []struct{ zone, want, hint string }{
		{"Asia/Shanghai", "Wed 3 Jun 22:00–Thu 4 Jun 00:00", "Asia/Shanghai (CST)"}, // across midnight: both dates
		{"Europe/Berlin", "Wed 3 Jun 16:00–18:00", "Europe/Berlin (CEST)"},
	} {
		t.Run(tt.zone, func(t *testing.T) {
			u := f.env.AddUser(strings.ToLower(strings.ReplaceAll(tt.zone, "/", "."))+"@example.org", tt.zone, false)
			u.TimeZone = tt.zone
			if err := f.env.DB.UpdateUser(context.Background(), u, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			c := f.signedIn(u)
			doc := c.Get("/calendar?view=day&date=2026-06-03").Doc
			title, _ := doc.Find(calOther).Attr("title")
			if !strings.Contains(title, tt.want) {
				t.Errorf("title %q lacks %q", title, tt.want)
			}
			if got := doc.Find(testid("cal-zone")).Text(); !strings.Contains(got, tt.hint) {
				t.Errorf("zone = %q, want %q", got, tt.hint)
			}
			row := c.Get("/gpus/" + itoa(f.gpu(t, "node-b", 0))).Doc.Find(testid("gpu-booking-" + itoa(b.ID))).Text()
			if !strings.Contains(row, strings.Fields(tt.want)[3][:5]) {
				t.Errorf("GPU page row %q lacks the local start %s", row, strings.Fields(tt.want)[3][:5])
			}
		})
	}
}

func TestCalendarDSTWeek(t *testing.T) {
	t.Parallel()
	f := newCalFixture(t, store.SQLite)
	u := f.env.AddUser("berlin@example.org", "Berta", false)
	u.TimeZone = "Europe/Berlin"
	if err := f.env.DB.UpdateUser(context.Background(), u, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	*f.now = time.Date(2026, 10, 20, 8, 0, 0, 0, time.UTC)
	// 01:30 CEST to 03:30 CET on Sunday 25 October: three hours across the change.
	f.book(t, f.bob, []int64{f.gpu(t, "node-a", 0)}, 4*24+15.5, 4*24+18.5, "across the change")
	doc := f.signedIn(u).Get("/calendar?date=2026-10-22").Doc
	days := doc.Find(testid("cal-day"))
	if days.Length() != 7 || !strings.HasPrefix(strings.TrimSpace(days.First().Text()), "Mon 19 Oct") {
		t.Fatalf("days %d from %q", days.Length(), days.First().Text())
	}
	if got := doc.Find(testid("cal-dst")).Text(); got != "25 h" {
		t.Errorf("DST badge = %q, want 25 h", got)
	}
	slots, _ := doc.Find(testid("cal-grid")).Attr("data-slots")
	if n := len(strings.Split(slots, ",")); n != 6*24+25+1 {
		t.Errorf("slot starts = %d, want %d (hour columns)", n, 6*24+25+1)
	}
	blk := doc.Find(calOther)
	// Sunday starts at line 2+6*24 = 146; 01:30 is in the second hour; the
	// block ends in the fifth (00, 01, 02 CEST, 02 CET, 03 CET).
	if !blk.HasClass("c147") || !blk.HasClass("e151") {
		t.Errorf("block classes = %q, want c147 e151", blk.AttrOr("class", ""))
	}
	title, _ := f.signedIn(u).Get("/calendar?view=day&date=2026-10-25").Doc.Find(calOther).Attr("title")
	if !strings.Contains(title, "Sun 25 Oct 01:30–03:30") {
		t.Errorf("day view title = %q", title)
	}
}
