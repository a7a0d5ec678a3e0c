package models

import (
	"sort"
	"time"
)

// GPUState is one GPU's availability over a range, so that the booking
// form and the home page can say what is taken before anyone submits.
type GPUState struct {
	GPU GPU
	// Busy is the first blocking booking on the GPU that overlaps the
	// range; nil when the GPU is free for all of it.
	Busy *Booking
	// FreeUntil is when the next blocking booking on the GPU starts at or
	// after the range's start; zero when none is known.
	FreeUntil time.Time
}

// Free reports whether the GPU can be booked for the whole range: a GPU
// split into MIG instances never is, its instances are.
func (s GPUState) Free() bool { return s.GPU.Bookable() && s.Busy == nil }

// GPUStates says for each of gpus whether it is free over [from, to),
// who holds it otherwise, and until when a free one stays free, from the
// bookings known (any that are not blocking are ignored). Pure, so that
// the form, the home page and their tests agree on one rule.
func GPUStates(gpus []GPU, bookings []Booking, from, to time.Time) []GPUState {
	sorted := make([]*Booking, 0, len(bookings))
	for i := range bookings {
		if bookings[i].Blocking() {
			sorted = append(sorted, &bookings[i])
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].StartsAt.Before(sorted[j].StartsAt) })
	out := make([]GPUState, len(gpus))
	for i, g := range gpus {
		out[i].GPU = g
		for _, b := range sorted {
			if !holds(b, g.ID) {
				continue
			}
			if out[i].Busy == nil && Overlaps(from, to, b.StartsAt, b.EndsAt) {
				out[i].Busy = b
			}
			if out[i].FreeUntil.IsZero() && !b.StartsAt.Before(from) {
				out[i].FreeUntil = b.StartsAt
			}
		}
	}
	return out
}

// holds reports whether b books the GPU with id.
func holds(b *Booking, id int64) bool {
	for _, g := range b.GPUIDs {
		if g == id {
			return true
		}
	}
	return false
}
