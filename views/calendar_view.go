package views

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
)

// Calendar views.
const (
	ViewWeek = "week"
	ViewDay  = "day"
)

// CalendarView is the calendar page's data.
type CalendarView struct {
	View   string    // ViewWeek or ViewDay
	Date   time.Time // the day asked for, local midnight
	Grid   Grid
	Nodes  []models.Node // the nodes the filter offers: every node, or a large lab's page
	Models []string      // every GPU model, for the filter
	NodeID int64
	Model  string
	// FreeOnly keeps the GPUs free now (?free=1).
	FreeOnly bool
	// Collapsed says the nodes show as summaries unless OpenNodes names
	// them.
	Collapsed bool
	OpenNodes
	// Rolling shows the seven days from Date instead of Date's Monday to
	// Sunday (?days=next): on a Sunday most of the week is past.
	Rolling bool
	// Page is the part of a large lab's nodes shown (?page=N); the nodes
	// open but not on it are not shown.
	Page NodePage
}

// CollapseAbove is the number of GPU rows above which a calendar opens with
// its nodes collapsed: 64 rows are a screenful or two, 512 are no overview.
const CollapseAbove = 64

// CalendarRange is the first instant and the number of days a view shows:
// a week starts on Monday in the viewer's zone.
func CalendarRange(view string, date time.Time, loc *time.Location) (time.Time, int) {
	d := date.In(loc)
	day := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc)
	if view == ViewDay {
		return day, 1
	}
	back := (int(day.Weekday()) + 6) % 7
	return time.Date(day.Year(), day.Month(), day.Day()-back, 0, 0, 0, 0, loc), 7
}

// URL is the calendar's address for another date or view, keeping the filters.
func (v CalendarView) URL(view string, date time.Time) string {
	q := url.Values{}
	if view == ViewDay {
		q.Set("view", ViewDay)
	}
	q.Set("date", date.Format("2006-01-02"))
	if v.Rolling && view == ViewWeek {
		q.Set("days", "next")
	}
	if v.NodeID != 0 {
		q.Set("node", strconv.FormatInt(v.NodeID, 10))
	}
	if v.Model != "" {
		q.Set("model", v.Model)
	}
	if v.FreeOnly {
		q.Set("free", "1")
	}
	v.addTo(q)
	if pg := v.Page.query(); pg != "" {
		q.Set("page", pg)
	}
	return "/calendar?" + q.Encode()
}

// PageURL is this view on page n of the nodes.
func (v CalendarView) PageURL(n int) string {
	v.Page.N = n
	return v.URL(v.View, v.Date)
}

// OpenURL is this view with one more node expanded.
func (v CalendarView) OpenURL(id int64) string {
	v.OpenNodes = v.with(id)
	return v.URL(v.View, v.Date)
}

// CloseURL is this view with a node collapsed again.
func (v CalendarView) CloseURL(id int64) string {
	v.OpenNodes = v.without(id)
	return v.URL(v.View, v.Date)
}

// AllURL is this view with every node expanded.
func (v CalendarView) AllURL() string {
	v.OpenNodes = OpenNodes{OpenAll: true}
	return v.URL(v.View, v.Date)
}

// Prev, Next and Today are the navigation targets.
func (v CalendarView) Prev() string { return v.URL(v.View, v.shift(-1)) }

// Next is one view later.
func (v CalendarView) Next() string { return v.URL(v.View, v.shift(1)) }

// Switch is the same date in the other view.
func (v CalendarView) Switch() string {
	if v.View == ViewDay {
		return v.URL(ViewWeek, v.Date)
	}
	return v.URL(ViewDay, v.Date)
}

func (v CalendarView) shift(n int) time.Time {
	if v.View == ViewDay {
		return v.Date.AddDate(0, 0, n)
	}
	return v.Date.AddDate(0, 0, 7*n)
}

// SlotData lists every column's start as Unix seconds (and the end), so that
// calendar.js turns a dragged column into a time without doing calendar
// arithmetic in the browser.
func (g Grid) SlotData() string {
	var b strings.Builder
	for i, t := range g.Slots {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(t.Unix(), 10))
	}
	return b.String()
}

// span is the class pair that places an item between two grid lines.
func span(line, end int) string {
	return "c" + strconv.Itoa(line) + " e" + strconv.Itoa(end)
}

