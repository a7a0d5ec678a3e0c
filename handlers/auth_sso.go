package handlers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views"
)

// SSOConfig is the OpenID Connect set-up, read and checked in cmd.
type SSOConfig struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	Scopes       []string
	GroupsClaim  string
	// UnixClaim names the ID-token claim that holds the user's login on the
	// GPU nodes (e.g. uid); empty means the IdP does not say.
	UnixClaim   string
	AdminGroups []string
	TeamPrefix  string
	LeadSuffix  string
	// LinkUnverified says whether an unverified email may claim an existing
	// account; empty means never.
	LinkUnverified models.SSOLinkPolicy
	RedirectURL    string // BaseURL + "/auth/oidc/callback"
	PostLogout     string // BaseURL + "/"
	// HTTPClient talks to the IdP; nil means a client with a 10 s timeout.
	HTTPClient *http.Client
}

// SSO signs people in through the organisation's OpenID Connect provider:
// authorization code flow with PKCE (S256), state and nonce.
type SSO struct {
	*Base
	Cfg SSOConfig

	mu       sync.Mutex
	provider *oidc.Provider
	logout   string // the IdP's end_session_endpoint, if it has one
}

// ssoFlow is what the session remembers between the redirect to the IdP and
// the callback; it is used once.
type ssoFlow struct {
	State, Nonce, Verifier, Next string
	Started                      time.Time
}

const (
	sessionSSOFlow   = "sso_flow"
	sessionIDToken   = "id_token"
	ssoFlowMaxAge    = 10 * time.Minute
	idpTimeout       = 10 * time.Second
	callbackFailWhat = "sso"
)

func init() { gob.Register(ssoFlow{}) }

// providerFor discovers the IdP on first use and keeps it; a failure is not
// kept, so an IdP that was down at start-up works once it is back.
func (h *SSO) providerFor(ctx context.Context) (*oidc.Provider, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.provider != nil {
		return h.provider, nil
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, h.client()), idpTimeout)
	defer cancel()
	p, err := oidc.NewProvider(ctx, h.Cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("sso: discovery at %s: %w", h.Cfg.Issuer, err)
	}
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	_ = p.Claims(&extra)
	h.provider, h.logout = p, extra.EndSession
	return p, nil
}

func (h *SSO) client() *http.Client {
	if h.Cfg.HTTPClient != nil {
		return h.Cfg.HTTPClient
	}
	return &http.Client{Timeout: idpTimeout}
}

func (h *SSO) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: h.Cfg.ClientID, ClientSecret: h.Cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: h.Cfg.RedirectURL, Scopes: h.Cfg.Scopes}
}

// ShowLogin shows the sign-in page with the SSO button.
func (h *SSO) ShowLogin(c echo.Context) error {
	return Render(c, http.StatusOK, views.SSOLoginPage(h.NewPage(c), SafeNext(c.QueryParam("next"))))
}

// Start sends the browser to the IdP.
func (h *SSO) Start(c echo.Context) error {
	ctx := c.Request().Context()
	p, err := h.providerFor(ctx)
	if err != nil {
		return h.fail(c, http.StatusBadGateway, "sso.fail.idp_down", err)
	}
	flow := ssoFlow{State: randomString(), Nonce: randomString(), Verifier: oauth2.GenerateVerifier(),
		Next: SafeNext(c.QueryParam("next")), Started: h.Now()}
	h.Sessions.Put(ctx, sessionSSOFlow, flow)
	url := h.oauth(p).AuthCodeURL(flow.State, oauth2.S256ChallengeOption(flow.Verifier), oidc.Nonce(flow.Nonce))
	return c.Redirect(http.StatusFound, url)
}

