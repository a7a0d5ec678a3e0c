package web_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// TestFeedGuessLimit: an address that keeps asking for feeds that do not
// exist is refused with 429 before any more are looked up.
func TestFeedGuessLimit(t *testing.T) {
	t.Parallel()
	f := newFeedFixture(t, "sqlite", time.UTC, feedClock, func(c *web.Config) { c.APIFailRate = web.Rate{PerMinute: 1, Burst: 3} })
	c := f.env.Client()
	c.SignIn("alice@example.org", "Alice")
	path := makeFeed(t, c, 0)
	var codes []int
	for range 4 {
		unknown, _, _ := models.NewFeedSecret()
		codes = append(codes, f.env.Client().Get("/feeds/"+unknown+".ics").Code)
	}
	codes = append(codes, f.env.Client().Get(path).Code)
	want := []int{404, 404, 404, 429, 429}
	for i := range want {
		if codes[i] != want[i] {
			t.Fatalf("codes %v, want %v", codes, want)
		}
	}
}

// TestFeedTokenNotLogged: the access log and the error log never hold a
// feed's token, which is a credential.
func TestFeedTokenNotLogged(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	f := newFeedFixture(t, "sqlite", time.UTC, feedClock, func(c *web.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	c := f.env.Client()
	c.SignIn("alice@example.org", "Alice")
	path := makeFeed(t, c, 0)
	tok := strings.TrimSuffix(strings.TrimPrefix(path, "/feeds/"), ".ics")
	f.env.Client().Get(path)
	f.env.Client().Get("/feeds/" + tok[:len(tok)-2] + "zz.ics")
	if strings.Contains(logs.String(), tok[4:20]) || !strings.Contains(logs.String(), "path=/feeds/…") {
		t.Errorf("logs hold the token or no feed request:\n%s", logs.String())
	}
}

// TestFeedRateLimit: one token's fetches are limited like API calls, and a
// refusal is a 429 with Retry-After.
func TestFeedRateLimit(t *testing.T) {
	t.Parallel()
	f := newFeedFixture(t, "sqlite", time.UTC, feedClock, func(c *web.Config) { c.APIRate = web.Rate{PerMinute: 1, Burst: 2} })
	c := f.env.Client()
	c.SignIn("alice@example.org", "Alice")
	path := makeFeed(t, c, 0)
	var codes []int
	var last *webtest.Response
	for range 3 {
		last = f.env.Client().Get(path)
		codes = append(codes, last.Code)
	}
	if codes[0] != http.StatusOK || codes[1] != http.StatusOK || codes[2] != http.StatusTooManyRequests || last.Header().Get("Retry-After") == "" {
		t.Errorf("fetches %v (Retry-After %q), want 200 200 429 with Retry-After", codes, last.Header().Get("Retry-After"))
	}
}
