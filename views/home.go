package views

import (
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
)

// HomeView is the start page's data: what a signed-in user needs to know
// to answer "can I run now?" without opening another page.
type HomeView struct {
	Nodes int
	GPUs  int
	// Current are my bookings running now; Next my next one to start.
	Current []models.Booking
	Next    *models.Booking
	// Free are the GPUs free now, by node and model, with a quick-book form each.
	Free []FreeGroup
	// WeekLeft is this week's GPU-minutes left under the weekly limit;
	// nil when no weekly limit applies.
	WeekLeft *int64
	// For admins: nodes whose agent is silent, and today's violations.
	Admin           bool
	Offline         []string
	ViolationsToday int
}

// FreeGroup is the GPUs of one model on one node that are free now.
type FreeGroup struct {
	NodeID    int64
	NodeName  string
	Model     string
	Free      int
	FreeUntil time.Time // when the first of them is booked; zero: not within a day
	// Profile is the MIG profile ("1g.10gb") of a group of MIG instances;
	// "" for whole GPUs.
	Profile string
}

// Unit names what the group offers: the model, and the profile of MIG slices.
func (g FreeGroup) Unit() string {
	if g.Profile == "" {
		return g.Model
	}
	return g.Model + " · MIG " + g.Profile
}

// Span is a length of time in words: "2 h 30 min" or "2 小时 30 分钟".
func (p *Page) Span(d time.Duration) string {
	if d < time.Minute {
		d = time.Minute
	}
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case h == 0:
		return p.Tr("home.span_m", "M", m)
	case m == 0:
		return p.Tr("home.span_h", "H", h)
	}
	return p.Tr("home.span_hm", "H", h, "M", m)
}

// quickHours is the hours the quick-book form offers: 4, or fewer when
// the GPUs are booked sooner.
func (g FreeGroup) quickHours(now time.Time) string {
	h := 4
	if !g.FreeUntil.IsZero() {
		if free := int(g.FreeUntil.Sub(now) / time.Hour); free < h {
			h = max(free, 1)
		}
	}
	return strconv.Itoa(h)
}

// List runs names together the way the language does: "a, b" or "a、b".
func (p *Page) List(names []string) string {
	sep := ", "
	if p.T.Lang == "zh-CN" {
		sep = "、"
	}
	return strings.Join(names, sep)
}