// Callback finishes the sign-in: checks state, exchanges the code with the
// PKCE verifier, verifies the ID token and its nonce, then creates or
// updates the user and their teams. Every failure ends on a friendly page
// with a "try again" link, a log line and an audit event; none signs anyone in.
func (h *SSO) Callback(c echo.Context) error {
	ctx := c.Request().Context()
	flow, ok := h.Sessions.Pop(ctx, sessionSSOFlow).(ssoFlow)
	if e := c.QueryParam("error"); e != "" {
		reason := "sso.fail.idp_error"
		if e == "access_denied" {
			reason = "sso.fail.cancelled"
		}
		return h.fail(c, http.StatusBadRequest, reason, fmt.Errorf("idp error %q: %s", e, c.QueryParam("error_description")))
	}
	if !ok || c.QueryParam("state") == "" || c.QueryParam("state") != flow.State || h.Now().Sub(flow.Started) > ssoFlowMaxAge {
		return h.fail(c, http.StatusBadRequest, "sso.fail.state", errors.New("state missing, mismatched or expired"))
	}
	id, idToken, status, reason, err := h.exchange(c, flow)
	if err != nil {
		return h.fail(c, status, reason, err)
	}
	rules, err := h.rules(ctx)
	if err != nil {
		return err
	}
	u, err := h.Store.SignInSSO(ctx, id, rules, h.Now(), c.RealIP())
	if err != nil {
		status, reason := ssoRefusal(err)
		if reason == "" {
			return err
		}
		return h.failFor(c, status, reason, err, id.Email)
	}
	auth := &Auth{Base: h.Base}
	if err := auth.SignIn(c, u, "oidc"); err != nil {
		return err
	}
	h.Sessions.Put(ctx, sessionIDToken, idToken)
	return RedirectSeeOther(c, flow.Next)
}

