package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// Config is every setting of gpubook, read once at start-up from flags and
// environment variables and then passed down as values; nothing else in the
// program reads the environment.
type Config struct {
	DatabaseURL string
	Dialect     string
	// DatabaseMaxConns caps this replica's PostgreSQL connections
	// (GPUBOOK_DATABASE_MAX_CONNS): replicas × it must stay under the
	// server's max_connections.
	DatabaseMaxConns int
	Listen           string
	BaseURL          string
	Location         *time.Location
	LogLevel         slog.Level
	LogFormat        string // "text" or "json"
	OIDCIssuer       string
	DevLogin         bool
	SlotMinutes      int
	SSO              SSOSettings
	SMTP             SMTPSettings
	Agent            AgentSettings
	Reports          models.ReportRules
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is
	// believed (GPUBOOK_TRUSTED_PROXIES); none by default.
	TrustedProxies []*net.IPNet
	// MetricsListen is where Prometheus scrapes /metrics
	// (GPUBOOK_METRICS_LISTEN); "" = metrics off, the default.
	MetricsListen string
	// PprofListen is a loopback address serving net/http/pprof
	// (GPUBOOK_PPROF_LISTEN); "" = off, the default.
	PprofListen string
	// Import bounds the dates of imported bookings
	// (GPUBOOK_IMPORT_YEARS_BACK, GPUBOOK_IMPORT_YEARS_AHEAD).
	Import ImportSettings
}

// Defaults that a fresh checkout runs with, no setup needed.
const (
	defaultDatabaseURL = "sqlite:./gpubook.db"
	defaultListen      = "127.0.0.1:8080"
)

// setting is one configuration value: its flag (if the command offers it)
// and its environment variable. A flag that was given wins over the
// variable, which wins over the default.
type setting struct {
	flag, env string
	value     string
	set       bool
}

func (s *setting) String() string     { return s.value }
func (s *setting) Set(v string) error { s.value, s.set = v, true; return nil }

// configFlags holds the settings of one command invocation.
type configFlags struct {
	dbURL, listen, baseURL, timezone, logLevel   setting
	logFormat, devLogin, oidcIssuer, slotMinutes setting
	metricsListen                                setting
}

// newConfigFlags registers the configuration flags on fs. Commands that do
// not serve get only --database-url, so that their help stays short and
// their own flags (user add --time-zone) cannot be confused with the
// server's; the other settings still come from the environment.
func newConfigFlags(fs *flag.FlagSet, serving bool) *configFlags {
	cf := &configFlags{
		dbURL:         setting{flag: "database-url", env: "GPUBOOK_DATABASE_URL"},
		listen:        setting{flag: "listen", env: "GPUBOOK_LISTEN"},
		baseURL:       setting{flag: "base-url", env: "GPUBOOK_BASE_URL"},
		timezone:      setting{flag: "timezone", env: "GPUBOOK_TIMEZONE"},
		logLevel:      setting{flag: "log-level", env: "GPUBOOK_LOG_LEVEL"},
		logFormat:     setting{flag: "log-format", env: "GPUBOOK_LOG_FORMAT"},
		devLogin:      setting{flag: "dev-login", env: "GPUBOOK_DEV_LOGIN"},
		oidcIssuer:    setting{flag: "oidc-issuer", env: "GPUBOOK_OIDC_ISSUER"},
		slotMinutes:   setting{flag: "slot-minutes", env: "GPUBOOK_SLOT_MINUTES"},
		metricsListen: setting{flag: "metrics-listen", env: "GPUBOOK_METRICS_LISTEN"},
	}
	fs.Var(&cf.dbURL, "database-url", "database `URL`: postgres://… or sqlite:PATH (env GPUBOOK_DATABASE_URL[_FILE], default "+defaultDatabaseURL+")")
	if !serving {
		return cf
	}
	fs.Var(&cf.timezone, "timezone", "the cluster's IANA time `zone` (env GPUBOOK_TIMEZONE, default the machine's)")
	fs.Var(&cf.listen, "listen", "`host:port` to listen on (env GPUBOOK_LISTEN, default "+defaultListen+")")
	fs.Var(&cf.metricsListen, "metrics-listen", "`host:port` to serve Prometheus /metrics on, apart from the portal (env GPUBOOK_METRICS_LISTEN, default off)")
	fs.Var(&cf.baseURL, "base-url", "public `URL` of the portal (env GPUBOOK_BASE_URL, default http://LISTEN)")
	fs.Var(&cf.logLevel, "log-level", "log `level`: debug, info, warn or error (env GPUBOOK_LOG_LEVEL, default info)")
	fs.Var(&cf.logFormat, "log-format", "log `format`: text or json (env GPUBOOK_LOG_FORMAT, default text)")
	fs.Var(&cf.devLogin, "dev-login", "`1|0` forces the development sign-in on or off (env GPUBOOK_DEV_LOGIN, default: on without OIDC on a loopback address)")
	fs.Var(&cf.oidcIssuer, "oidc-issuer", "OIDC issuer `URL` (env GPUBOOK_OIDC_ISSUER)")
	fs.Var(&cf.slotMinutes, "slot-minutes", "booking grid in `minutes`: 5, 10, 15, 20, 30, 60 or 120 (env GPUBOOK_SLOT_MINUTES, default 30)")
	return cf
}

