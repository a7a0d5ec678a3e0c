package views

import (
	"fmt"
	"strings"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// ReportLinks are the links every report carries: to the report in the
// portal and to the email preferences (where the email can be stopped).
type ReportLinks struct {
	Web, Preferences string
}

// ReportSubject is the email's subject line.
func ReportSubject(t *i18n.Translator, r models.UserReport) string {
	return t.T("report.subject", "Week", r.Week.String())
}

// QuietHours names the cluster's quietest hours ("Sat 03:00, …").
func QuietHours(t *i18n.Translator, h models.HeatMap) string {
	var parts []string
	for _, c := range h.Quietest(3) {
		parts = append(parts, fmt.Sprintf("%s %02d:00", weekdayByIndex(t, c.Weekday), c.Hour))
	}
	if len(parts) == 0 {
		return t.T("report.quiet_no_data")
	}
	return strings.Join(parts, ", ")
}

// ReportText is the plain-text report: the email's text part and the
// output of "gpubook report preview". A user with no activity gets a few
// friendly lines instead of a page of zeros.
func ReportText(t *i18n.Translator, r models.UserReport, links ReportLinks) string {
	return fmt.Sprintf("%s\n\n%s\n\n%s", ReportSubject(t, r), t.T("report.greeting", "Name", r.User.Name), reportTextBody(t, r, links))
}

// reportTextBody is the report without subject and greeting: the text
// part of the email, where the email layout adds those.
func reportTextBody(t *i18n.Translator, r models.UserReport, links ReportLinks) string {
	var b strings.Builder
	if r.AsOf.Before(r.Week.End) {
		fmt.Fprintf(&b, "%s\n\n", t.T("report.so_far", "Time", r.AsOf.In(r.Week.Start.Location()).Format("2006-01-02 15:04 MST")))
	}
	if !r.Active() {
		fmt.Fprintf(&b, "%s\n\n%s\n", t.T("report.quiet", "Week", r.Week.String()), t.T("report.quiet_hours", "Hours", QuietHours(t, r.Heat)))
	} else {
		fmt.Fprintf(&b, "%s\n\n", t.T("report.summary", "Booked", Hours(r.Figures.BookedHours()), "Busy", Hours(r.Figures.BusyHours()),
			"Efficiency", Percent(r.Figures.Efficiency())))
		b.WriteString(TableText(FiguresTable(t, r)))
		fmt.Fprintf(&b, "\n%s\n\n%s\n", FairShareSentence(t, r), t.T("report.days_heading"))
		b.WriteString(TableText(DaysTable(t, r.Days)))
		fmt.Fprintf(&b, "\n%s\n", t.T("report.trend_heading"))
		b.WriteString(TableText(TrendTable(t, r.Trend)))
		fmt.Fprintf(&b, "\n%s\n", t.T("report.quiet_hours", "Hours", QuietHours(t, r.Heat)))
	}
	fmt.Fprintf(&b, "\n%s %s\n%s %s\n", t.T("report.link_web"), links.Web, t.T("report.link_prefs"), links.Preferences)
	return b.String()
}
