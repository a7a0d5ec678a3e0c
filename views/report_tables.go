package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// Table is one table of a report, already translated and formatted: the
// web page, the email (HTML and text) and the CSV export all print the
// same Table, so a figure reads the same wherever it appears.
type Table struct {
	ID   string // the ?table= name of its CSV export
	Head []string
	Rows [][]string
}

// Hours formats GPU-hours with one decimal.
func Hours(h float64) string { return fmt.Sprintf("%.1f", h) }

// Percent formats a ratio as a whole percentage.
func Percent(x float64) string { return fmt.Sprintf("%.0f%%", x*100) }

// Efficiency formats busy ÷ booked, "n/a" when nothing was booked.
func Efficiency(t *i18n.Translator, f models.Figures) string {
	if !f.HasEfficiency() {
		return t.T("report.na")
	}
	return Percent(f.Efficiency())
}

// Weight formats a team's share weight for the admin form.
func Weight(w float64) string { return strconv.FormatFloat(w, 'f', -1, 64) }

// RankText reads "N of M by busy GPU-hours", never a bare number that
// could pass for a grade; "" without a rank.
func RankText(t *i18n.Translator, r models.UserReport) string {
	if r.Rank == 0 {
		return ""
	}
	return t.T("report.rank_n_of_m", "Rank", r.Rank, "Size", r.RankOf)
}

// UsedByText lists the other users on one's bookings ("dave 1.0 h, …").
func UsedByText(t *i18n.Translator, list []models.UserMinutes) string {
	if len(list) == 0 {
		return t.T("report.used_by_nobody")
	}
	parts := make([]string, len(list))
	for i, u := range list {
		parts[i] = t.T("report.used_by_one", "Name", u.Name, "Hours", Hours(u.Hours()))
	}
	return strings.Join(parts, ", ")
}

// Factor formats the fair-share factor.
func Factor(f float64) string { return fmt.Sprintf("%.2f", f) }

// FiguresTable is the report's figures, one per row.
func FiguresTable(t *i18n.Translator, r models.UserReport) Table {
	f := r.Figures
	rows := [][]string{
		{t.T("report.booked"), Hours(f.BookedHours())},
		{t.T("report.busy"), Hours(f.BusyHours())},
		{t.T("report.efficiency"), Efficiency(t, f)},
		{t.T("report.idle"), Hours(f.IdleHours())},
		{t.T("report.held_idle"), Hours(f.HeldIdleHours())},
		{t.T("intensity.mean_util"), MeanUtil(t, f)},
		{LowIntensityLabel(t, r.LowIntensityPct), itoa64(f.LowIntensity)},
		{t.T("report.no_user_data"), t.T("report.no_user_data_minutes", "Minutes", f.NoUserDataMin)},
		{t.T("report.used_by"), UsedByText(t, r.UsedBy)},
		{t.T("report.given_back"), Hours(f.GivenBackHours())},
		{t.T("report.auto_released"), Hours(f.AutoGivenBackHours())},
		{t.T("report.no_shows"), itoa64(f.NoShows)},
		{t.T("charge.late_cancels"), itoa64(f.LateCancels)},
		{t.T("charge.late_cancel_hours"), Hours(f.LateCancelHours())},
		{t.T("report.unbooked"), Hours(f.UnbookedHours())},
		{t.T("report.priority_made"), itoa64(f.PriorityMade)},
		{t.T("report.priority_approved"), itoa64(f.PriorityApproved)},
		{t.T("report.preempted"), itoa64(f.Preempted)},
		{t.T("report.share_booked"), Percent(r.ShareBooked)},
		{t.T("report.share_busy"), Percent(r.ShareBusy)},
		{t.T("report.entitled"), Percent(r.Entitled)},
		{t.T("report.fairshare"), Factor(r.FairShare)},
	}
	if r.TeamName != "" {
		rows = append(rows, []string{t.T("report.rank"), t.T("report.rank_in_team", "Rank", RankText(t, r), "Team", r.TeamName)})
	}
	return Table{ID: "figures", Head: []string{t.T("report.figure"), t.T("report.value")}, Rows: rows}
}

// FairShareSentence explains the factor in one sentence.
func FairShareSentence(t *i18n.Translator, r models.UserReport) string {
	return t.T("report.fairshare_explain", "F", Factor(r.FairShare), "U", Percent(r.UsageShare), "S", Percent(r.Entitled),
		"W", Weight(r.UnbookedWeight), "I", Weight(r.IdleWeight))
}

// DaysTable is booked vs busy per day of the week.
func DaysTable(t *i18n.Translator, days []models.DayPoint) Table {
	tb := Table{ID: "days", Head: []string{t.T("report.day"), t.T("report.booked"), t.T("report.busy"), t.T("report.efficiency")}}
	for _, d := range days {
		tb.Rows = append(tb.Rows, []string{weekdayName(t, d.Day) + " " + d.Day.Format("01-02"),
			Hours(d.Figures.BookedHours()), Hours(d.Figures.BusyHours()), Efficiency(t, d.Figures)})
	}
	return tb
}

