package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/handlers"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/api"
	"github.com/gpubook/gpubook/views"
)

// statusOf maps a domain error code to an HTTP status: the only place that does.
func statusOf(code string) int {
	switch code {
	case models.EINVALID, models.EPOLICY:
		return http.StatusUnprocessableEntity
	case models.ENOTFOUND:
		return http.StatusNotFound
	case models.ECONFLICT:
		return http.StatusConflict
	case models.EFORBIDDEN:
		return http.StatusForbidden
	case models.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case models.ETOOMANY:
		return http.StatusTooManyRequests
	default:
		return http.StatusInternalServerError
	}
}

// fromEcho turns Echo's own errors (404 route, 405, body limit, bad bind)
// into domain errors so that they render like every other error.
func fromEcho(he *echo.HTTPError) *models.Error {
	switch he.Code {
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return models.NewError(models.ENOTFOUND, models.M("err.not_found", "What", "page"))
	case http.StatusRequestEntityTooLarge:
		return models.NewError(models.EINVALID, models.M("err.body_too_large"))
	case http.StatusForbidden:
		return models.NewError(models.EFORBIDDEN, models.M("err.forbidden"))
	case http.StatusUnauthorized:
		return models.NewError(models.EUNAUTHORIZED, models.M("err.unauthorized"))
	case http.StatusTooManyRequests:
		return models.NewError(models.ETOOMANY, models.M("err.rate_limited"))
	case http.StatusBadRequest, http.StatusUnsupportedMediaType:
		return models.NewError(models.EINVALID, models.M("err.bad_request"))
	}
	return models.Internal(he)
}

// apiConflicts puts the bookings in the way on the wire (models/api).
func apiConflicts(cs []models.Conflict) []api.Conflict {
	out := make([]api.Conflict, len(cs))
	for i, c := range cs {
		out[i] = api.Conflict{GPUID: c.GPUID, GPUIndex: c.GPUIndex, GPUName: c.GPUName, BookingID: c.BookingID, UserName: c.UserName,
			StartsAt: c.StartsAt.UTC(), EndsAt: c.EndsAt.UTC()}
	}
	return out
}

// errorHandler renders every error: a page for browsers, JSON under /api/.
// Internal errors are logged with their cause and shown without it.
// statusClientClosed is nginx's 499: the client closed the request.
const statusClientClosed = 499

func errorHandler(base *handlers.Base, logger *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			logger.ErrorContext(c.Request().Context(), "error after response started", "err", err, "path", logPath(c.Request().URL.Path))
			return
		}
		// A client that hung up (an agent past its timeout, a closed tab)
		// is not a server failure: log it quietly and answer 499, nginx's
		// "client closed request", which nobody reads.
		if errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil {
			logger.InfoContext(c.Request().Context(), "client closed the request", "path", logPath(c.Request().URL.Path))
			_ = c.NoContent(statusClientClosed)
			return
		}
		var de *models.Error
		var he *echo.HTTPError
		switch {
		case errors.As(err, &de):
		case errors.As(err, &he):
			de = fromEcho(he)
		default:
			de = models.Internal(err)
		}
		status := statusOf(de.Code)
		reqID := c.Response().Header().Get(echo.HeaderXRequestID)
		if status >= 500 {
			logger.ErrorContext(c.Request().Context(), "request failed", "err", err, "request_id", reqID, "path", logPath(c.Request().URL.Path))
		}
		t := base.Translator(c)
		if isAPI(c) {
			body := api.Error{Error: api.ErrorDetail{Code: de.Code, Message: t.Msg(de.Msg), Fields: t.Fields(de), RequestID: reqID}}
			if len(de.Conflicts) > 0 {
				body.Error.Conflicts = apiConflicts(de.Conflicts)
			}
			if de.Code == models.EINVALID && len(body.Error.Fields) == 0 {
				body.Error.Fields = nil
			}
			if c.Request().Method == http.MethodHead {
				_ = c.NoContent(status)
				return
			}
			if err := c.JSON(status, body); err != nil {
				logger.ErrorContext(c.Request().Context(), "write error response", "err", err)
			}
			return
		}
		renderErrorPage(base, c, status, de, logger)
	}
}

func renderErrorPage(base *handlers.Base, c echo.Context, status int, de *models.Error, logger *slog.Logger) {
	if status == http.StatusUnauthorized {
		_ = c.Redirect(http.StatusSeeOther, "/login?next="+c.Request().URL.RequestURI())
		return
	}
	p := base.NewPage(c)
	v := views.ErrorView{Status: status, Title: p.Tr("error.title"), Message: p.T.Msg(de.Msg)}
	switch status {
	case http.StatusNotFound:
		v.Title, v.Message = p.Tr("error.404"), p.Tr("error.404.text")
	case http.StatusForbidden:
		v.Title = p.Tr("error.403")
	case http.StatusInternalServerError:
		v.Message = p.Tr("error.500.text", "ID", p.RequestID)
	}
	for _, m := range handlers.SortedFields(p.T.Fields(de)) {
		v.Message += " " + m
	}
	if err := handlers.Render(c, status, views.ErrorPage(p, v)); err != nil {
		logger.ErrorContext(c.Request().Context(), "render error page", "err", err)
	}
}

func isAPI(c echo.Context) bool { return strings.HasPrefix(c.Request().URL.Path, "/api/") }
