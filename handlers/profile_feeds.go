package handlers

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// feedRows lists the feeds u may have: their own, then the teams they lead
// or hold an address for (an admin's for any team). mine are u's memberships.
func (h *Profile) feedRows(ctx context.Context, u *models.User, mine []models.Membership) (views.FeedsView, error) {
	toks, err := h.Store.FeedTokens(ctx, u.ID)
	if err != nil {
		return views.FeedsView{}, err
	}
	rows := []views.FeedRow{{}}
	index := map[int64]int{0: 0}
	for _, m := range mine {
		if m.Role == models.RoleLead {
			index[m.TeamID] = len(rows)
			rows = append(rows, views.FeedRow{TeamID: m.TeamID, TeamName: m.TeamName})
		}
	}
	for i := range toks {
		t := &toks[i]
		if _, ok := index[t.TeamID]; !ok {
			index[t.TeamID] = len(rows)
			rows = append(rows, views.FeedRow{TeamID: t.TeamID, TeamName: t.TeamName})
		}
		rows[index[t.TeamID]].Token = t
	}
	v := views.FeedsView{Rows: rows}
	if u.IsAdmin {
		if v.AdminTeams, err = h.Store.Teams(ctx); err != nil {
			return views.FeedsView{}, err
		}
	}
	return v, nil
}

// CreateFeed makes a new address for one of the user's feeds (form field
// team: empty or 0 for their own bookings), replacing the old address, and
// shows it once, on this response only.
func (h *Profile) CreateFeed(c echo.Context) error {
	ctx := c.Request().Context()
	u := models.UserFromContext(ctx)
	t := h.Translator(c)
	teamID, err := strconv.ParseInt(strings.TrimSpace(c.FormValue("team")), 10, 64)
	if c.FormValue("team") == "" {
		teamID, err = 0, nil
	}
	if err != nil || teamID < 0 {
		return h.render(c, http.StatusUnprocessableEntity, views.ProfileView{Language: u.Language, TimeZone: u.TimeZone,
			Errors: map[string]string{"team": t.T("feed.team_invalid")}})
	}
	label := t.T("feed.own")
	if teamID != 0 {
		mine, err := h.Store.MembershipsOf(ctx, u.ID)
		if err != nil {
			return err
		}
		if !models.CanFeedTeam(u, teamID, mine) {
			return models.NewError(models.EFORBIDDEN, models.M("err.forbidden"))
		}
		team, err := h.Store.Team(ctx, teamID)
		if err != nil {
			return err
		}
		label = t.T("feed.team", "Team", team.Name)
	}
	_, plain, err := h.Store.CreateFeedToken(ctx, u.ID, teamID, h.Now(), Actor(c))
	if err != nil {
		return err
	}
	https := PortalURL(c, h.BaseURL) + "/feeds/" + plain + ".ics"
	_, rest, _ := strings.Cut(https, "://")
	c.Response().Header().Set("Cache-Control", "no-store")
	return h.render(c, http.StatusCreated, views.ProfileView{Language: u.Language, TimeZone: u.TimeZone,
		Feeds: views.FeedsView{New: &views.NewFeed{Label: label, HTTPS: https, Webcal: "webcal://" + rest}}})
}

// RevokeFeed revokes one of the user's feed addresses; another user's id
// is a not-found, so that ids reveal nothing.
func (h *Profile) RevokeFeed(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	u := models.UserFromContext(ctx)
	if ok, err := h.askRevokeFeed(c, u.ID, id); !ok {
		return err
	}
	if err := h.Store.RevokeFeedToken(ctx, u.ID, id, h.Now(), Actor(c)); err != nil {
		return err
	}
	h.Flash(c, "ok", h.Translator(c).T("feed.revoked"))
	return RedirectSeeOther(c, "/profile#feeds")
}

// askRevokeFeed asks before a feed address stops working for every
// calendar that subscribed to it; another user's or a revoked feed is a 404.
func (h *Profile) askRevokeFeed(c echo.Context, userID, id int64) (bool, error) {
	feeds, err := h.Store.FeedTokens(c.Request().Context(), userID)
	if err != nil {
		return false, err
	}
	for _, f := range feeds {
		if f.ID == id && f.RevokedAt == nil {
			t := h.Translator(c)
			return h.confirmed(c, views.ConfirmView{Title: t.T("confirm.feed_title"), Text: t.T("confirm.feed_text"),
				Button: t.T("profile.revoke"), Back: "/profile#feeds"})
		}
	}
	return false, models.NewError(models.ENOTFOUND, models.M("err.not_found", "What", "feed"))
}
