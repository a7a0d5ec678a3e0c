package views

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// ReportLinks are the links every report carries: to the report in the
// portal, to the email preferences (where the email can be stopped) and to
// the definitions of its figures (docs/reports.md).
type ReportLinks struct {
	Web, Preferences, Definitions string
}

// DefinitionsPath is where the portal serves docs/reports.md.
const DefinitionsPath = "/usage/definitions"

// ReportSubject is the email's subject line.
func ReportSubject(t *i18n.Translator, r models.UserReport) string {
	return t.T("report.subject", "Week", r.Week.String())
}

// QuietHours names the coming week's hours with the most free GPUs, one
// range per run of equal hours ("Sat 22:00–Mon 06:00: 4.0 free GPUs").
func QuietHours(t *i18n.Translator, slots []models.QuietSlot) string {
	var parts []string
	for _, s := range slots {
		parts = append(parts, t.T("report.quiet_slot", "From", slotTime(t, s.Start), "To", slotTime(t, s.End), "Free", Hours(s.FreeGPUs)))
	}
	if len(parts) == 0 {
		return t.T("report.quiet_no_data")
	}
	return strings.Join(parts, "; ")
}

func slotTime(t *i18n.Translator, at time.Time) string {
	return fmt.Sprintf("%s %s %02d:00", weekdayName(t, at), at.Format("01-02"), at.Hour())
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
		fmt.Fprintf(&b, "%s\n\n%s\n", t.T("report.quiet", "Week", r.Week.String()), t.T("report.quiet_hours", "Hours", QuietHours(t, r.Quiet)))
	} else {
		fmt.Fprintf(&b, "%s\n\n", t.T("report.summary", "Booked", Hours(r.Figures.BookedHours()), "Busy", Hours(r.Figures.BusyHours()),
			"Efficiency", Efficiency(t, r.Figures)))
		b.WriteString(TableText(FiguresTable(t, r)))
		fmt.Fprintf(&b, "\n%s\n\n%s\n", FairShareSentence(t, r), t.T("report.days_heading"))
		b.WriteString(TableText(DaysTable(t, r.Days)))
		fmt.Fprintf(&b, "\n%s\n", t.T("report.trend_heading"))
		b.WriteString(TableText(TrendTable(t, r.Trend)))
		fmt.Fprintf(&b, "\n%s\n", t.T("report.quiet_hours", "Hours", QuietHours(t, r.Quiet)))
	}
	fmt.Fprintf(&b, "\n%s %s\n%s %s\n%s %s\n", t.T("report.link_web"), links.Web, t.T("report.link_definitions"), links.Definitions,
		t.T("report.link_prefs"), links.Preferences)
	return b.String()
}