// lookup returns a setting's raw value and the name to blame for a bad one:
// the flag when it was given, else the variable.
func (s *setting) lookup(getenv func(string) string) (value, name string) {
	if s.set {
		return s.value, "--" + s.flag
	}
	return getenv(s.env), s.env
}

// parseConfig is the pure core of configuration: it reads only getenv and
// the command-line args (all flags) and returns the checked settings.
func parseConfig(getenv func(string) string, args []string) (Config, error) {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cf := newConfigFlags(fs, true)
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	return cf.resolve(getenv)
}

// resolve checks every setting and stops at the first bad one, naming it.
func (cf *configFlags) resolve(getenv func(string) string) (Config, error) {
	var cfg Config
	steps := []func(func(string) string, *Config) error{
		cf.resolveDatabase, cf.resolveListen, cf.resolveMetricsListen, cf.resolveBaseURL, cf.resolveTimezone,
		cf.resolveLogging, cf.resolveDevLogin, cf.resolveSlot, resolveSSO, resolveAgent, resolveSMTP, resolveReports,
		resolveTrustedProxies, resolveImport, resolvePprof,
	}
	for _, step := range steps {
		if err := step(getenv, &cfg); err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}

func (cf *configFlags) resolveDatabase(getenv func(string) string, cfg *Config) error {
	raw, name := cf.dbURL.lookup(getenv)
	if !cf.dbURL.set {
		v, n, err := secretEnv(getenv, cf.dbURL.env)
		if err != nil {
			return err
		}
		raw, name = v, n
	}
	if raw == "" {
		raw = defaultDatabaseURL
	}
	dialect, _, err := store.ParseURL(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	cfg.DatabaseURL, cfg.Dialect = raw, dialect
	return resolveMaxConns(getenv, cfg)
}

// maxConnsLimit bounds GPUBOOK_DATABASE_MAX_CONNS: more than this from one
// replica is a typo, not a plan (PostgreSQL's default is 100 in all).
const maxConnsLimit = 1000

func resolveMaxConns(getenv func(string) string, cfg *Config) error {
	cfg.DatabaseMaxConns = store.DefaultMaxConns
	raw := strings.TrimSpace(getenv("GPUBOOK_DATABASE_MAX_CONNS"))
	if raw == "" {
		return nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > maxConnsLimit {
		return fmt.Errorf("GPUBOOK_DATABASE_MAX_CONNS: %q is not a whole number from 1 to %d", raw, maxConnsLimit)
	}
	cfg.DatabaseMaxConns = n
	return nil
}

// secretEnv reads a secret from NAME or from the file named by NAME_FILE
// (Docker and Kubernetes secrets), refusing both at once because it would be
// unclear which one wins. It returns the value and the variable it came from.
func secretEnv(getenv func(string) string, name string) (value, from string, err error) {
	direct, file := getenv(name), getenv(name+"_FILE")
	switch {
	case direct != "" && file != "":
		return "", name, fmt.Errorf("%s and %s_FILE are both set; set only one", name, name)
	case file == "":
		return direct, name, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", name + "_FILE", fmt.Errorf("%s_FILE: %w", name, err)
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", name + "_FILE", fmt.Errorf("%s_FILE: %s is empty", name, file)
	}
	return v, name + "_FILE", nil
}

func (cf *configFlags) resolveListen(getenv func(string) string, cfg *Config) error {
	raw, name := cf.listen.lookup(getenv)
	if raw == "" {
		raw = defaultListen
	}
	if err := checkListen(name, raw); err != nil {
		return err
	}
	cfg.Listen = raw
	return nil
}

// resolveMetricsListen reads the metrics address: off when empty, else a
// host:port other than the portal's.
func (cf *configFlags) resolveMetricsListen(getenv func(string) string, cfg *Config) error {
	raw, name := cf.metricsListen.lookup(getenv)
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil
	}
	if err := checkListen(name, raw); err != nil {
		return err
	}
	if raw == cfg.Listen && !strings.HasSuffix(raw, ":0") {
		return fmt.Errorf("%s: %q is the portal's own address; choose another port (e.g. 127.0.0.1:9090)", name, raw)
	}
	cfg.MetricsListen = raw
	return nil
}

// checkListen checks a listen address: host:port with a port in range.
func checkListen(name, raw string) error {
	host, port, err := net.SplitHostPort(raw)
	if err != nil {
		return fmt.Errorf("%s: %q is not host:port (e.g. %s or :8080)", name, raw, defaultListen)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%s: %q has no valid port (0-65535)", name, raw)
	}
	if strings.ContainsAny(host, " /") {
		return fmt.Errorf("%s: %q has an invalid host", name, raw)
	}
	return nil
}

func (cf *configFlags) resolveBaseURL(getenv func(string) string, cfg *Config) error {
	raw, name := cf.baseURL.lookup(getenv)
	if raw == "" {
		host, port, _ := net.SplitHostPort(cfg.Listen)
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "localhost"
		}
		cfg.BaseURL = "http://" + net.JoinHostPort(host, port)
		return nil
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %q is not a URL", name, raw)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%s: %q must start with http:// or https://", name, raw)
	case u.Host == "":
		return fmt.Errorf("%s: %q has no host", name, raw)
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(raw, "?#"):
		return fmt.Errorf("%s: %q must not have a query or fragment", name, raw)
	case u.User != nil:
		return fmt.Errorf("%s: %q must not contain credentials", name, raw)
	}
	cfg.BaseURL = strings.TrimRight(raw, "/")
	return nil
}

