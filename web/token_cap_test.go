package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

func TestTokenCap(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d)
			c := env.Client()
			c.SignIn("ann@example.org", "Ann")
			u, _ := env.DB.UserByEmail(t.Context(), "ann@example.org")
			var first int64
			for i := range models.MaxActiveTokens {
				tok, _, err := env.DB.CreateToken(t.Context(), u.ID, "t", time.Now(), models.CLIActor)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					first = tok.ID
				}
			}
			c.Get("/profile")
			res := c.Post("/profile/tokens", url.Values{"name": {"one too many"}})
			if res.Code != http.StatusUnprocessableEntity || !strings.Contains(res.Body.String(), "You already have 20 active tokens") {
				t.Errorf("token over the cap: %d %q", res.Code, res.Doc.Find(".field-error").Text())
			}
			zh := env.Client()
			zh.Header.Set("Accept-Language", "zh-CN")
			zh.SignIn("ann@example.org", "Ann")
			zh.Get("/profile")
			if res := zh.Post("/profile/tokens", url.Values{"name": {"x"}}); res.Code != http.StatusUnprocessableEntity || !strings.Contains(res.Body.String(), "您已有 20 个有效令牌") {
				t.Errorf("token over the cap in Chinese: %d %q", res.Code, res.Doc.Find(".field-error").Text())
			}
			if err := env.DB.RevokeToken(t.Context(), first, time.Now(), models.CLIActor); err != nil {
				t.Fatal(err)
			}
			if res := c.Post("/profile/tokens", url.Values{"name": {"after a revoke"}}); res.Code != http.StatusCreated {
				t.Errorf("token after revoking one: %d", res.Code)
			}
			toks, _ := env.DB.Tokens(t.Context(), u.ID)
			if len(toks) != models.MaxActiveTokens+1 {
				t.Errorf("tokens stored = %d, want %d (the cap, plus the revoked one)", len(toks), models.MaxActiveTokens+1)
			}
		})
	}
}

func TestTokenCreationRateLimit(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, "sqlite", func(c *web.Config) { c.SignInRate = web.Rate{PerMinute: 1, Burst: 2} })
	c := env.Client()
	c.SignIn("ann@example.org", "Ann")
	c.Get("/profile")
	var codes []int
	for range 3 {
		codes = append(codes, c.Post("/profile/tokens", url.Values{"name": {"x"}}).Code)
	}
	if codes[0] != http.StatusCreated || codes[2] != http.StatusTooManyRequests {
		t.Errorf("token creations: %v, want 201 first and the third refused", codes)
	}
}
