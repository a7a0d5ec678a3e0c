package views

import (
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
)

// MyBookingsView is the "my bookings" page: what runs, what comes, what was.
type MyBookingsView struct {
	Active, Upcoming, Past []BookingRowView
	// Cancelled is filled only when Show is ShowCancelled.
	Cancelled []BookingRowView
	Show      string // ShowAll, ShowUpcoming, ShowPast or ShowCancelled
	// Past bookings are paged by 30-day windows that end at PastTo.
	Page             int
	PastFrom, PastTo time.Time
	HasOlder         bool
}

// BookingRowView is one booking as a row of the list; a multi-GPU booking
// is one row with one set of actions: users of other tools lost track
// of one job split over many rows.
type BookingRowView struct {
	B     models.Booking
	Phase models.BookingPhase
	GPUs  string // "GPU 0, GPU 1"
	Error string // the problem with the last action on this row
	// ExtendTo is the value offered for "extend": the typed one after a
	// failed try, else one hour past the current end.
	ExtendTo string
	// History is what happened to the booking: cancelled, pre-empted,
	// moved off a GPU taken out of service; by whom, when and why.
	History []models.BookingEvent
}

// NewBookingRow builds a row; names are the units' names by ID
// (models.UnitNames).
func NewBookingRow(b models.Booking, names map[int64]string, now time.Time, loc *time.Location) BookingRowView {
	return BookingRowView{B: b, Phase: b.Phase(now), GPUs: GPUNames(b.GPUIDs, names),
		ExtendTo: LocalInput(b.EndsAt.Add(time.Hour), loc)}
}

// CanAct reports whether the row offers actions at all: past and cancelled
// bookings are read-only.
func (r BookingRowView) CanAct() bool {
	return r.Phase == models.PhaseUpcoming || r.Phase == models.PhaseActive
}

// Filters of "My bookings": everything (the default), what is to come,
// what is over, what was cancelled (by its owner, a pre-emption or an admin).
const (
	ShowAll       = "all"
	ShowUpcoming  = "upcoming"
	ShowPast      = "past"
	ShowCancelled = "cancelled"
)

// BookingShows lists the filters in the order the page offers them.
var BookingShows = []string{ShowAll, ShowUpcoming, ShowPast, ShowCancelled}

// BookingShow normalises the show query parameter: anything unknown is all.
func BookingShow(s string) string {
	for _, x := range BookingShows {
		if s == x {
			return s
		}
	}
	return ShowAll
}

// Shows reports whether section (upcoming, past) is on the page.
func (v MyBookingsView) Shows(section string) bool { return v.Show == ShowAll || v.Show == section }

func (v MyBookingsView) showLink(s string) string { return "/bookings?show=" + s }

// Older and Newer are the past list's paging links.
func (v MyBookingsView) Older() string {
	return "/bookings?show=" + v.Show + "&page=" + strconv.Itoa(v.Page+1) + "#past"
}

// Newer is the page of more recent past bookings.
func (v MyBookingsView) Newer() string {
	return "/bookings?show=" + v.Show + "&page=" + strconv.Itoa(v.Page-1) + "#past"
}

// bookingEventText says what happened to a booking in the reader's words.
func (p *Page) bookingEventText(ev models.BookingEvent) string {
	key := "booking.event." + ev.Action
	if ev.Action == models.AuditBookingPreempt || ev.Action == models.AuditBookingService {
		key += "." + ev.How
	}
	return p.Tr(key, "At", p.DateTime(ev.At), "By", ev.By, "Reason", ev.Reason, "Request", ev.Request)
}

// GPUNames names a booking's units in the order of ids, "GPU 0, GPU 3 ·
// 1g.10gb"; names maps unit IDs to their names (models.UnitNames of one
// GPUs query). A unit missing from names is "#id", never a wrong GPU.
func GPUNames(ids []int64, names map[int64]string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		if n, ok := names[id]; ok {
			out[i] = n
		} else {
			out[i] = "#" + strconv.FormatInt(id, 10)
		}
	}
	return strings.Join(out, ", ")
}

func bookingAction(id int64, action string) string {
	return "/bookings/" + strconv.FormatInt(id, 10) + "/" + action
}

func phaseKey(ph models.BookingPhase) string { return "booking.phase." + string(ph) }

func showCurrent(on bool) string {
	if on {
		return "page"
	}
	return "false"
}
