package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
	"github.com/gpubook/gpubook/views/i18n"
)

// Feeds serves the private calendar feeds, /feeds/{token}.ics: the token
// in the URL is the only credential, never a session cookie, because
// calendar apps fetch the feed on their own.
type Feeds struct {
	*Base
	BaseURL string
}

// errNoFeed answers every feed that cannot be read (a malformed, unknown or
// revoked token, a team its owner no longer leads) alike, with a 404 that
// tells a guesser nothing.
func errNoFeed() error {
	return models.NewError(models.ENOTFOUND, models.M("err.not_found", "What", "feed"))
}

// Show renders one feed as text/calendar in its owner's language.
func (h *Feeds) Show(c echo.Context) error {
	ctx := c.Request().Context()
	plain, ok := strings.CutSuffix(c.Param("file"), ".ics")
	if !ok || !models.ValidFeedToken(plain) {
		return errNoFeed()
	}
	now := h.Now()
	tok, owner, err := h.Store.FeedOwner(ctx, plain, now)
	if err != nil {
		return err
	}
	f := models.FeedFilter{UserID: owner.ID, From: now.Add(-models.FeedPast)}
	if tok.TeamID != 0 {
		mine, err := h.Store.MembershipsOf(ctx, owner.ID)
		if err != nil {
			return err
		}
		if !models.CanFeedTeam(owner, tok.TeamID, mine) {
			return errNoFeed()
		}
		f = models.FeedFilter{TeamID: tok.TeamID, From: f.From}
	}
	events, err := h.Store.FeedEvents(ctx, f)
	if err != nil {
		return err
	}
	var ids []int64
	for _, e := range events {
		ids = append(ids, e.GPUIDs...)
	}
	gpus, err := h.Store.GPUsByID(ctx, ids) // calendar apps poll this: only the events' GPUs
	if err != nil {
		return err
	}
	if err := h.addParents(c, gpus); err != nil {
		return err
	}
	t := h.I18n.For(i18n.Match(owner.Language, c.Request().Header.Get("Accept-Language")))
	body := views.FeedICS(t, views.FeedView{Team: tok.TeamName, Events: events, GPUs: gpus,
		BaseURL: PortalURL(c, h.BaseURL), Now: now, Location: owner.Location(h.Location)})
	c.Response().Header().Set("Cache-Control", "private, no-cache")
	c.Response().Header().Set("Content-Disposition", `inline; filename="gpubook.ics"`)
	return c.Blob(http.StatusOK, "text/calendar; charset=utf-8", body)
}

// addParents adds the GPUs of the MIG instances in gpus, which name them
// ("GPU 3 · 1g.10gb"): one more query, only when there are instances.
func (h *Feeds) addParents(c echo.Context, gpus map[int64]models.GPU) error {
	var ids []int64
	for _, g := range gpus {
		if _, ok := gpus[g.ParentID]; g.IsMIGInstance() && !ok {
			ids = append(ids, g.ParentID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	parents, err := h.Store.GPUsByID(c.Request().Context(), ids)
	for id, g := range parents {
		gpus[id] = g
	}
	return err
}
