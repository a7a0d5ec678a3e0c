package main

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/handlers"
	"github.com/gpubook/gpubook/models"
)

// SSOSettings is the OpenID Connect part of the configuration (env only: it
// is set once per deployment and holds a secret).
type SSOSettings struct {
	handlers.SSOConfig
	SessionIdle, SessionMaxAge time.Duration
}

// resolveSSO reads GPUBOOK_OIDC_* and the session timeouts. Without an
// issuer SSO is off; with one, the client id and secret are required.
func resolveSSO(getenv func(string) string, cfg *Config) error {
	idle, err := durationEnv(getenv, "GPUBOOK_SESSION_IDLE_TIMEOUT", 12*time.Hour)
	if err != nil {
		return err
	}
	maxAge, err := durationEnv(getenv, "GPUBOOK_SESSION_MAX_AGE", 7*24*time.Hour)
	if err != nil {
		return err
	}
	cfg.SSO.SessionIdle, cfg.SSO.SessionMaxAge = idle, maxAge
	if cfg.OIDCIssuer == "" {
		return nil
	}
	if u, err := url.Parse(cfg.OIDCIssuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("GPUBOOK_OIDC_ISSUER: %q is not an http(s) URL", cfg.OIDCIssuer)
	}
	s := &cfg.SSO.SSOConfig
	s.Issuer = cfg.OIDCIssuer
	if s.ClientID = strings.TrimSpace(getenv("GPUBOOK_OIDC_CLIENT_ID")); s.ClientID == "" {
		return fmt.Errorf("GPUBOOK_OIDC_CLIENT_ID: required when GPUBOOK_OIDC_ISSUER is set")
	}
	secret, from, err := secretEnv(getenv, "GPUBOOK_OIDC_CLIENT_SECRET")
	if err != nil {
		return err
	}
	if secret == "" {
		return fmt.Errorf("%s: required when GPUBOOK_OIDC_ISSUER is set", from)
	}
	s.ClientSecret = secret
	s.Scopes = fieldsOr(getenv("GPUBOOK_OIDC_SCOPES"), []string{"openid", "profile", "email", "groups"})
	if !slices.Contains(s.Scopes, "openid") {
		return fmt.Errorf("GPUBOOK_OIDC_SCOPES: must include openid")
	}
	s.GroupsClaim = strings.TrimSpace(getenv("GPUBOOK_OIDC_GROUPS_CLAIM"))
	if s.GroupsClaim == "" {
		s.GroupsClaim = "groups"
	}
	s.UnixClaim = strings.TrimSpace(getenv("GPUBOOK_OIDC_UNIX_CLAIM"))
	s.AdminGroups = fieldsOr(strings.ReplaceAll(getenv("GPUBOOK_OIDC_ADMIN_GROUPS"), ",", " "), nil)
	s.TeamPrefix = strings.TrimSpace(getenv("GPUBOOK_OIDC_TEAM_PREFIX"))
	s.LeadSuffix = "-leads"
	if v, ok := lookup(getenv, "GPUBOOK_OIDC_LEAD_SUFFIX"); ok {
		s.LeadSuffix = strings.TrimSpace(v)
	}
	switch v := models.SSOLinkPolicy(strings.ToLower(strings.TrimSpace(getenv("GPUBOOK_OIDC_LINK_UNVERIFIED")))); v {
	case "", models.LinkUnverifiedNever:
		s.LinkUnverified = models.LinkUnverifiedNever
	case models.LinkUnverifiedAlways:
		s.LinkUnverified = v
	default:
		return fmt.Errorf("GPUBOOK_OIDC_LINK_UNVERIFIED: %q is neither never nor always", v)
	}
	s.RedirectURL = cfg.BaseURL + "/auth/oidc/callback"
	s.PostLogout = cfg.BaseURL + "/"
	return nil
}

func durationEnv(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	raw := strings.TrimSpace(getenv(name))
	if raw == "" {
		return def, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil {
		if h, herr := strconv.Atoi(raw); herr == nil {
			d, err = time.Duration(h)*time.Hour, nil
		}
	}
	if err != nil || d < time.Minute {
		return 0, fmt.Errorf("%s: %q is not a duration of at least 1m (e.g. 12h)", name, raw)
	}
	return d, nil
}

func fieldsOr(s string, def []string) []string {
	if f := strings.Fields(s); len(f) > 0 {
		return f
	}
	return def
}

// lookup distinguishes an empty variable from an unset one only by value:
// getenv cannot tell them apart, so an empty suffix means "no lead suffix"
// only when set to "-" explicitly.
func lookup(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	if v == "-" {
		return "", true
	}
	return v, v != ""
}
