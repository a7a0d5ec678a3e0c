package views

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// gridChars is about how many characters of block text fit across the
// whole grid at 1280 px (the label column taken off, bold .72rem text, with
// some room to spare for the padding): a block
// shows its full label only where it fits, else the initials, so a week
// of short bookings stays legible instead of shrinking to one letter.
const gridChars = 150

// fits says whether text of n runes fits a block of cols columns.
func (g Grid) fits(n, cols int) bool {
	return g.Cols > 0 && n*g.Cols <= cols*gridChars
}

// blockText is a booking's full text: the name (a star for the viewer's
// own) and the note. It is the block's title in any case, so that hover
// and keyboard focus show what the initials stand for.
func blockText(c GridCell, mine bool) string {
	switch {
	case c.Booking.Note == "" && mine:
		return "★ " + c.Booking.UserName
	case c.Booking.Note == "":
		return c.Booking.UserName
	case mine:
		return "★ " + c.Booking.Note
	}
	return c.Booking.UserName + " · " + c.Booking.Note
}

// blockLabel is what the block shows: the full text where it fits, else
// the initials of the name (★ for the viewer's own bookings), else nothing.
func (g Grid) blockLabel(c GridCell, mine bool) string {
	full := blockText(c, mine)
	cols := c.End - c.Line
	if g.fits(utf8.RuneCountInString(full), cols) {
		return full
	}
	short := "★"
	if !mine {
		short = Initials(c.Booking.UserName)
	}
	for short != "" && !g.fits(utf8.RuneCountInString(short), cols) {
		_, n := utf8.DecodeLastRuneInString(short)
		short = short[:len(short)-n]
	}
	return short
}

// Initials are the first letters of the first two words of a name, in
// capitals ("Bob Builder" → "BB"); a name in Han characters keeps its first
// character ("陈伟" → "陈").
func Initials(name string) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(name) {
		r, _ := utf8.DecodeRuneInString(w)
		b.WriteRune(unicode.ToUpper(r))
		if n++; n == 2 || unicode.Is(unicode.Han, r) {
			break
		}
	}
	return b.String()
}

// blockClass places a booking block. The viewer's own are <a> elements,
// others' <b>: the tag says whose, as a class on each of thousands would
// only add bytes.
func blockClass(c GridCell) string {
	s := span(c.Line, c.End)
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

// endMarker keeps every row of an overview as wide as the grid: without
// free cells a row's implicit grid would end at its last booking.
func (g Grid) endMarker() string { return "z " + span(g.Cols+1, g.Cols+2) }

// bookingAnchor is the booking's row on the bookings page (relative to
// /calendar: a week of blocks repeats it thousands of times).
func bookingAnchor(id int64) string { return "bookings#booking-" + strconv.FormatInt(id, 10) }

// blockTitle is the block's full text; outside the week overview it also
// names the times (the overview leaves them to the block's position: a
// sentence per block made the week of a busy cluster a megabyte).
func (g Grid) blockTitle(p *Page, c GridCell, mine bool) string {
	t := blockText(c, mine)
	if g.Overview {
		return t
	}
	return t + " · " + p.cellRange(c.Booking.StartsAt, c.Booking.EndsAt)
}
