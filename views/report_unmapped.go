package views

import (
	"fmt"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

// MeanUtil formats the mean utilisation of the booked GPU-minutes with
// one decimal, "n/a" when no booked minute had a utilisation recorded.
func MeanUtil(t *i18n.Translator, f models.Figures) string {
	if !f.HasMeanUtil() {
		return t.T("report.na")
	}
	return fmt.Sprintf("%.1f%%", f.MeanUtil()*100)
}

// UnmappedTable is the use by Unix accounts with no gpubook user, by
// name: the cluster page (where each row has its mapping form), its CSV
// export and the admins' weekly email print it.
func UnmappedTable(t *i18n.Translator, list []models.UnixMinutes) Table {
	tb := Table{ID: "unmapped", Head: []string{t.T("unmapped.account"), t.T("report.hours")}}
	for _, u := range list {
		tb.Rows = append(tb.Rows, []string{u.Name, Hours(u.Hours())})
	}
	return tb
}

// LowIntensityLabel names the low-intensity figure with the level it was
// computed at, so that a reader knows what "low" meant that week.
func LowIntensityLabel(t *i18n.Translator, level float64) string {
	return t.T("intensity.low", "Level", Weight(level))
}

// lowLevel is the level of a table's reports (the same for every row).
func lowLevel(rows []models.UserReport) float64 {
	if len(rows) == 0 {
		return models.DefaultReportRules.LowIntensityPct
	}
	return rows[0].LowIntensityPct
}

// unmappedText is the admins' part of the text email: the accounts used by
// nobody, and where to map them; "" for everyone else.
func unmappedText(t *i18n.Translator, d ReportEmailData) string {
	if len(d.Unmapped) == 0 {
		return ""
	}
	return "\n" + t.T("unmapped.heading") + "\n" + TableText(UnmappedTable(t, d.Unmapped)) + "\n" + t.T("unmapped.hint") + " " +
		t.T("unmapped.email_hint", "URL", d.ClusterURL) + "\n"
}
