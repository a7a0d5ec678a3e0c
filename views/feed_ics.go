package views

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	ics "github.com/arran4/golang-ical"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// FeedRefresh is how often calendar apps are asked to fetch a feed again
// (REFRESH-INTERVAL and X-PUBLISHED-TTL; many apps poll less often anyway).
const FeedRefresh = "PT15M"

// FeedView is what one calendar feed shows.
type FeedView struct {
	Team    string // the team's name; "" for the owner's own bookings
	Events  []models.FeedEvent
	GPUs    map[int64]models.GPU
	BaseURL string // the portal's, for the links back and the UIDs
	Now     time.Time
	// Location is the reader's zone: the day a team feed's link opens.
	Location *time.Location
}

// FeedCalendar renders a feed as an iCalendar object in t's language. All
// times are UTC instants (DTSTART…Z), so no VTIMEZONE is needed and every
// app places them right on either side of a DST change. A GPU booking is
// not a meeting: events are TRANSPARENT, they do not make anyone busy.
func FeedCalendar(t *i18n.Translator, v FeedView) *ics.Calendar {
	if v.Location == nil {
		v.Location = time.UTC
	}
	cal := ics.NewCalendarFor("gpubook")
	cal.SetProductId("-//gpubook//calendar feed//EN")
	cal.SetCalscale("GREGORIAN")
	cal.SetMethod(ics.MethodPublish)
	name := t.T("feed.name_own")
	if v.Team != "" {
		name = t.T("feed.name_team", "Team", v.Team)
	}
	cal.SetName(name)                   // NAME and X-WR-CALNAME
	cal.SetRefreshInterval(FeedRefresh) // the library names it REFRESH-INTERVAL;VALUE=DURATION
	cal.SetXPublishedTTL(FeedRefresh)
	host := feedHost(v.BaseURL)
	for _, e := range v.Events {
		cal.AddVEvent(feedEvent(t, v, e, host))
	}
	return cal
}

// FeedICS is FeedCalendar as the bytes served: lines end in CRLF, as RFC
// 5545 wants (the library's default on Unix is a bare LF).
func FeedICS(t *i18n.Translator, v FeedView) []byte {
	return []byte(FeedCalendar(t, v).Serialize(ics.WithNewLineWindows))
}

func feedEvent(t *i18n.Translator, v FeedView, e models.FeedEvent, host string) *ics.VEvent {
	b := e.Booking
	ev := ics.NewEvent("booking-" + strconv.FormatInt(b.ID, 10) + "@" + host)
	ev.SetDtStampTime(v.Now)
	ev.SetCreatedTime(b.CreatedAt)
	ev.SetLastModifiedAt(b.UpdatedAt)
	ev.SetSequence(e.Sequence)
	ev.SetStartAt(b.StartsAt)
	ev.SetEndAt(b.EndsAt)
	ev.SetTimeTransparency(ics.TransparencyTransparent)
	ev.SetLocation(b.NodeName)
	gpus := feedGPUCount(b.GPUIDs, v.GPUs)
	summary := t.T("feed.summary", "GPUs", gpus, "Node", b.NodeName)
	if v.Team != "" {
		summary = t.T("feed.summary_team", "User", b.UserName, "GPUs", gpus, "Node", b.NodeName)
	}
	ev.SetStatus(ics.ObjectStatusConfirmed)
	if b.Status == models.StatusCancelled {
		ev.SetStatus(ics.ObjectStatusCancelled)
		summary = t.T("feed.summary_cancelled", "Summary", summary)
	}
	ev.SetSummary(summary)
	link := feedLink(v, b)
	ev.SetURL(link)
	ev.SetDescription(feedDescription(t, v, b, link))
	return ev
}

// feedDescription is the event's text: GPUs, node, who (in a team's feed),
// note, status and the link back, one per line.
func feedDescription(t *i18n.Translator, v FeedView, b models.Booking, link string) string {
	var lines []string
	add := func(key, value string) { lines = append(lines, t.T("feed.line", "Key", t.T(key), "Value", value)) }
	add("feed.gpus", feedGPUList(b.GPUIDs, v.GPUs))
	add("feed.node", b.NodeName)
	if v.Team != "" {
		add("feed.booked_by", b.UserName+" <"+b.UserEmail+">")
	}
	if b.Note != "" {
		add("feed.note", strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(b.Note))
	}
	status := t.T("feed.status_confirmed")
	switch {
	case b.Status == models.StatusCancelled:
		status = t.T("feed.status_cancelled")
	case b.ReleasedAt != nil:
		status = t.T("feed.status_released")
	}
	if b.Kind == models.KindPriority {
		status += ", " + t.T("feed.kind_priority")
	}
	add("feed.status", status)
	add("feed.open", link)
	return strings.Join(lines, "\n")
}

// feedGPUCount says how many GPUs of which model: "2 × NVIDIA A100" (a MIG
// instance by name: "GPU 3 · 1g.10gb"), or
// "1 × A100, 1 × V100" on a node with mixed cards.
func feedGPUCount(ids []int64, gpus map[int64]models.GPU) string {
	var order []string
	count := map[string]int{}
	named := map[string]bool{}
	for _, id := range ids {
		m := gpus[id].Model
		if m == "" {
			m = "GPU"
		}
		if g := gpus[id]; g.IsMIGInstance() { // a slice is named: "GPU 3 · 1g.10gb"
			m = UnitName(g, gpus)
			named[m] = true
		}
		if count[m] == 0 {
			order = append(order, m)
		}
		count[m]++
	}
	parts := make([]string, len(order))
	for i, m := range order {
		parts[i] = strconv.Itoa(count[m]) + " × " + m
		if named[m] && count[m] == 1 {
			parts[i] = m
		}
	}
	return strings.Join(parts, ", ")
}

// feedGPUList names each GPU by its index on the node and its model, and
// a MIG instance by its GPU and profile (gpus holds the GPU too).
func feedGPUList(ids []int64, gpus map[int64]models.GPU) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		g, ok := gpus[id]
		if !ok {
			parts[i] = "GPU " + strconv.FormatInt(id, 10)
			continue
		}
		if g.IsMIGInstance() {
			parts[i] = UnitName(g, gpus) + " " + g.Model
			continue
		}
		parts[i] = "#" + strconv.Itoa(g.Index) + " " + g.Model
	}
	return strings.Join(parts, ", ")
}

// feedLink points back to the booking: its row in the owner's list, or for
// a team's feed (whose reader cannot open others' rows) the calendar's day.
func feedLink(v FeedView, b models.Booking) string {
	if v.Team == "" {
		return v.BaseURL + "/bookings?show=all#booking-" + strconv.FormatInt(b.ID, 10)
	}
	q := url.Values{"view": {ViewDay}, "date": {b.StartsAt.In(v.Location).Format(time.DateOnly)}, "node": {strconv.FormatInt(b.NodeID, 10)}}
	return v.BaseURL + "/calendar?" + q.Encode()
}

// feedHost is the host part of UIDs: the portal's, so that events of two
// portals never share one.
func feedHost(baseURL string) string {
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		return u.Host
	}
	return "gpubook"
}