// exchange trades the code for tokens and verifies the ID token.
func (h *SSO) exchange(c echo.Context, flow ssoFlow) (models.SSOIdentity, string, int, string, error) {
	ctx := oidc.ClientContext(c.Request().Context(), h.client())
	p, err := h.providerFor(ctx)
	if err != nil {
		return models.SSOIdentity{}, "", http.StatusBadGateway, "sso.fail.idp_down", err
	}
	tok, err := h.oauth(p).Exchange(ctx, c.QueryParam("code"), oauth2.VerifierOption(flow.Verifier))
	if err != nil {
		return models.SSOIdentity{}, "", http.StatusBadGateway, "sso.fail.exchange", fmt.Errorf("code exchange: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return models.SSOIdentity{}, "", http.StatusBadGateway, "sso.fail.token", errors.New("no id_token in the token response")
	}
	verifier := p.Verifier(&oidc.Config{ClientID: h.Cfg.ClientID, Now: h.Now})
	idt, err := verifier.Verify(ctx, raw)
	if err != nil {
		return models.SSOIdentity{}, "", http.StatusUnauthorized, "sso.fail.token", fmt.Errorf("verify id token: %w", err)
	}
	if idt.Nonce != flow.Nonce {
		return models.SSOIdentity{}, "", http.StatusUnauthorized, "sso.fail.token", errors.New("nonce mismatch")
	}
	id, err := h.identity(idt)
	if err != nil {
		return models.SSOIdentity{}, "", http.StatusBadGateway, "sso.fail.token", err
	}
	return id, raw, 0, "", nil
}

// ssoRefusal turns the domain's refusal of a sign-in into the status and
// the reason the failure page explains; "" for an error that is not a refusal.
func ssoRefusal(err error) (int, string) {
	e := models.AsError(err)
	switch {
	case e.Code == models.EINVALID && e.Fields["email"].Key == "err.sso_email_invalid":
		return http.StatusForbidden, "sso.fail.bad_email"
	case e.Code == models.EINVALID && e.Fields["email"].Key != "":
		return http.StatusForbidden, "sso.fail.no_email"
	case e.Code == models.EINVALID:
		return http.StatusBadGateway, "sso.fail.token"
	case e.Code == models.EFORBIDDEN && e.Msg.Key == "err.account_disabled":
		return http.StatusForbidden, "sso.fail.disabled"
	case e.Code == models.EFORBIDDEN && e.Msg.Key == "err.sso_email_unverified":
		return http.StatusForbidden, "sso.fail.unverified"
	case e.Code == models.ECONFLICT && (e.Msg.Key == "err.unix_name_taken" || e.Msg.Key == "err.unix_name_assumed"):
		return http.StatusConflict, "sso.fail.unix_taken"
	case e.Code == models.ECONFLICT && e.Msg.Key == "err.sso_account_linked":
		return http.StatusConflict, "sso.fail.account_linked"
	case e.Code == models.ECONFLICT:
		return http.StatusConflict, "sso.fail.email_taken"
	}
	return 0, ""
}

// identity reads the claims gpubook uses; the groups claim is configurable.
func (h *SSO) identity(idt *oidc.IDToken) (models.SSOIdentity, error) {
	var std struct {
		Email             string `json:"email"`
		EmailVerified     any    `json:"email_verified"`
		Name              string `json:"name"`
		PreferredUsername string `json:"preferred_username"`
	}
	var all map[string]any
	if err := idt.Claims(&std); err != nil {
		return models.SSOIdentity{}, fmt.Errorf("claims: %w", err)
	}
	if err := idt.Claims(&all); err != nil {
		return models.SSOIdentity{}, fmt.Errorf("claims: %w", err)
	}
	name := std.Name
	if name == "" {
		name = std.PreferredUsername
	}
	// Some IdPs (older Cognito) send the claim as the string "true".
	verified := std.EmailVerified == true || std.EmailVerified == "true"
	id := models.SSOIdentity{Subject: idt.Subject, Email: std.Email, EmailVerified: verified, Name: name,
		Groups: stringList(all[h.Cfg.GroupsClaim])}
	if h.Cfg.UnixClaim != "" {
		id.Unix, _ = all[h.Cfg.UnixClaim].(string)
		if id.Unix != "" && !models.ValidUnixName(id.Unix) {
			// The login is the admin's to fix at the IdP; the person still signs in.
			slog.Warn("sso: unix login claim is not a valid login name, ignored", "claim", h.Cfg.UnixClaim, "value", id.Unix, "sub", idt.Subject)
		}
	}
	return id, nil
}

func (h *SSO) rules(ctx context.Context) (models.GroupRules, error) {
	maps, err := h.Store.GroupMappings(ctx)
	if err != nil {
		return models.GroupRules{}, err
	}
	return models.GroupRules{Mappings: maps, TeamPrefix: h.Cfg.TeamPrefix, LeadSuffix: h.Cfg.LeadSuffix, AdminGroups: h.Cfg.AdminGroups,
		LinkUnverified: h.Cfg.LinkUnverified}, nil
}

// fail ends a sign-in attempt on the friendly failure page.
func (h *SSO) fail(c echo.Context, status int, reason string, cause error) error {
	return h.failFor(c, status, reason, cause, "")
}

// failFor is fail with the email the IdP presented, so that an admin reading
// the audit log sees which account an attempt was after.
func (h *SSO) failFor(c echo.Context, status int, reason string, cause error, email string) error {
	ctx := c.Request().Context()
	slog.WarnContext(ctx, "sso sign-in failed", "reason", reason, "err", cause, "ip", c.RealIP(), "email", email)
	details := map[string]string{"reason": reason}
	if email = models.NormalizeEmail(email); models.ValidEmail(email) {
		details["email"] = email
	}
	js, _ := json.Marshal(details)
	if err := h.Store.RecordAudit(ctx, models.AuditEvent{At: h.Now(), ActorLabel: "anonymous", Action: models.AuditSignInFailed,
		TargetType: callbackFailWhat, Details: string(js), IP: c.RealIP()}); err != nil {
		slog.ErrorContext(ctx, "audit failed sign-in", "err", err)
	}
	return Render(c, status, views.SSOFailurePage(h.NewPage(c), reason))
}

// LogoutURL is where the browser goes after gpubook's session ends: the
// IdP's end_session_endpoint when it advertises one (RP-initiated logout).
func (h *SSO) LogoutURL(ctx context.Context, idToken string) string {
	if _, err := h.providerFor(ctx); err != nil || h.logout == "" {
		return ""
	}
	q := url.Values{"post_logout_redirect_uri": {h.Cfg.PostLogout}, "client_id": {h.Cfg.ClientID}}
	if idToken != "" {
		q.Set("id_token_hint", idToken)
	}
	return h.logout + "?" + q.Encode()
}

func randomString() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// stringList accepts a groups claim as a list or a single string.
func stringList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
