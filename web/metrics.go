package web

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpubook/gpubook/models"
)

// metricsScrapeTimeout bounds the database reads of one scrape: well under
// Prometheus's default scrape timeout (10 s), so that a slow database shows
// as gpubook_metrics_database_up 0 instead of a failed scrape.
const metricsScrapeTimeout = 5 * time.Second

// metrics is the portal's Prometheus registry: what the middleware and the
// agent API count as they go, and collectors that read the database and
// the job runner at scrape time. A nil *metrics (metrics off) counts nothing.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	usage    *prometheus.CounterVec
}

// newMetrics builds the registry. Every series is gpubook_…, plus the Go
// runtime's and the process's standard ones.
func newMetrics(cfg Config, st models.PortalCountsStore) (*metrics, error) {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpubook_http_requests_total",
			Help: "HTTP requests answered, by method, route template and status."}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpubook_http_request_duration_seconds",
			Help: "Time to answer an HTTP request, by method and route template.", Buckets: prometheus.DefBuckets}, []string{"method", "route"}),
		usage: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpubook_agent_usage_records_total",
			Help: "Per-minute usage records received from agents, by result: inserted, duplicate (a resend) or stale (past retention)."}, []string{"result"}),
	}
	for _, r := range []string{"inserted", "duplicate", "stale"} {
		m.usage.WithLabelValues(r) // present at zero, so that rate() works from the first record
	}
	cs := []prometheus.Collector{m.requests, m.duration, m.usage,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&stateCollector{store: st, now: cfg.Now, log: cfg.Logger}}
	if cfg.JobStates != nil {
		cs = append(cs, &jobCollector{states: cfg.JobStates})
	}
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("web: metrics: %w", err)
		}
	}
	return m, nil
}

// handler serves the exposition; errors of a collector are logged and the
// rest of the scrape still answered.
func (m *metrics) handler(log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelError), ErrorHandling: promhttp.ContinueOnError}))
	return mux
}

// observe counts every request by its route template (echo's c.Path(),
// never the raw URL, so that IDs do not multiply the series) and status.
// It runs outermost, after the error handler has set the final status.
func (m *metrics) observe() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if m == nil {
			return next
		}
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			method := c.Request().Method
			switch method {
			case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
			default:
				method = "other"
			}
			m.requests.WithLabelValues(method, route, strconv.Itoa(c.Response().Status)).Inc()
			m.duration.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
			return nil
		}
	}
}

// usageIngested counts one batch's records by what the store did with them.
func (m *metrics) usageIngested(r models.UsageResult) {
	if m == nil {
		return
	}
	m.usage.WithLabelValues("inserted").Add(float64(r.Inserted))
	m.usage.WithLabelValues("duplicate").Add(float64(r.Duplicates))
	m.usage.WithLabelValues("stale").Add(float64(r.Stale))
}

// metricsServer is the separate listener /metrics is served on.
type metricsServer struct {
	*http.Server
	ln net.Listener
}

// listenMetrics opens the metrics address, or returns nil when metrics
// are off. It is opened before the portal announces itself, so that a bad
// address stops start-up.
func (s *Server) listenMetrics() (*metricsServer, error) {
	if s.metrics == nil {
		return nil, nil
	}
	ln, err := net.Listen("tcp", s.cfg.MetricsListen)
	if err != nil {
		return nil, fmt.Errorf("web: metrics: listen on %s: %w", s.cfg.MetricsListen, err)
	}
	s.logger.Info("metrics listening", "addr", ln.Addr().String(), "path", "/metrics")
	return &metricsServer{ln: ln, Server: &http.Server{Handler: s.metrics.handler(s.logger),
		ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn)}}, nil
}

// serve answers scrapes until Close; a closed server is no error.
func (ms *metricsServer) serve() error {
	if err := ms.Serve(ms.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
