package handlers

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"time"

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

// weekData parses ?week= (default: the week in progress) and computes it
// as of now; a week that has not started is a 404.
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
	return h.Store.ReportWeek(c.Request().Context(), w, minTime(now, w.End), h.Rules)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
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

// writeCSV sends the table named by ?table= out of tables.
func writeCSV(c echo.Context, name string, tables ...views.Table) error {
	want := c.QueryParam("table")
	for _, tb := range tables {
		if tb.ID != want {
			continue
		}
		h := c.Response().Header()
		h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
		h.Set(echo.HeaderContentDisposition, fmt.Sprintf("attachment; filename=%q", name+"-"+tb.ID+".csv"))
		c.Response().WriteHeader(http.StatusOK)
		w := csv.NewWriter(c.Response())
		if err := w.Write(tb.Head); err != nil {
			return err
		}
		if err := w.WriteAll(tb.Rows); err != nil {
			return err
		}
		return w.Error()
	}
	return models.NewError(models.ENOTFOUND, models.M("err.report_table_unknown", "Table", want))
}
