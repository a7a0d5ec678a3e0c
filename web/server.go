// Package web builds gpubook's HTTP server: one routes file, the middleware
// (request IDs, logs, recovery, security headers, sessions, CSRF), the one
// error handler, and the graceful start and stop.
package web

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/handlers"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/jobs"
	"github.com/gpubook/gpubook/models/notify"
	"github.com/gpubook/gpubook/views"
	"github.com/gpubook/gpubook/views/i18n"
)

// Config is the server's configuration, read and checked in cmd.
type Config struct {
	Listen   string
	BaseURL  string // e.g. https://gpu.example.org; "" = http://Listen
	Location *time.Location
	// DevLogin enables the development sign-in (cmd decides: no OIDC issuer
	// and a loopback listen address, or GPUBOOK_DEV_LOGIN=1).
	DevLogin       bool
	SessionIdle    time.Duration
	SessionMaxAge  time.Duration
	Limits         models.BookingLimits
	Now            models.Clock
	Logger         *slog.Logger
	ShutdownPeriod time.Duration
	// SSO is the OpenID Connect set-up; nil when no issuer is configured.
	SSO *handlers.SSOConfig
	// Rate limits: API calls per token (or IP), sign-in attempts per IP
	// (also token creation per user), failed API authentications per IP.
	APIRate     Rate
	SignInRate  Rate
	APIFailRate Rate
	// TrustedProxies are the reverse proxies whose X-Forwarded-For entries
	// are believed; empty means the connection's peer is the client.
	TrustedProxies []*net.IPNet
	// IdlePolicy decides what happens to bookings the agents report idle.
	IdlePolicy models.IdlePolicy
	// I18n is the parsed catalogs; nil means New parses them itself.
	I18n *i18n.Bundle
	// UsageRetention is how long per-minute usage is kept (0: the default).
	UsageRetention time.Duration
	// Reports are the usage reports' thresholds and schedule (zero: defaults).
	Reports models.ReportRules
	// MetricsListen is where /metrics (Prometheus) is served, apart from
	// the portal's own address so that it need not be public; "" = off.
	MetricsListen string
	// JobStates reports the background jobs' runs for /metrics; nil: none.
	JobStates func() []jobs.RunState
}

// Rate is a token-bucket limit: PerMinute sustained, Burst at once.
type Rate struct {
	PerMinute float64
	Burst     int
}

// Server is a wired gpubook HTTP server.
type Server struct {
	Echo    *echo.Echo
	cfg     Config
	logger  *slog.Logger
	metrics *metrics // nil when metrics are off
}

// New wires the server: every dependency comes in here, nothing is global.
func New(cfg Config, store handlers.Store, sessionStore scs.Store) (*Server, error) {
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Limits.Slot == 0 {
		cfg.Limits = models.DefaultBookingLimits
	}
	if cfg.Limits.Location == nil {
		cfg.Limits.Location = cfg.Location
	}
	if cfg.SessionIdle == 0 {
		cfg.SessionIdle = 12 * time.Hour
	}
	if cfg.SessionMaxAge == 0 {
		cfg.SessionMaxAge = 7 * 24 * time.Hour
	}
	if cfg.IdlePolicy.Grace == 0 {
		cfg.IdlePolicy = models.DefaultIdlePolicy
	}
	if cfg.APIRate.PerMinute == 0 {
		cfg.APIRate = Rate{PerMinute: 600, Burst: 60}
	}
	if cfg.SignInRate.PerMinute == 0 {
		cfg.SignInRate = Rate{PerMinute: 20, Burst: 10}
	}
	if cfg.APIFailRate.PerMinute == 0 {
		cfg.APIFailRate = Rate{PerMinute: 10, Burst: 20}
	}
	bundle := cfg.I18n
	if bundle == nil {
		var err error
		if bundle, err = i18n.Load(); err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
	}
	gob.Register([]views.Flash{})
	base := &handlers.Base{Store: store, Sessions: newSessions(cfg, sessionStore), I18n: bundle,
		Location: cfg.Location, Now: cfg.Now, DevLogin: cfg.DevLogin && cfg.SSO == nil, Limits: cfg.Limits,
		SessionIdle: cfg.SessionIdle, SessionMaxAge: cfg.SessionMaxAge}
	if cfg.SSO != nil {
		base.GroupPrefix, base.GroupLeadSuffix = cfg.SSO.TeamPrefix, cfg.SSO.LeadSuffix
		cfg.DevLogin = false
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = clientIP(cfg.TrustedProxies)
	e.HTTPErrorHandler = errorHandler(base, cfg.Logger)
	s := &Server{Echo: e, cfg: cfg, logger: cfg.Logger}
	if cfg.MetricsListen != "" {
		st, ok := store.(models.PortalCountsStore)
		if !ok {
			return nil, fmt.Errorf("web: metrics: the store cannot count the portal's state")
		}
		m, err := newMetrics(cfg, st)
		if err != nil {
			return nil, err
		}
		s.metrics = m
	}
	routes(e, base, cfg, s.metrics)
	return s, nil
}

func newSessions(cfg Config, store scs.Store) *scs.SessionManager {
	sm := scs.New()
	sm.Store = hashSessions(store) // the table holds hashes, the cookie the token
	sm.Lifetime = cfg.SessionMaxAge
	// No scs IdleTimeout: it rewrites the session row on every request.
	// The idle limit is enforced by gpubook's clock instead (Base.SessionUserID),
	// whose last-seen mark is written at most once a minute.
	sm.Cookie.Name = "gpubook_session"
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Secure = strings.HasPrefix(cfg.BaseURL, "https://")
	sm.Cookie.Persist = true
	return sm
}

// Run serves until ctx ends, then lets in-flight requests finish within the
// shutdown period. ready, if not nil, is closed once the port is open.
func (s *Server) Run(ctx context.Context, ready chan<- net.Addr) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("web: listen on %s: %w", s.cfg.Listen, err)
	}
	srv := &http.Server{
		Handler:           s.Echo,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	msrv, err := s.listenMetrics()
	if err != nil {
		ln.Close()
		return err
	}
	s.logger.Info("gpubook listening", "addr", ln.Addr().String(), "base_url", s.cfg.BaseURL, "dev_login", s.cfg.DevLogin)
	if ready != nil {
		ready <- ln.Addr()
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if msrv != nil {
		go func() { errc <- msrv.serve() }()
		defer msrv.Close()
	}
	select {
	case err := <-errc:
		return fmt.Errorf("web: serve: %w", err)
	case <-ctx.Done():
	}
	period := s.cfg.ShutdownPeriod
	if period == 0 {
		period = 30 * time.Second
	}
	s.logger.Info("shutting down: finishing in-flight requests", "grace", period)
	sctx, cancel := context.WithTimeout(context.Background(), period)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("web: shutdown: %w", err)
	}
	return nil
}

// notifier builds the agent notifications (idle warnings, offline alerts)
// on the same store and catalogs as the server.
func notifier(cfg Config, base *handlers.Base) *notify.Notifier {
	mail := &views.Mail{I18n: base.I18n, BaseURL: cfg.BaseURL, Location: cfg.Location}
	return &notify.Notifier{Store: base.Store, Mail: mail, Policy: cfg.IdlePolicy, Now: cfg.Now}
}
