package models

import "time"

// HeatMap is the cluster's load by weekday (Monday first) and hour of the
// day in the cluster's zone over the report's four weeks: the share of all
// GPU-minutes that were busy. QuietHours reads it as the expected use
// of the coming week.
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
