package web_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// feedBase is the portal's configured address in the feed tests.
const feedBase = "https://gpu.example.org"

// feedFixture is a server whose cluster zone and clock the test picks,
// with one node of two GPUs.
type feedFixture struct {
	env  *webtest.Env
	now  time.Time
	gpus []int64
}

func newFeedFixture(t *testing.T, dialect string, zone *time.Location, now time.Time, opts ...func(*web.Config)) *feedFixture {
	t.Helper()
	f := &feedFixture{now: now}
	opts = append([]func(*web.Config){func(c *web.Config) {
		c.Location, c.BaseURL, c.Now = zone, feedBase, func() time.Time { return f.now }
	}}, opts...)
	f.env = webtest.New(t, dialect, opts...)
	gpus, err := models.NewNodeGPUs("node-a", 2, "NVIDIA A100", 81920)
	if err != nil {
		t.Fatal(err)
	}
	n := &models.Node{Name: "node-a"}
	if err := f.env.DB.CreateNode(context.Background(), n, gpus, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	nodes, _ := f.env.DB.Nodes(context.Background())
	for _, g := range nodes[0].GPUs {
		f.gpus = append(f.gpus, g.ID)
	}
	return f
}

// book stores a booking of u on the fixture's GPUs, made an hour before it starts.
func (f *feedFixture) book(t *testing.T, u *models.User, start, end time.Time, note string, gpus ...int64) *models.Booking {
	t.Helper()
	b, err := f.env.DB.CreateBooking(context.Background(), models.NewBooking{UserID: u.ID, GPUIDs: gpus, StartsAt: start, EndsAt: end, Note: note},
		models.DefaultBookingLimits, start.Add(-time.Hour), models.CLIActor)
	if err != nil {
		t.Fatalf("book: %v", err)
	}
	return b
}

// user looks a signed-in user up by email.
func (f *feedFixture) user(t *testing.T, email string) *models.User {
	t.Helper()
	u, err := f.env.DB.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// makeFeed asks for a new feed address on the profile page (team 0: the
// user's own bookings) and returns its path, checking both URL forms.
func makeFeed(t *testing.T, c *webtest.Client, team int64) string {
	t.Helper()
	c.Get("/profile")
	res := c.Post("/profile/feeds", url.Values{"team": {itoa(team)}})
	if res.Code != http.StatusCreated {
		t.Fatalf("make feed: %d %s", res.Code, res.Body.String())
	}
	if cc := res.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("the page with the new address: Cache-Control %q, want no-store", cc)
	}
	https := strings.TrimSpace(res.Doc.Find(`[data-testid=feed-url]`).Text())
	webcal, _ := res.Doc.Find(`[data-testid=feed-webcal]`).Attr("href")
	path, ok := strings.CutPrefix(https, feedBase)
	if !ok || !strings.HasPrefix(path, "/feeds/gpf_") || !strings.HasSuffix(path, ".ics") || webcal != "webcal://gpu.example.org"+path {
		t.Fatalf("feed address %q, webcal %q", https, webcal)
	}
	return path
}

// fetchFeed reads a feed as a calendar app does: no cookie, no session.
func fetchFeed(t *testing.T, env *webtest.Env, path string) (*webtest.Response, *ics.Calendar) {
	t.Helper()
	res := env.Client().Get(path)
	if res.Code != http.StatusOK {
		return res, nil
	}
	if ct := res.Header().Get("Content-Type"); ct != "text/calendar; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if sc := res.Header().Values("Set-Cookie"); len(sc) != 0 {
		t.Errorf("the feed set cookies: %v", sc)
	}
	cal, err := ics.ParseCalendar(bytes.NewReader(res.Body.Bytes()))
	if err != nil {
		t.Fatalf("parse feed: %v\n%s", err, res.Body.String())
	}
	return res, cal
}

// eventsByUID indexes a calendar's events.
func eventsByUID(cal *ics.Calendar) map[string]*ics.VEvent {
	out := map[string]*ics.VEvent{}
	for _, e := range cal.Events() {
		out[e.Id()] = e
	}
	return out
}

// prop is a property's value, "" when absent.
func prop(e *ics.VEvent, p ics.ComponentProperty) string {
	if x := e.GetProperty(p); x != nil {
		return x.Value
	}
	return ""
}

// calProp is a calendar property's value, "" when absent.
func calProp(cal *ics.Calendar, p ics.Property) string {
	for _, x := range cal.CalendarProperties {
		if x.IANAToken == string(p) {
			return x.Value
		}
	}
	return ""
}

// uid is the UID the feed gives booking b.
func uid(b *models.Booking) string { return "booking-" + itoa(b.ID) + "@gpu.example.org" }
