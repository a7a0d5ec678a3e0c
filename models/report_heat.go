package models

import (
	"sort"
	"time"
)

// HeatMap is the cluster's load by weekday (Monday first) and hour of the
// day in the cluster's zone over the report's four weeks: the share of all
// GPU-minutes that were busy. Low cells are when booking is easy.
type HeatMap struct {
	Load [7][24]float64
	Max  float64
}

// HeatMap folds the UTC hours the database counted into local weekday ×
// hour cells. Each cell's load is its busy GPU-minutes over the GPU-minutes
// its hours offered; the number of hours per cell is counted hour by hour,
// so a DST week's missing or doubled hour is counted as it was lived. (In a
// zone with a half-hour offset a UTC hour lands in the local hour it starts in.)
func (d *WeekData) HeatMap() HeatMap {
	var busy, hours [7][24]float64
	loc := d.Week.Start.Location()
	for _, s := range d.Spans {
		for h := s.Start.Unix() / 3600; h*3600 < s.End.Unix(); h++ {
			t := time.Unix(h*3600, 0).In(loc)
			wd, hr := WeekdayIndex(t), t.Hour()
			hours[wd][hr]++
			busy[wd][hr] += float64(d.HourBusyMin[h])
		}
	}
	var m HeatMap
	for wd := range busy {
		for hr := range busy[wd] {
			cap := hours[wd][hr] * 60 * float64(d.GPUCount)
			m.Load[wd][hr] = share(busy[wd][hr], cap)
			m.Max = max(m.Max, m.Load[wd][hr])
		}
	}
	return m
}

// HeatCell is one weekday × hour of the heat map.
type HeatCell struct {
	Weekday, Hour int
	Load          float64
}

// Quietest returns the n least loaded cells, earliest first among equals:
// the hours to suggest to someone who finds the calendar full. With no load
// measured at all there is nothing to suggest, and it returns none.
func (h HeatMap) Quietest(n int) []HeatCell {
	if h.Max == 0 {
		return nil
	}
	cells := make([]HeatCell, 0, 7*24)
	for wd := range h.Load {
		for hr, l := range h.Load[wd] {
			cells = append(cells, HeatCell{wd, hr, l})
		}
	}
	sort.SliceStable(cells, func(i, j int) bool { return cells[i].Load < cells[j].Load })
	return cells[:min(n, len(cells))]
}
