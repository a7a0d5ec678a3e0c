package web_test

import (
	"net/http/httptest"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/gpubook/gpubook/web/webtest"
)

// TestE2ELanguageSwitchWithoutJavaScript clicks the footer's language
// switch in Chromium with scripts off: the form posts, and the visitor is
// back on the same page in the other language.
func TestE2ELanguageSwitchWithoutJavaScript(t *testing.T) {
	t.Parallel() // its own server, fixture and browser context
	ctx := browser(t)
	env := webtest.New(t, "sqlite")
	srv := httptest.NewServer(env.Server.Echo)
	defer srv.Close()
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/login?next=/calendar"),
		chromedp.Click(chromedp.CSS(`[data-testid="lang-zh-CN"]`)),
		chromedp.WaitVisible(chromedp.CSS(`html[lang="zh-CN"] [data-testid="lang-en"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.documentElement.lang, location.pathname + location.search]`))
	if err != nil {
		t.Fatal(err)
	}
	lang, path := got[0], got[1]
	if lang != "zh-CN" || path != "/login?next=%2Fcalendar" {
		t.Errorf("after the switch: lang %q at %q, want zh-CN at the same page", lang, path)
	}
}
