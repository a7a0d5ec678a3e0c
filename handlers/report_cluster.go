package handlers

import (
	"net/http"
	"sort"

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
	v := views.ClusterUsageView{Summary: d.ClusterSummary(), Teams: teams, Heat: d.HeatMap(), Weeks: h.weeks(), Path: c.Request().URL.Path}
	for _, u := range d.Users {
		v.Users = append(v.Users, d.UserReport(u))
	}
	sort.SliceStable(v.Users, func(i, j int) bool { return v.Users[i].Figures.BusyMin > v.Users[j].Figures.BusyMin })
	if wantsCSV(c) {
		t := h.Translator(c)
		return writeCSV(c, "cluster-"+d.Week.String(), views.ClusterTable(t, v.Summary), views.TopTable(t, "top_idle", v.Summary.TopIdle),
			views.TopTable(t, "top_unbooked", v.Summary.TopUnbooked), views.MembersTable(t, "users", v.Users), views.HeatTable(t, v.Heat))
	}
	return Render(c, http.StatusOK, views.ClusterUsagePage(h.NewPage(c), v))
}
