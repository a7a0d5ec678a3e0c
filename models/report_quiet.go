package models

import (
	"math"
	"sort"
	"time"
)

// QuietSlots is how many slots the quiet-hours advice names.
const QuietSlots = 3

// QuietSlot is a run of hours of the coming week with the same number of
// free GPUs, [Start, End) in the cluster's zone.
type QuietSlot struct {
	Start, End time.Time
	FreeGPUs   float64 // free GPU-hours in each hour of the slot
}

// QuietHours is the advice of when to book: the hours of the week after
// d.Week with the most free GPUs, ranked by free GPU-hours. An hour's free
// GPUs are the GPUs in service less the larger of what is already booked
// in it and what was busy, on average, in the same weekday and hour of
// the report's four weeks (heat). Free counts are rounded to the tenth the
// report prints; neighbouring hours with equal counts form one slot, so a
// quiet night reads as one range rather than as its first hour. The best
// n slots come back, the earliest first among equals; none without GPUs.
func (d *WeekData) QuietHours(heat HeatMap, n int) []QuietSlot {
	if d.GPUCount == 0 {
		return nil
	}
	next := d.Week.Next()
	var slots []QuietSlot
	for t := next.Start; t.Before(next.End); t = t.Add(time.Hour) {
		end := t.Add(time.Hour)
		free := d.freeGPUs(heat, t, end)
		if k := len(slots) - 1; k >= 0 && slots[k].FreeGPUs == free {
			slots[k].End = end
			continue
		}
		slots = append(slots, QuietSlot{Start: t, End: end, FreeGPUs: free})
	}
	sort.SliceStable(slots, func(i, j int) bool { return slots[i].FreeGPUs > slots[j].FreeGPUs })
	return slots[:min(n, len(slots))]
}

// freeGPUs is the free GPUs of the hour [from, to), see QuietHours.
func (d *WeekData) freeGPUs(heat HeatMap, from, to time.Time) float64 {
	booked := 0.0
	for _, s := range d.Coming {
		lo, hi := maxTime(s.Start, from), minTime(s.End, to)
		if lo.Before(hi) {
			booked += hi.Sub(lo).Hours()
		}
	}
	lt := from.In(d.Week.Start.Location())
	expected := heat.Load[WeekdayIndex(lt)][lt.Hour()] * float64(d.GPUCount)
	free := float64(d.GPUCount) - max(booked, expected)
	return math.Round(max(free, 0)*10) / 10
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
