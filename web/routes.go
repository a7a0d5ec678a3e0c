package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/gpubook/gpubook/handlers"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
	"github.com/gpubook/gpubook/static"
)

// routes lists every route of gpubook, one line each, grouped by who may use it.
func routes(e *echo.Echo, base *handlers.Base, cfg Config, m *metrics) {
	https := strings.HasPrefix(cfg.BaseURL, "https://")
	e.Use(m.observe(), middleware.RequestID(), accessLog(cfg.Logger), recoverPanics(cfg.Logger), securityHeaders(https),
		middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: "1M", Skipper: ownBodyLimit}),
		middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: importBodyLimit, Skipper: func(c echo.Context) bool { return !isImport(c) }}),
		compress(gzipMinLength, isAPIWrite))

	pages := &handlers.Pages{Base: base}
	health := &handlers.Health{Base: base}
	auth := &handlers.Auth{Base: base}
	admin := &handlers.Admin{Base: base, BaseURL: cfg.BaseURL, UnixClaimSet: cfg.SSO != nil && cfg.SSO.UnixClaim != ""}
	profile := &handlers.Profile{Base: base, BaseURL: cfg.BaseURL}
	calendar := &handlers.Calendar{Base: base}
	bookings := &handlers.Bookings{Base: base}
	adminAgents := &handlers.AdminAgents{Base: base, PortalURL: cfg.BaseURL}
	gpuPages := &handlers.GPUs{Base: base}

	// Probes and assets: no session.
	e.GET("/healthz", health.Live)
	e.GET("/readyz", health.Ready)
	e.GET("/static/*", staticFiles(static.FS), staticCache)
	// Browsers ask for /favicon.ico on pages that name no icon (the plain-text
	// definitions, a JSON answer opened in a tab): the SVG the pages link.
	e.GET("/favicon.ico", func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, "/static/img/favicon.svg")
	})

	// Browser pages: session, user, CSRF; visitors' writes held back first.
	web := e.Group("", sessions(base.Sessions), loadUser(base), anonymousWrites(anonWriteRate(cfg)), csrf(base))
	web.GET("/", pages.Home)
	web.POST("/lang", auth.SetLanguage)
	web.POST("/logout", auth.Logout)
	if cfg.SSO != nil {
		sso := &handlers.SSO{Base: base, Cfg: *cfg.SSO}
		auth.SSO = sso
		web.GET("/login", sso.ShowLogin)
		web.GET("/auth/oidc/start", sso.Start, rateLimit(cfg.SignInRate, byIP))
		web.GET("/auth/oidc/callback", sso.Callback, rateLimit(cfg.SignInRate, byIP))
	} else if cfg.DevLogin {
		web.GET("/login", auth.ShowDevLogin)
		web.POST("/login/dev", auth.DevLogin, rateLimit(cfg.SignInRate, byIP))
	}

	// Calendar and booking pages (signed-in users).
	signedIn := guarded{g: web, mw: []echo.MiddlewareFunc{requireUser}}
	signedIn.GET("/profile", profile.Show)
	signedIn.POST("/profile", profile.Save)
	signedIn.POST("/profile/zone", profile.SaveZone)
	signedIn.POST("/profile/tokens", profile.CreateToken, rateLimit(cfg.SignInRate, byUser))
	signedIn.POST("/profile/tokens/:id/revoke", profile.RevokeToken)
	signedIn.POST("/profile/feeds", profile.CreateFeed, rateLimit(cfg.SignInRate, byUser))
	signedIn.POST("/profile/feeds/:id/revoke", profile.RevokeFeed)
	signedIn.GET("/calendar", calendar.Show)
	signedIn.GET("/bookings/new", bookings.New)
	signedIn.POST("/bookings", bookings.Create)
	signedIn.POST("/bookings/gpus", bookings.GPUStates)
	signedIn.POST("/bookings/now", bookings.BookNow)
	signedIn.GET("/bookings", bookings.List)
	signedIn.POST("/bookings/:id/cancel", bookings.Cancel)
	signedIn.POST("/bookings/:id/release", bookings.Release)
	signedIn.POST("/bookings/:id/extend", bookings.Extend)
	signedIn.POST("/bookings/:id/note", bookings.UpdateNote)
	signedIn.GET("/slots", bookings.FindSlots)
	signedIn.GET("/gpus/:id", gpuPages.Show)

	// In-app notifications (signed-in users).
	notices := &handlers.Notifications{Base: base}
	signedIn.GET("/notifications", notices.List)
	signedIn.GET("/notifications/count", notices.Count)
	signedIn.POST("/notifications/read-all", notices.MarkAllRead)
	signedIn.POST("/notifications/:id/read", notices.MarkRead)

	// Policies, limits, lending and priority requests (signed-in users).
	policies := &handlers.Policies{Base: base}
	priority := &handlers.Priority{Base: base, BaseURL: cfg.BaseURL}
	signedIn.POST("/bookings/check", policies.Check)
	signedIn.GET("/limits", policies.ShowLimits)
	signedIn.GET("/limits/ledger", policies.Ledger)
	signedIn.POST("/limits/lend", policies.Lend)
	signedIn.GET("/requests/new", priority.New)
	signedIn.POST("/requests", priority.Create)
	signedIn.GET("/requests/:id", priority.Show)
	signedIn.POST("/requests/:id/approve", priority.Approve)
	signedIn.POST("/requests/:id/deny", priority.Deny)
	signedIn.POST("/requests/:id/withdraw", priority.Withdraw)
	signedIn.GET("/approvals", priority.Queue)
	signedIn.POST("/watches", priority.Watch)
	signedIn.POST("/profile/reminders", policies.SaveReminders)

	// Usage reports: my usage, a team's (its leads and admins), the cluster's.
	reports := &handlers.Reports{Base: base, Rules: cfg.Reports}
	signedIn.GET("/usage", reports.Usage)
	signedIn.GET("/usage/team/:id", reports.TeamUsage)
	signedIn.GET("/usage/definitions", reports.Definitions)
	signedIn.POST("/profile/report-email", reports.SaveEmailPref)

	// Admin pages.
	adm := web.Group("/admin", requireAdmin)
	adm.GET("", admin.Index)
	adm.GET("/nodes", admin.Nodes)
	adm.POST("/nodes", admin.CreateNode)
	adm.POST("/nodes/:id/rename", admin.RenameNode)
	adm.POST("/gpus/:id/service", admin.SetGPUService)
	adm.GET("/users", admin.Users)
	adm.POST("/users/:id/admin", admin.SetAdmin)
	adm.GET("/users/:id", admin.User)
	adm.POST("/users/:id/unix", admin.SaveUnix)
	adm.POST("/users/:id/disable", admin.DisableUser)
	adm.POST("/users/:id/enable", admin.EnableUser)
	adm.POST("/users/:id/rename", admin.RenameUser)
	adm.GET("/teams", admin.Teams)
	adm.POST("/teams", admin.CreateTeam)
	adm.GET("/teams/:id", admin.Team)
	adm.POST("/teams/:id/members", admin.SetMember)
	adm.POST("/teams/:id/share-weight", admin.SetShareWeight)
	adm.POST("/teams/:id/whole-bookings", admin.SetWholeBookings)
	adm.POST("/teams/:id/members/:user/remove", admin.RemoveMember)
	adm.GET("/groups", admin.Groups)
	adm.POST("/groups", admin.CreateGroup)
	adm.POST("/groups/:id/remove", admin.RemoveGroup)
	adm.GET("/audit", admin.Audit)
	adm.POST("/mail/:id/requeue", admin.RequeueMail)
	adm.GET("/policies", policies.AdminShow)
	adm.POST("/policies/limits", policies.SaveLimits)
	adm.POST("/policies/settings", policies.SaveSettings)
	adm.POST("/policies/models", policies.SaveModels)
	adm.GET("/agents", adminAgents.Agents)
	adm.GET("/nodes/:id/enroll", adminAgents.ShowEnroll)
	adm.POST("/nodes/:id/enroll", adminAgents.CreateEnrollToken)
	adm.GET("/violations", adminAgents.Violations)
	adm.GET("/usage", reports.ClusterUsage)
	adm.POST("/usage/recompute", reports.RecomputeWeek)
	adm.POST("/usage/unix-map", reports.MapUnixName)
	adm.GET("/import", admin.ImportForm)
	adm.POST("/import", admin.ImportBookings)

	// Live status (signed-in users).
	status := &handlers.Status{Base: base}
	signedIn.GET("/status", status.Show)
	signedIn.GET("/violations/mine", status.MyViolations)

	// Agent API (node credential): enrolment spends a one-time token; the
	// rest needs the node's credential, never the session cookie.
	agentAPI := &handlers.AgentAPI{Base: base, PortalURL: cfg.BaseURL, IdlePolicy: cfg.IdlePolicy, Retention: cfg.UsageRetention, Log: cfg.Logger,
		IdleWarner: notifier(cfg, base).IdleWarning, UsageIngested: m.usageIngested}
	e.POST(wire.PathEnroll, agentAPI.Enroll, middleware.BodyLimit(strconv.Itoa(wire.MaxEnrollBody)), rateLimit(cfg.SignInRate, byIP))
	// The agent's own body limit: its batches are cut to fit it (wire.MaxBody).
	// One failure budget per address for both APIs: a guesser is refused
	// before the credential is looked up.
	authFails := limitAuthFailures(cfg.APIFailRate, models.EUNAUTHORIZED)
	agent := e.Group(wire.APIPrefix, middleware.BodyLimit(strconv.Itoa(wire.MaxBody)), authFails, agentAPI.Authenticate)
	agent.PUT("/inventory", agentAPI.Inventory)
	agent.GET("/schedule", agentAPI.Schedule)
	agent.POST("/usage", agentAPI.Usage)
	agent.POST("/violations", agentAPI.Violations)
	agent.POST("/idle", agentAPI.Idle)
	agent.POST("/heartbeat", agentAPI.Heartbeat)

	// Calendar feeds: the feed token in the path is the only credential,
	// never the session; a bad or revoked token is a 404 and spends the
	// address's failure budget.
	feeds := &handlers.Feeds{Base: base, BaseURL: cfg.BaseURL}
	e.GET("/feeds/:file", feeds.Show, limitAuthFailures(cfg.APIFailRate, models.ENOTFOUND), rateLimit(cfg.APIRate, byFeedToken))

	// JSON API v1: personal token only, never the session cookie. Its
	// contract is public, like this source: reading it needs no token.
	e.GET("/api/v1/openapi.json", handlers.OpenAPI)
	api := e.Group("/api/v1", authFails, rateLimit(cfg.APIRate, byTokenOrIP), tokenAuth(base))
	v1 := &handlers.API{Base: base}
	api.GET("/me", v1.ShowMe)
	api.GET("/gpus", v1.ListGPUs)
	api.GET("/bookings", v1.ListBookings)
	api.POST("/bookings", v1.CreateBooking)
	api.DELETE("/bookings/:id", v1.CancelBooking)
	api.POST("/bookings/:id/release", v1.ReleaseBooking)
	api.POST("/bookings/:id/extend", v1.ExtendBooking)
	api.GET("/slots", v1.FindSlots)
	api.POST("/requests", priority.CreateAPIRequest)
	api.GET("/requests/:id", priority.ShowAPIRequest)
	api.GET("/limits", policies.ShowAPILimits)
}