func (cf *configFlags) resolveTimezone(getenv func(string) string, cfg *Config) error {
	raw, name := cf.timezone.lookup(getenv)
	if raw == "" {
		cfg.Location = machineZone(getenv)
		return nil
	}
	loc, err := time.LoadLocation(raw)
	if err != nil || strings.EqualFold(raw, "local") {
		return fmt.Errorf("%s: unknown time zone %q", name, raw)
	}
	cfg.Location = loc
	return nil
}

func (cf *configFlags) resolveLogging(getenv func(string) string, cfg *Config) error {
	raw, name := cf.logLevel.lookup(getenv)
	levels := map[string]slog.Level{"": slog.LevelInfo, "debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}
	level, ok := levels[strings.ToLower(strings.TrimSpace(raw))]
	if !ok {
		return fmt.Errorf("%s: %q is not one of debug, info, warn, error", name, raw)
	}
	cfg.LogLevel = level
	raw, name = cf.logFormat.lookup(getenv)
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "", "text":
		cfg.LogFormat = "text"
	case "json":
		cfg.LogFormat = "json"
	default:
		return fmt.Errorf("%s: %q is not text or json", name, raw)
	}
	return nil
}

// resolveDevLogin decides whether the development sign-in is on. Without
// SSO it is the only way in, so it is on by default, but only where nobody
// else can reach it: on a loopback address. An explicit setting wins.
func (cf *configFlags) resolveDevLogin(getenv func(string) string, cfg *Config) error {
	issuer, _ := cf.oidcIssuer.lookup(getenv)
	cfg.OIDCIssuer = strings.TrimSpace(issuer)
	raw, name := cf.devLogin.lookup(getenv)
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "1", "true", "yes", "on":
		cfg.DevLogin = true
	case "0", "false", "no", "off":
		cfg.DevLogin = false
	case "":
		cfg.DevLogin = cfg.OIDCIssuer == "" && isLoopback(cfg.Listen)
	default:
		return fmt.Errorf("%s: %q is not 1 or 0", name, raw)
	}
	return nil
}

