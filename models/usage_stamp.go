package models

import "time"

// The weekly report asks of every stored GPU-minute whose booking it fell
// in and whether the booker's own processes held memory on it. Answering
// that by joining each minute to the bookings costs a range join over
// millions of rows per report, so the store stamps every minute with the
// answer instead (see models/store/usage_stamps.go): IngestUsage stamps the
// rows it writes with StampMinute, and a change to a booking's range
// restamps the minutes already stored in it.

// UsageHolder is a confirmed booking's hold on one GPU over [StartsAt,
// EndsAt). Confirmed bookings never overlap on a GPU, so at most one
// holds a given GPU-minute.
type UsageHolder struct {
	GPUID     int64
	BookingID int64
	UserID    int64
	StartsAt  time.Time
	EndsAt    time.Time
}

// Holds reports whether h held its GPU at minute m: the minute's start lies
// in [StartsAt, EndsAt), the same rule the bookings' own ranges use.
func (h UsageHolder) Holds(gpuID int64, m time.Time) bool {
	return h.GPUID == gpuID && !m.Before(h.StartsAt) && m.Before(h.EndsAt)
}

// MinuteStamp is what the store keeps beside a GPU-minute for the reports.
type MinuteStamp struct {
	BookingID    int64 // 0: no confirmed booking held the GPU
	BookerMemMiB int64 // the most the booker's processes held (0 without a booking)
	TopMemMiB    int64 // the most any one user's processes held
}

// StampedUser is one user row of a minute: who (0 when the unix name maps
// to no gpubook user) and how much memory; Booked is set by StampMinute.
type StampedUser struct {
	UserID    int64
	MemoryMiB int64
	Booked    bool
}

// StampMinute stamps the minute m of gpuID from the holders of the
// minute's window and the minute's user rows, and marks each user row
// whose user was the booker.
func StampMinute(holders []UsageHolder, gpuID int64, m time.Time, users []StampedUser) MinuteStamp {
	var s MinuteStamp
	var holder *UsageHolder
	for i := range holders {
		if holders[i].Holds(gpuID, m) {
			holder = &holders[i]
			break
		}
	}
	if holder != nil {
		s.BookingID = holder.BookingID
	}
	for i := range users {
		s.TopMemMiB = max(s.TopMemMiB, users[i].MemoryMiB)
		users[i].Booked = holder != nil && users[i].UserID != 0 && users[i].UserID == holder.UserID
		if users[i].Booked {
			s.BookerMemMiB = max(s.BookerMemMiB, users[i].MemoryMiB)
		}
	}
	return s
}