func cellClass(c GridCell) string {
	k := "f "
	switch c.Kind {
	case CellPast:
		k = "p "
	case CellOut, CellSplit:
		k = "x "
	}
	s := k + span(c.Line, c.End)
	if c.Active {
		s += " act"
	}
	if c.CutBefore {
		s += " cb"
	}
	if c.CutAfter {
		s += " ca"
	}
	return s
}

// bookURL is the booking form pre-filled for one GPU and a cell's range.
func bookURL(gpuID int64, start, stop time.Time) string {
	return "/bookings/new?gpu=" + strconv.FormatInt(gpuID, 10) + "&start=" + compactTime(start) + "&end=" + compactTime(stop)
}

// compactTime is RFC 3339 in UTC without seconds, short enough for
// thousands of links and unambiguous across a DST change.
func compactTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04Z") }

// nowClass places the now line in its column, shifted by the tenths passed.
func (g Grid) nowClass() string {
	return "nw " + span(g.NowLine, g.NowLine+1) + " t" + strconv.Itoa(g.NowTenth)
}

// weekdayKeys are the translation keys of the short weekday names.
var weekdayKeys = [7]string{"cal.wd0", "cal.wd1", "cal.wd2", "cal.wd3", "cal.wd4", "cal.wd5", "cal.wd6"}

// DayLabel is a header's day: "Mon 26 Oct" or "10月26日 周一".
func (p *Page) DayLabel(t time.Time) string {
	wd := p.Tr(weekdayKeys[t.Weekday()])
	if p.T.Lang == "zh-CN" {
		return t.Format("1月2日") + " " + wd
	}
	return wd + " " + t.Format("2 Jan")
}

// DayTitle heads the day view: "Thu 3 Dec" or "12月3日 周四", with the year
// only when it is not the current one ("Fri 3 Dec 2027", "2027年12月3日 周五").
func (p *Page) DayTitle(t time.Time) string {
	if t.Year() == p.Now.In(p.Location).Year() {
		return p.DayLabel(t)
	}
	if p.T.Lang == "zh-CN" {
		return t.Format("2006年1月2日") + " " + p.Tr(weekdayKeys[t.Weekday()])
	}
	return p.DayLabel(t) + " " + t.Format("2006")
}

// LongDate is a date in a sentence: "26 Oct 2026" or "2026年10月26日".
func (p *Page) LongDate(t time.Time) string {
	if p.T.Lang == "zh-CN" {
		return t.Format("2006年1月2日")
	}
	return t.Format("2 Jan 2006")
}

// ZoneName names the viewer's zone with its current abbreviation: "Europe/Berlin (CET)".
func (p *Page) ZoneName() string {
	abbr := p.Now.In(p.Location).Format("MST")
	if name := p.Location.String(); name != abbr && name != "" && name != "Local" {
		return name + " (" + abbr + ")"
	}
	return abbr
}

// Clock is a time of day in the viewer's zone.
func (p *Page) Clock(t time.Time) string { return p.Local(t, "15:04") }

// cellRange is a cell's range for labels: "Mon 26 Oct 06:00–12:00".
func (p *Page) cellRange(start, stop time.Time) string {
	return RangeLabel(start.In(p.Location), stop.In(p.Location), p.DayLabel)
}

func gpuName(n GridNode, r GridRow) string {
	return n.Name + " " + r.Label
}

// Range is the first instant and the number of days this view shows.
func (v CalendarView) Range(loc *time.Location) (time.Time, int) {
	if v.Rolling && v.View == ViewWeek {
		d := v.Date.In(loc)
		return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc), 7
	}
	return CalendarRange(v.View, v.Date, loc)
}

// NextDaysURL is the seven days from today, with the same filters.
func (v CalendarView) NextDaysURL(now time.Time, loc *time.Location) string {
	v.Rolling = true
	return v.URL(ViewWeek, now.In(loc))
}

// OfferNextDays says whether the week view offers "next 7 days": when it
// shows the current week and today is not its Monday, so that part of
// what it shows is past (six sevenths on a Sunday).
func (v CalendarView) OfferNextDays(now time.Time, loc *time.Location) bool {
	if v.View != ViewWeek || v.Rolling {
		return false
	}
	start, days := v.Range(loc)
	return !now.Before(start.AddDate(0, 0, 1)) && now.Before(start.AddDate(0, 0, days))
}
