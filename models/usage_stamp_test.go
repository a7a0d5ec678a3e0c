package models

import (
	"testing"
	"time"
)

func TestStampMinute(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	holders := []UsageHolder{
		{GPUID: 1, BookingID: 10, UserID: 100, StartsAt: t0, EndsAt: t0.Add(time.Hour)},
		{GPUID: 2, BookingID: 20, UserID: 200, StartsAt: t0.Add(30 * time.Second), EndsAt: t0.Add(2 * time.Hour)},
	}
	tests := []struct {
		name       string
		gpu        int64
		m          time.Time
		users      []StampedUser
		want       MinuteStamp
		wantBooked []bool
	}{
		{"first minute of a booking", 1, t0, []StampedUser{{UserID: 100, MemoryMiB: 2048}}, MinuteStamp{10, 2048, 2048}, []bool{true}},
		{"last minute inside", 1, t0.Add(59 * time.Minute), nil, MinuteStamp{10, 0, 0}, nil},
		{"the minute it ends is outside", 1, t0.Add(time.Hour), []StampedUser{{UserID: 100, MemoryMiB: 2048}}, MinuteStamp{0, 0, 2048}, []bool{false}},
		{"a booking starting mid-minute does not hold that minute", 2, t0, []StampedUser{{UserID: 200, MemoryMiB: 10}}, MinuteStamp{0, 0, 10}, []bool{false}},
		{"it holds the next", 2, t0.Add(time.Minute), []StampedUser{{UserID: 200, MemoryMiB: 10}}, MinuteStamp{20, 10, 10}, []bool{true}},
		{"another user holds more than the booker", 1, t0.Add(5 * time.Minute),
			[]StampedUser{{UserID: 300, MemoryMiB: 9000}, {UserID: 100, MemoryMiB: 500}}, MinuteStamp{10, 500, 9000}, []bool{false, true}},
		{"the booker under two unix names: the most one row held", 1, t0.Add(5 * time.Minute),
			[]StampedUser{{UserID: 100, MemoryMiB: 700}, {UserID: 100, MemoryMiB: 900}}, MinuteStamp{10, 900, 900}, []bool{true, true}},
		{"an unmapped user is never the booker", 1, t0.Add(5 * time.Minute), []StampedUser{{MemoryMiB: 4000}}, MinuteStamp{10, 0, 4000}, []bool{false}},
		{"another GPU's booking does not count", 3, t0.Add(5 * time.Minute), []StampedUser{{UserID: 100, MemoryMiB: 1}}, MinuteStamp{0, 0, 1}, []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StampMinute(holders, tt.gpu, tt.m, tt.users)
			if got != tt.want {
				t.Errorf("stamp = %+v, want %+v", got, tt.want)
			}
			for i, u := range tt.users {
				if u.Booked != tt.wantBooked[i] {
					t.Errorf("user %d booked = %v, want %v", i, u.Booked, tt.wantBooked[i])
				}
			}
		})
	}
}
