package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/views"
)

// ClusterUsage renders the admins' summary (/admin/usage).
func (h *Reports) ClusterUsage(c echo.Context) error {
	d, err := h.weekData(c)
	if err != nil {
		return err
	}
	teams, err := h.Store.Teams(c.Request().Context())
	if err != nil {
		return err
	}
	v := views.ClusterUsageView{Summary: d.ClusterSummary(), Users: d.ClusterUsers(), Teams: teams, Heat: d.HeatMap(), Weeks: h.weeks(),
		Path: c.Request().URL.Path, Status: views.StatusOf(d)}
	if wantsCSV(c) {
		t := h.Translator(c)
		return writeCSV(c, "cluster-"+d.Week.String(), views.ClusterTable(t, v.Summary), views.TopTable(t, "top_idle", v.Summary.TopIdle),
			views.TopTable(t, "top_unbooked", v.Summary.TopUnbooked), views.MembersTable(t, "users", v.Users), views.HeatTable(t, v.Heat),
			views.UnmappedTable(t, v.Summary.Unmapped))
	}
	return Render(c, http.StatusOK, views.ClusterUsagePage(h.NewPage(c), v))
}