// resolveTrustedProxies reads GPUBOOK_TRUSTED_PROXIES: CIDRs or single
// addresses, separated by commas or spaces. Only these proxies' forwarding
// headers are believed; an unreadable entry stops start-up rather than
// silently trusting less (or more) than the admin meant.
func resolveTrustedProxies(getenv func(string) string, cfg *Config) error {
	const name = "GPUBOOK_TRUSTED_PROXIES"
	for _, f := range strings.FieldsFunc(getenv(name), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if !strings.Contains(f, "/") {
			if ip := net.ParseIP(f); ip != nil {
				bits := 8 * len(ip.To16())
				if ip.To4() != nil {
					ip, bits = ip.To4(), 32
				}
				cfg.TrustedProxies = append(cfg.TrustedProxies, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
				continue
			}
		}
		_, n, err := net.ParseCIDR(f)
		if err != nil {
			return fmt.Errorf("%s: %q is not an address or a CIDR (e.g. 10.0.0.0/8, 192.0.2.7)", name, f)
		}
		cfg.TrustedProxies = append(cfg.TrustedProxies, n)
	}
	return nil
}

// isLoopback reports whether a listen address accepts only local connections.
func isLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (cf *configFlags) resolveSlot(getenv func(string) string, cfg *Config) error {
	raw, name := cf.slotMinutes.lookup(getenv)
	if strings.TrimSpace(raw) == "" {
		cfg.SlotMinutes = 30
		return nil
	}
	// Each choice divides an hour or is whole hours, so that the calendar's rows line up.
	n, err := strconv.Atoi(strings.TrimSpace(raw))
	if err == nil {
		for _, c := range []int{5, 10, 15, 20, 30, 60, 120} {
			if n == c {
				cfg.SlotMinutes = n
				return nil
			}
		}
	}
	return fmt.Errorf("%s: %q is not one of 5, 10, 15, 20, 30, 60, 120", name, raw)
}

// bookingLimits is the domain's default booking limits on this
// installation's slot grid: what serve's handlers and the demo both obey.
func (cfg Config) bookingLimits() models.BookingLimits {
	limits := models.DefaultBookingLimits
	limits.Slot = time.Duration(cfg.SlotMinutes) * time.Minute
	limits.ImportYearsBack, limits.ImportYearsAhead = cfg.Import.YearsBack, cfg.Import.YearsAhead
	return limits
}

// machineZone is the machine's own zone under its IANA name where it can be
// found (TZ, then /etc/localtime's link, then /etc/timezone), so that pages
// say "Asia/Shanghai" rather than "Local"; else time.Local.
func machineZone(getenv func(string) string) *time.Location {
	candidates := []string{strings.TrimPrefix(getenv("TZ"), ":")}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if i := strings.Index(target, "zoneinfo/"); i >= 0 {
			candidates = append(candidates, target[i+len("zoneinfo/"):])
		}
	}
	if b, err := os.ReadFile("/etc/timezone"); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(b)))
	}
	for _, c := range candidates {
		if c == "" || strings.HasPrefix(c, "/") {
			continue
		}
		if loc, err := time.LoadLocation(c); err == nil {
			return loc
		}
	}
	return time.Local
}
