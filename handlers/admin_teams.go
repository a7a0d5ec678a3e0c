package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// Teams lists teams with their leads.
func (h *Admin) Teams(c echo.Context) error {
	return h.renderTeams(c, http.StatusOK, views.AdminTeamsView{})
}

func (h *Admin) renderTeams(c echo.Context, status int, v views.AdminTeamsView) error {
	ctx := c.Request().Context()
	teams, err := h.Store.Teams(ctx)
	if err != nil {
		return err
	}
	v.Teams, v.Members = teams, map[int64][]models.Membership{}
	ms, err := h.Store.AllMemberships(ctx)
	if err != nil {
		return err
	}
	for _, m := range ms {
		v.Members[m.TeamID] = append(v.Members[m.TeamID], m)
	}
	return Render(c, status, views.AdminTeamsPage(h.NewPage(c), v))
}

// CreateTeam makes a new team.
func (h *Admin) CreateTeam(c echo.Context) error {
	t := &models.Team{Name: c.FormValue("name")}
	err := h.Store.CreateTeam(c.Request().Context(), t, Actor(c))
	if code := models.ErrorCode(err); code == models.EINVALID || code == models.ECONFLICT {
		tr := h.Translator(c)
		errs := tr.Fields(err)
		if code == models.ECONFLICT {
			errs = map[string]string{"name": tr.Err(err)}
		}
		return h.renderTeams(c, http.StatusUnprocessableEntity, views.AdminTeamsView{Name: t.Name, Errors: errs})
	}
	if err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("admin.team_created", "Name", t.Name))
	return RedirectSeeOther(c, "/admin/teams/"+itoa64(t.ID))
}

// Team shows one team's members.
func (h *Admin) Team(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	return h.renderTeam(c, http.StatusOK, id, nil)
}

func (h *Admin) renderTeam(c echo.Context, status int, id int64, errs map[string]string) error {
	ctx := c.Request().Context()
	team, err := h.Store.Team(ctx, id)
	if err != nil {
		return err
	}
	members, err := h.Store.Members(ctx, id)
	if err != nil {
		return err
	}
	users, err := h.Store.Users(ctx)
	if err != nil {
		return err
	}
	in := map[int64]bool{}
	for _, m := range members {
		in[m.UserID] = true
	}
	candidates := users[:0:0]
	for _, u := range users {
		if !in[u.ID] {
			candidates = append(candidates, u)
		}
	}
	v := views.AdminTeamView{Team: *team, Members: members, Users: candidates, Errors: errs}
	return Render(c, status, views.AdminTeamPage(h.NewPage(c), v))
}

// SetMember adds a user to the team or changes their role. Memberships set
// here are marked manual, so that sign-in never removes them.
func (h *Admin) SetMember(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	if _, err := h.Store.Team(c.Request().Context(), id); err != nil {
		return err
	}
	userID, _ := strconv.ParseInt(c.FormValue("user_id"), 10, 64)
	m := &models.Membership{TeamID: id, UserID: userID, Role: c.FormValue("role"), Source: models.SourceManual}
	err = h.Store.SetMembership(c.Request().Context(), m, Actor(c))
	if code := models.ErrorCode(err); code == models.EINVALID || code == models.ECONFLICT {
		errs := h.Translator(c).Fields(err)
		if code == models.ECONFLICT {
			errs = map[string]string{"user_id": h.Translator(c).T("err.not_found", "What", "user")}
		}
		return h.renderTeam(c, http.StatusUnprocessableEntity, id, errs)
	}
	if err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
	return RedirectSeeOther(c, "/admin/teams/"+itoa64(id))
}

// SetShareWeight sets the team's weight in the fair-share entitled shares.
func (h *Admin) SetShareWeight(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	w, err := models.ParseShareWeight(c.FormValue("share_weight"))
	if err != nil {
		return h.renderTeam(c, http.StatusUnprocessableEntity, id, h.Translator(c).Fields(err))
	}
	if err := h.Store.SetTeamShareWeight(c.Request().Context(), id, w, Actor(c)); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
	return RedirectSeeOther(c, "/admin/teams/"+itoa64(id))
}

// SetWholeBookings says whether the team's multi-GPU bookings are all or
// nothing when a priority request pre-empts them (a checkbox: absent is off).
func (h *Admin) SetWholeBookings(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.Store.SetTeamWholeBookings(c.Request().Context(), id, c.FormValue("whole_bookings") == "on", Actor(c)); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
	return RedirectSeeOther(c, "/admin/teams/"+itoa64(id))
}

// RemoveMember takes a user out of the team.
func (h *Admin) RemoveMember(c echo.Context) error {
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	userID, err := PathID(c, "user")
	if err != nil {
		return err
	}
	if ok, err := h.askRemoveMember(c, id, userID); !ok {
		return err
	}
	if err := h.Store.RemoveMembership(c.Request().Context(), id, userID, Actor(c)); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("flash.saved"))
	return RedirectSeeOther(c, "/admin/teams/"+itoa64(id))
}
