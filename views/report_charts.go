package views

import (
	"fmt"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// Chart geometry (SVG user units). Charts are drawn with presentation
// attributes only: the CSP forbids style attributes.
const (
	chartH    = 160.0 // plot height
	chartTop  = 10.0
	groupW    = 70.0
	barW      = 24.0
	chartLeft = 40.0
)

// barGroup is one label with a booked and a busy bar.
type barGroup struct {
	Label             string
	X, Y1, H1, Y2, H2 string
	TitleA, TitleB    string
	LabelX            string
}

// barChart is a booked-vs-busy chart ready for the template.
type barChart struct {
	Width, Max string
	Groups     []barGroup
}

func fmtf(f float64) string { return fmt.Sprintf("%.1f", f) }

// newBarChart scales booked and busy hours per label to the plot.
func newBarChart(t *i18n.Translator, labels []string, figs []models.Figures) barChart {
	top := 1.0
	for _, f := range figs {
		top = max(top, f.BookedHours(), f.BusyHours())
	}
	c := barChart{Width: fmtf(chartLeft + groupW*float64(len(labels))), Max: Hours(top)}
	for i, f := range figs {
		x := chartLeft + groupW*float64(i) + 8
		label := labels[i] + t.T("common.colon") + " "
		h1, h2 := chartH*f.BookedHours()/top, chartH*f.BusyHours()/top
		c.Groups = append(c.Groups, barGroup{Label: labels[i], X: fmtf(x),
			Y1: fmtf(chartTop + chartH - h1), H1: fmtf(h1), Y2: fmtf(chartTop + chartH - h2), H2: fmtf(h2),
			TitleA: label + Hours(f.BookedHours()) + " " + t.T("report.chart_booked"),
			TitleB: label + Hours(f.BusyHours()) + " " + t.T("report.chart_busy"),
			LabelX: fmtf(x + barW)})
	}
	return c
}

// DaysChart is booked vs busy per day.
func DaysChart(t *i18n.Translator, days []models.DayPoint) barChart {
	labels, figs := make([]string, len(days)), make([]models.Figures, len(days))
	for i, d := range days {
		labels[i], figs[i] = weekdayName(t, d.Day), d.Figures
	}
	return newBarChart(t, labels, figs)
}

// TrendChart is booked vs busy per week.
func TrendChart(t *i18n.Translator, trend []models.TrendPoint) barChart {
	labels, figs := make([]string, len(trend)), make([]models.Figures, len(trend))
	for i, p := range trend {
		labels[i], figs[i] = p.Week.String(), p.Figures
	}
	return newBarChart(t, labels, figs)
}

// heatCell is one rectangle of the heat map.
type heatCell struct {
	X, Y, Opacity, Title string
}

// HeatCells lays out the heat map: one row per weekday, one column per
// hour; the opacity of a cell is its load relative to the busiest one.
func HeatCells(t *i18n.Translator, h models.HeatMap) []heatCell {
	var out []heatCell
	for wd := 0; wd < 7; wd++ {
		for hr := 0; hr < 24; hr++ {
			op := 0.0
			if h.Max > 0 {
				op = h.Load[wd][hr] / h.Max
			}
			out = append(out, heatCell{X: itoa(40 + hr*20), Y: itoa(4 + wd*20), Opacity: fmt.Sprintf("%.2f", 0.04+0.96*op),
				Title: fmt.Sprintf("%s %02d:00 %s", weekdayByIndex(t, wd), hr, Percent(h.Load[wd][hr]))})
		}
	}
	return out
}

// heatHours are the hour labels under the heat map (every third hour).
func heatHours() []heatCell {
	var out []heatCell
	for hr := 0; hr < 24; hr += 3 {
		out = append(out, heatCell{X: itoa(40 + hr*20), Title: fmt.Sprintf("%02d", hr)})
	}
	return out
}

// heatDays are the weekday labels of the heat map.
func heatDays(t *i18n.Translator) []heatCell {
	out := make([]heatCell, 7)
	for wd := range out {
		out[wd] = heatCell{Y: itoa(18 + wd*20), Title: weekdayByIndex(t, wd)}
	}
	return out
}