// guarded adds middleware to each route instead of to a group: a group on
// the "" prefix would also catch every unknown path and answer it with its
// middleware (a sign-in redirect) instead of a 404.
type guarded struct {
	g  *echo.Group
	mw []echo.MiddlewareFunc
}

func (r guarded) GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	r.g.GET(path, h, append(r.mw, m...)...)
}

func (r guarded) POST(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	r.g.POST(path, h, append(r.mw, m...)...)
}

// gzipMinLength is the smallest answer worth compressing: below about one
// packet gzip saves nothing on the wire and costs a compressor per call
// (0.4–0.55 ms measured on a 1 kB JSON answer; compress takes none for
// an answer below it).
const gzipMinLength = 1400

// isAPIWrite reports a JSON API call that changes something: its answer is
// one small object, which gzip would make no smaller, and compress would
// only hold and copy.
func isAPIWrite(c echo.Context) bool {
	m := c.Request().Method
	return isAPI(c) && m != http.MethodGet && m != http.MethodHead
}

// isAgentAPI skips the global body limit for the agent API, which has its own.
// importBodyLimit lets the booking import's file (models.MaxImportBytes)
// through with its multipart framing; the parser refuses a larger file
// with a message.
const importBodyLimit = "11M"

// ownBodyLimit skips the 1 MB limit for the routes that set their own: the
// agent API and the booking import.
func ownBodyLimit(c echo.Context) bool {
	return isAgentAPI(c) || isImport(c)
}

// isImport is the booking import's upload, limited to importBodyLimit
// before any middleware reads the form.
func isImport(c echo.Context) bool { return c.Request().URL.Path == "/admin/import" }

func isAgentAPI(c echo.Context) bool {
	return strings.HasPrefix(c.Request().URL.Path, wire.APIPrefix+"/") && c.Request().URL.Path != wire.PathEnroll
}
