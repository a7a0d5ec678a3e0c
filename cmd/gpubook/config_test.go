package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestParseConfigDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig(envOf(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DatabaseURL != "sqlite:./gpubook.db" || cfg.Dialect != "sqlite" {
		t.Errorf("database = %q (%s), want sqlite:./gpubook.db", cfg.DatabaseURL, cfg.Dialect)
	}
	if cfg.Listen != "127.0.0.1:8080" || cfg.BaseURL != "http://127.0.0.1:8080" {
		t.Errorf("listen, base = %q, %q", cfg.Listen, cfg.BaseURL)
	}
	// The machine's zone, under its IANA name when the machine says it.
	if now := time.Now(); cfg.Location == nil || now.In(cfg.Location).Format("-0700 MST") != now.In(time.Local).Format("-0700 MST") {
		t.Errorf("location = %v, want the machine's zone", cfg.Location)
	}
	if cfg.LogLevel != slog.LevelInfo || cfg.LogFormat != "text" {
		t.Errorf("log = %v %q", cfg.LogLevel, cfg.LogFormat)
	}
	if !cfg.DevLogin || cfg.OIDCIssuer != "" || cfg.SlotMinutes != 30 {
		t.Errorf("dev login %v, issuer %q, slot %d; want on, none, 30", cfg.DevLogin, cfg.OIDCIssuer, cfg.SlotMinutes)
	}
	if cfg.Reports != models.DefaultReportRules {
		t.Errorf("reports = %+v, want the defaults %+v", cfg.Reports, models.DefaultReportRules)
	}
	if cfg.DatabaseMaxConns != 25 {
		t.Errorf("database max conns = %d, want 25", cfg.DatabaseMaxConns)
	}
	// Five weeks of minutes, three years of hourly sums (docs/scaling.md).
	if cfg.Agent.Retention != 35*24*time.Hour || cfg.Agent.RollupRetention != 1095*24*time.Hour {
		t.Errorf("retention = %v, rollups %v; want 35 days, 1095 days", cfg.Agent.Retention, cfg.Agent.RollupRetention)
	}
}

func TestParseConfigMaxConns(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig(envOf(map[string]string{"GPUBOOK_DATABASE_MAX_CONNS": " 12 "}), nil)
	if err != nil || cfg.DatabaseMaxConns != 12 {
		t.Errorf("max conns = %d, %v; want 12", cfg.DatabaseMaxConns, err)
	}
}

func TestParseConfigValues(t *testing.T) {
	t.Parallel()
	full := map[string]string{
		"GPUBOOK_DATABASE_URL": "postgres://gpubook@db:5432/gpubook", "GPUBOOK_LISTEN": ":9000",
		"GPUBOOK_BASE_URL": "https://gpu.example.org/", "GPUBOOK_TIMEZONE": "Asia/Shanghai",
		"GPUBOOK_LOG_LEVEL": "DEBUG", "GPUBOOK_LOG_FORMAT": "json", "GPUBOOK_SLOT_MINUTES": "15",
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want Config
	}{
		{"env", full, nil, Config{DatabaseURL: "postgres://gpubook@db:5432/gpubook", Dialect: "postgres", Listen: ":9000",
			BaseURL: "https://gpu.example.org", LogLevel: slog.LevelDebug, LogFormat: "json", SlotMinutes: 15}},
		{"flags win over env", full, []string{"--database-url", "sqlite:/tmp/x.db", "--listen", "127.0.0.1:0", "--base-url", "http://localhost:1234", "--log-level", "warn", "--timezone", "UTC"},
			Config{DatabaseURL: "sqlite:/tmp/x.db", Dialect: "sqlite", Listen: "127.0.0.1:0", BaseURL: "http://localhost:1234", LogLevel: slog.LevelWarn, LogFormat: "json", SlotMinutes: 15, DevLogin: true}},
		{"all interfaces: base URL names localhost", map[string]string{"GPUBOOK_LISTEN": "0.0.0.0:8080"}, nil,
			Config{DatabaseURL: "sqlite:./gpubook.db", Dialect: "sqlite", Listen: "0.0.0.0:8080", BaseURL: "http://localhost:8080", LogFormat: "text", SlotMinutes: 30}},
		{"dev login forced on", map[string]string{"GPUBOOK_LISTEN": ":8080", "GPUBOOK_DEV_LOGIN": "1"}, nil,
			Config{DatabaseURL: "sqlite:./gpubook.db", Dialect: "sqlite", Listen: ":8080", BaseURL: "http://localhost:8080", LogFormat: "text", SlotMinutes: 30, DevLogin: true}},
		{"dev login forced off", map[string]string{"GPUBOOK_DEV_LOGIN": "0"}, nil,
			Config{DatabaseURL: "sqlite:./gpubook.db", Dialect: "sqlite", Listen: "127.0.0.1:8080", BaseURL: "http://127.0.0.1:8080", LogFormat: "text", SlotMinutes: 30}},
		{"OIDC issuer turns dev login off", map[string]string{"GPUBOOK_OIDC_ISSUER": "https://idp.example.org", "GPUBOOK_OIDC_CLIENT_ID": "c",
			"GPUBOOK_OIDC_CLIENT_SECRET": "s", "GPUBOOK_LISTEN": "[::1]:8080"}, nil,
			Config{DatabaseURL: "sqlite:./gpubook.db", Dialect: "sqlite", Listen: "[::1]:8080", BaseURL: "http://[::1]:8080", LogFormat: "text", SlotMinutes: 30, OIDCIssuer: "https://idp.example.org"}},
		{"localhost is loopback", map[string]string{"GPUBOOK_LISTEN": "localhost:8080"}, nil,
			Config{DatabaseURL: "sqlite:./gpubook.db", Dialect: "sqlite", Listen: "localhost:8080", BaseURL: "http://localhost:8080", LogFormat: "text", SlotMinutes: 30, DevLogin: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConfig(envOf(tt.env), tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if got.Location == nil {
				t.Fatal("no location")
			}
			got.Location = nil
			got.SSO = SSOSettings{}            // checked in TestSSOConfig
			got.Agent = AgentSettings{}        // checked in TestAgentConfig
			got.Reports = models.ReportRules{} // checked in TestParseConfigDefaults and TestReportRulesFromEnv
			got.DatabaseMaxConns = 0           // checked in TestParseConfigDefaults and TestParseConfigMaxConns
			got.Import = ImportSettings{}      // checked in TestImportConfig
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseConfigTimezone(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig(envOf(map[string]string{"GPUBOOK_TIMEZONE": "Europe/Berlin"}), nil)
	if err != nil || cfg.Location.String() != "Europe/Berlin" {
		t.Fatalf("location = %v, %v; want Europe/Berlin", cfg.Location, err)
	}
}

// Every bad value stops start-up with one line that names the variable (or
// the flag, when the value came from one).
func TestParseConfigBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"GPUBOOK_TIMEZONE": "Mars/Olympus"}, nil, `GPUBOOK_TIMEZONE: unknown time zone "Mars/Olympus"`},
		{nil, []string{"--timezone", "Mars/Olympus"}, `--timezone: unknown time zone "Mars/Olympus"`},
		{map[string]string{"GPUBOOK_LISTEN": "8080"}, nil, `GPUBOOK_LISTEN: "8080" is not host:port`},
		{map[string]string{"GPUBOOK_LISTEN": "127.0.0.1:http2"}, nil, `GPUBOOK_LISTEN: "127.0.0.1:http2" has no valid port`},
		{map[string]string{"GPUBOOK_LISTEN": "127.0.0.1:70000"}, nil, `GPUBOOK_LISTEN: "127.0.0.1:70000" has no valid port`},
		{map[string]string{"GPUBOOK_DATABASE_URL": "mysql://root@db/gpubook"}, nil, "GPUBOOK_DATABASE_URL: must start with postgres://"},
		{map[string]string{"GPUBOOK_DATABASE_URL": "sqlite::memory:"}, nil, "GPUBOOK_DATABASE_URL: sqlite URL needs a file path"},
		{nil, []string{"--database-url", "nope"}, "--database-url: must start with"},
		{map[string]string{"GPUBOOK_LOG_LEVEL": "loud"}, nil, `GPUBOOK_LOG_LEVEL: "loud" is not one of debug, info, warn, error`},
		{map[string]string{"GPUBOOK_LOG_FORMAT": "xml"}, nil, `GPUBOOK_LOG_FORMAT: "xml" is not text or json`},
		{map[string]string{"GPUBOOK_BASE_URL": "gpu.example.org"}, nil, `GPUBOOK_BASE_URL: "gpu.example.org" must start with http:// or https://`},
		{map[string]string{"GPUBOOK_BASE_URL": "https://gpu.example.org/?x=1"}, nil, "GPUBOOK_BASE_URL: \"https://gpu.example.org/?x=1\" must not have a query"},
		{map[string]string{"GPUBOOK_BASE_URL": "https://"}, nil, "GPUBOOK_BASE_URL: \"https://\" has no host"},
		{map[string]string{"GPUBOOK_DEV_LOGIN": "maybe"}, nil, `GPUBOOK_DEV_LOGIN: "maybe" is not 1 or 0`},
		{map[string]string{"GPUBOOK_SLOT_MINUTES": "7"}, nil, `GPUBOOK_SLOT_MINUTES: "7" is not one of 5, 10, 15, 20, 30, 60, 120`},
		{map[string]string{"GPUBOOK_SLOT_MINUTES": "half"}, nil, `GPUBOOK_SLOT_MINUTES: "half" is not one of`},
		{map[string]string{"GPUBOOK_DATABASE_URL": "sqlite:a.db", "GPUBOOK_DATABASE_URL_FILE": "/run/secrets/db"}, nil,
			"GPUBOOK_DATABASE_URL and GPUBOOK_DATABASE_URL_FILE are both set; set only one"},
		{map[string]string{"GPUBOOK_DATABASE_URL_FILE": "/nonexistent/secret"}, nil, "GPUBOOK_DATABASE_URL_FILE: open /nonexistent/secret"},
		{map[string]string{"GPUBOOK_DATABASE_MAX_CONNS": "0"}, nil, `GPUBOOK_DATABASE_MAX_CONNS: "0" is not a whole number from 1 to 1000`},
		{map[string]string{"GPUBOOK_DATABASE_MAX_CONNS": "lots"}, nil, `GPUBOOK_DATABASE_MAX_CONNS: "lots" is not a whole number`},
		{map[string]string{"GPUBOOK_REPORT_SCHEDULE": "monday"}, nil, `GPUBOOK_REPORT_SCHEDULE: "monday" is not like`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := parseConfig(envOf(tt.env), tt.args)
			if err == nil {
				t.Fatal("no error")
			}
			if got := err.Error(); !strings.HasPrefix(got, tt.want) || strings.Contains(got, "\n") {
				t.Errorf("error = %q, want one line starting %q", got, tt.want)
			}
		})
	}
}

func TestSecretFromFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "db_url")
	if err := os.WriteFile(path, []byte("postgres://gpubook:s3cret@db/gpubook\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig(envOf(map[string]string{"GPUBOOK_DATABASE_URL_FILE": path}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DatabaseURL != "postgres://gpubook:s3cret@db/gpubook" || cfg.Dialect != "postgres" {
		t.Errorf("database = %q (%s)", cfg.DatabaseURL, cfg.Dialect)
	}
	// A bad secret's error never shows the secret itself… but names where it came from.
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, []byte("mysql://root:pw@db\n"), 0o600)
	_, err = parseConfig(envOf(map[string]string{"GPUBOOK_DATABASE_URL_FILE": bad}), nil)
	if err == nil || !strings.HasPrefix(err.Error(), "GPUBOOK_DATABASE_URL_FILE: ") || strings.Contains(err.Error(), ":pw@") {
		t.Errorf("error = %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o600)
	if _, _, err := secretEnv(envOf(map[string]string{"GPUBOOK_SMTP_PASSWORD_FILE": empty}), "GPUBOOK_SMTP_PASSWORD"); err == nil {
		t.Error("empty secret file accepted")
	}
}

func TestSSOConfig(t *testing.T) {
	t.Parallel()
	base := map[string]string{"GPUBOOK_OIDC_ISSUER": "https://idp.example.org/realms/lab", "GPUBOOK_OIDC_CLIENT_ID": "gpubook",
		"GPUBOOK_OIDC_CLIENT_SECRET": "s3cret", "GPUBOOK_BASE_URL": "https://gpu.example.org"}
	env := func(extra map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := extra[k]; ok {
				return v
			}
			return base[k]
		}
	}
	cfg, err := parseConfig(env(map[string]string{"GPUBOOK_OIDC_ADMIN_GROUPS": "gpu-admins, lab-admins", "GPUBOOK_OIDC_TEAM_PREFIX": "gpu-team-"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.SSO
	if s.ClientID != "gpubook" || s.ClientSecret != "s3cret" || s.RedirectURL != "https://gpu.example.org/auth/oidc/callback" ||
		len(s.Scopes) != 4 || s.GroupsClaim != "groups" || len(s.AdminGroups) != 2 || s.AdminGroups[1] != "lab-admins" ||
		s.TeamPrefix != "gpu-team-" || s.LeadSuffix != "-leads" || cfg.DevLogin || s.SessionIdle != 12*time.Hour ||
		s.LinkUnverified != models.LinkUnverifiedNever {
		t.Errorf("sso = %+v (dev login %v)", s, cfg.DevLogin)
	}
	if s.UnixClaim != "" {
		t.Errorf("unix claim by default = %q, want none", s.UnixClaim)
	}
	if cfg, err := parseConfig(env(map[string]string{"GPUBOOK_OIDC_UNIX_CLAIM": " uid "}), nil); err != nil || cfg.SSO.UnixClaim != "uid" {
		t.Errorf("unix claim: %q %v", cfg.SSO.UnixClaim, err)
	}
	if cfg, err := parseConfig(env(map[string]string{"GPUBOOK_OIDC_LINK_UNVERIFIED": "Always"}), nil); err != nil || cfg.SSO.LinkUnverified != models.LinkUnverifiedAlways {
		t.Errorf("link unverified always: %v %v", cfg.SSO.LinkUnverified, err)
	}
	bad := []struct{ name, key, value, want string }{
		{"no client id", "GPUBOOK_OIDC_CLIENT_ID", "", "GPUBOOK_OIDC_CLIENT_ID"},
		{"no secret", "GPUBOOK_OIDC_CLIENT_SECRET", "", "GPUBOOK_OIDC_CLIENT_SECRET"},
		{"bad issuer", "GPUBOOK_OIDC_ISSUER", "idp.example.org", "GPUBOOK_OIDC_ISSUER"},
		{"scopes without openid", "GPUBOOK_OIDC_SCOPES", "profile email", "GPUBOOK_OIDC_SCOPES"},
		{"bad idle", "GPUBOOK_SESSION_IDLE_TIMEOUT", "soon", "GPUBOOK_SESSION_IDLE_TIMEOUT"},
		{"unknown link policy", "GPUBOOK_OIDC_LINK_UNVERIFIED", "admin", "GPUBOOK_OIDC_LINK_UNVERIFIED"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig(env(map[string]string{tt.key: tt.value}), nil)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("err = %v, want one naming %s", err, tt.want)
			}
		})
	}
}

func TestAgentConfig(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig(envOf(map[string]string{"GPUBOOK_IDLE_AUTO_RELEASE": "1", "GPUBOOK_IDLE_GRACE": "45m", "GPUBOOK_USAGE_RETENTION_DAYS": "90",
		"GPUBOOK_USAGE_ROLLUP_RETENTION_DAYS": "730"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Agent; !a.IdlePolicy.AutoRelease || a.IdlePolicy.Grace != 45*time.Minute || a.IdlePolicy.UtilPct != 5 || a.Retention != 90*24*time.Hour ||
		a.RollupRetention != 730*24*time.Hour {
		t.Errorf("agent settings = %+v", a)
	}
	for _, tt := range []struct{ key, value string }{
		{"GPUBOOK_IDLE_AUTO_RELEASE", "maybe"}, {"GPUBOOK_IDLE_GRACE", "soon"}, {"GPUBOOK_IDLE_UTIL_PCT", "200"}, {"GPUBOOK_USAGE_RETENTION_DAYS", "-3"},
		{"GPUBOOK_USAGE_ROLLUP_RETENTION_DAYS", "3y"},
	} {
		t.Run(tt.key, func(t *testing.T) {
			_, err := parseConfig(envOf(map[string]string{tt.key: tt.value}), nil)
			if err == nil || !strings.HasPrefix(err.Error(), tt.key) {
				t.Errorf("err = %v, want one naming %s", err, tt.key)
			}
		})
	}
}

func TestMachineZone(t *testing.T) {
	t.Parallel()
	if got := machineZone(envOf(map[string]string{"TZ": "Asia/Shanghai"})).String(); got != "Asia/Shanghai" {
		t.Errorf("TZ=Asia/Shanghai: got %q", got)
	}
	if got := machineZone(envOf(map[string]string{"TZ": ":Europe/Berlin"})).String(); got != "Europe/Berlin" {
		t.Errorf("TZ=:Europe/Berlin: got %q", got)
	}
	if got := machineZone(envOf(map[string]string{"TZ": "Not/AZone"})); got == nil {
		t.Error("no zone for a bad TZ")
	}
}
