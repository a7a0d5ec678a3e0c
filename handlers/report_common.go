package handlers

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Reports serves "My usage", the team pages and the cluster page.
type Reports struct {
	*Base
	Rules models.ReportRules
}

// recentWeeks is how many weeks the week links offer.
const recentWeeks = 8

// weekData parses ?week= (default: the week in progress) and reads it as
// every surface does: live while it runs, frozen once closed; a week that
// has not started is a 404.
func (h *Reports) weekData(c echo.Context) (*models.WeekData, error) {
	now := h.Now()
	w := models.WeekOf(now, h.Location)
	if q := c.QueryParam("week"); q != "" {
		var err error
		if w, err = models.ParseWeek(q, h.Location); err != nil {
			return nil, err
		}
	}
	if w.Start.After(now) {
		return nil, models.NewError(models.ENOTFOUND, models.M("err.not_found", "What", w.String()))
	}
	return h.Store.ReportWeekAt(c.Request().Context(), w, now, h.Rules, false)
}

// weeks lists the recent weeks, newest first, for the week links.
func (h *Reports) weeks() []models.Week {
	w := models.WeekOf(h.Now(), h.Location)
	out := make([]models.Week, recentWeeks)
	for i := range out {
		out[i] = w.Prev(i)
	}
	return out
}

// wantsCSV reports whether the request asks for ?format=csv.
func wantsCSV(c echo.Context) bool { return c.QueryParam("format") == "csv" }

// csvCell defuses a cell a spreadsheet would run as a formula (OWASP's
// "CSV injection"): names come from sign-up and SSO, so a user called
// =HYPERLINK(...) must reach the admin's spreadsheet as text. A cell that
// starts with = + - @ tab or CR gets a leading single quote, unless it is
// a number as written ("-1.5", "-20%"), which stays a number. Every CSV
// gpubook writes goes through writeCSV and so through here.
func csvCell(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64); err == nil && isPlainNumber(s) {
		return s
	}
	return "'" + s
}

// isPlainNumber accepts digits, one sign, a point and a trailing percent
// only: ParseFloat alone would also pass "-Inf" and hex floats.
func isPlainNumber(s string) bool {
	for i, c := range strings.TrimSuffix(s, "%") {
		if !(c >= '0' && c <= '9' || c == '.' || (i == 0 && (c == '-' || c == '+'))) {
			return false
		}
	}
	return true
}

// writeCSV sends the table named by ?table= out of tables.
func writeCSV(c echo.Context, name string, tables ...views.Table) error {
	want := c.QueryParam("table")
	for _, tb := range tables {
		if tb.ID == want {
			return sendCSV(c, name+"-"+tb.ID+".csv", tb.Head, tb.Rows)
		}
	}
	return models.NewError(models.ENOTFOUND, models.M("err.report_table_unknown", "Table", want))
}

// sendCSV sends head and rows as the attachment filename, every cell
// defused (csvCell): the one way gpubook writes a CSV.
func sendCSV(c echo.Context, filename string, head []string, rows [][]string) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, fmt.Sprintf("attachment; filename=%q", filename))
	c.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(c.Response())
	for _, row := range append([][]string{head}, rows...) {
		safe := make([]string, len(row))
		for i, cell := range row {
			safe[i] = csvCell(cell)
		}
		if err := w.Write(safe); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}