// TrendTable is the last four weeks.
func TrendTable(t *i18n.Translator, trend []models.TrendPoint) Table {
	tb := Table{ID: "trend", Head: []string{t.T("report.week"), t.T("report.booked"), t.T("report.busy"), t.T("report.efficiency"), t.T("report.unbooked")}}
	for _, p := range trend {
		f := p.Figures
		tb.Rows = append(tb.Rows, []string{p.Week.String(), Hours(f.BookedHours()), Hours(f.BusyHours()), Efficiency(t, f), Hours(f.UnbookedHours())})
	}
	return tb
}

// HeatTable is the heat map as numbers: one row per weekday, one column per hour.
func HeatTable(t *i18n.Translator, h models.HeatMap) Table {
	tb := Table{ID: "heat", Head: []string{t.T("report.weekday")}}
	for hr := 0; hr < 24; hr++ {
		tb.Head = append(tb.Head, fmt.Sprintf("%02d", hr))
	}
	for wd := 0; wd < 7; wd++ {
		row := []string{weekdayByIndex(t, wd)}
		for hr := 0; hr < 24; hr++ {
			row = append(row, Percent(h.Load[wd][hr]))
		}
		tb.Rows = append(tb.Rows, row)
	}
	return tb
}

// MembersTable is a team's (or the cluster's) users with their figures.
func MembersTable(t *i18n.Translator, id string, rows []models.UserReport) Table {
	tb := Table{ID: id, Head: []string{t.T("report.rank"), t.T("report.user"), t.T("report.booked"), t.T("report.busy"),
		t.T("report.efficiency"), t.T("intensity.mean_util"), t.T("report.idle"), t.T("report.held_idle"), t.T("report.unbooked"),
		t.T("report.no_shows"), t.T("charge.late_cancel_hours"), LowIntensityLabel(t, lowLevel(rows)), t.T("report.share_booked"), t.T("report.fairshare")}}
	for _, r := range rows {
		f := r.Figures
		tb.Rows = append(tb.Rows, []string{RankText(t, r), r.User.Name, Hours(f.BookedHours()), Hours(f.BusyHours()), Efficiency(t, f),
			MeanUtil(t, f), Hours(f.IdleHours()), Hours(f.HeldIdleHours()), Hours(f.UnbookedHours()), itoa64(f.NoShows),
			Hours(f.LateCancelHours()), itoa64(f.LowIntensity), Percent(r.ShareBooked), Factor(r.FairShare)})
	}
	return tb
}

// ClusterTable is the admins' summary.
func ClusterTable(t *i18n.Translator, s models.ClusterSummary) Table {
	return Table{ID: "cluster", Head: []string{t.T("report.figure"), t.T("report.value")}, Rows: [][]string{
		{t.T("report.gpus"), itoa(s.GPUCount)},
		{t.T("report.capacity"), Hours(s.CapacityHours)},
		{t.T("report.booked"), Hours(s.Booked.BookedHours())},
		{t.T("report.busy"), Hours(s.Booked.BusyHours())},
		{t.T("report.efficiency"), Efficiency(t, s.Booked)},
		{t.T("report.held_idle"), Hours(s.Booked.HeldIdleHours())},
		{t.T("intensity.mean_util"), MeanUtil(t, s.Booked)},
		{LowIntensityLabel(t, s.LowIntensityPct), itoa64(s.Booked.LowIntensity)},
		{t.T("report.cluster_busy"), Hours(s.ClusterBusyHours)},
		{t.T("report.utilisation"), Percent(s.Utilisation)},
		{t.T("report.booked_share"), Percent(s.BookedShare)},
		{t.T("report.unbooked_cluster"), Hours(s.UnbookedHours)},
		{t.T("unmapped.hours"), Hours(models.UnmappedHours(s.Unmapped))},
		{t.T("report.given_back"), Hours(s.Booked.GivenBackHours())},
		{t.T("report.no_shows"), itoa64(s.Booked.NoShows)},
		{t.T("charge.late_cancels"), itoa64(s.Booked.LateCancels)},
		{t.T("charge.late_cancel_hours"), Hours(s.Booked.LateCancelHours())},
		{t.T("report.pending"), itoa64(s.PendingRequests)},
	}}
}

// TopTable is a "top holders" list.
func TopTable(t *i18n.Translator, id string, list []models.UserHours) Table {
	tb := Table{ID: id, Head: []string{t.T("report.user"), t.T("report.hours")}}
	for _, u := range list {
		tb.Rows = append(tb.Rows, []string{u.User.Name, Hours(u.Hours)})
	}
	return tb
}

func weekdayByIndex(t *i18n.Translator, wd int) string {
	key := []string{"report.weekday.mon", "report.weekday.tue", "report.weekday.wed", "report.weekday.thu",
		"report.weekday.fri", "report.weekday.sat", "report.weekday.sun"}[wd]
	return t.T(key)
}

func weekdayName(t *i18n.Translator, day time.Time) string {
	return weekdayByIndex(t, models.WeekdayIndex(day))
}

// TableText lays a table out in aligned columns for the plain-text email
// and the CLI preview. Widths count runes; CJK text is wider on screen but
// stays readable.
func TableText(tb Table) string {
	widths := make([]int, len(tb.Head))
	for _, row := range append([][]string{tb.Head}, tb.Rows...) {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	for _, row := range append([][]string{tb.Head}, tb.Rows...) {
		var line strings.Builder
		for i, c := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			line.WriteString(c + strings.Repeat(" ", widths[i]-len([]rune(c))))
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}
