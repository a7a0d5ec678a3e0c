package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/storetest/fairweek"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// TestReportUnmappedAccount: the fixture's Unix account "gus" belongs to
// no gpubook user; the cluster page and its CSV name it with its 1.0
// GPU-hour, in English and Chinese; an admin maps it to eve with the
// row's form, and the closed but not yet frozen week then counts the hour
// as eve's unbooked use (3.0 → 4.0 h) and lists no account any more.
func TestReportUnmappedAccount(t *testing.T) {
	t.Parallel()
	c := fairweek.Weeks[1]
	w := c.Parse()
	now := w.End.Add(50 * time.Hour)
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d, func(cfg *web.Config) { cfg.Location = fairweek.Berlin; cfg.Now = func() time.Time { return now } })
			id := fairweek.Build(t, env.DB, w)
			must(t, env.DB.SetAdmin(context.Background(), id.Fay, true, models.CLIActor))
			fay, eve := env.Client(), env.Client()
			fay.SignIn(fairweek.Email("fay"), "fay")
			eve.SignIn(fairweek.Email("eve"), "eve")
			page := "/admin/usage?week=" + c.Week
			res := fay.Get(page)
			row := res.Doc.Find(`[data-testid="table-unmapped"] tbody tr`)
			if res.Code != http.StatusOK || row.Length() != 1 || strings.TrimSpace(row.Find("td").Eq(0).Text()) != "gus" ||
				strings.TrimSpace(row.Find("td").Eq(1).Text()) != "1.0" || row.Find(`form[data-testid="unix-map-gus"] option`).Length() != 7 {
				t.Fatalf("cluster page: %d, unmapped rows %q", res.Code, row.Text())
			}
			if got := fay.Get(page + "&format=csv&table=unmapped").Body.String(); got != "Unix account,GPU-hours\ngus,1.0\n" {
				t.Errorf("unmapped CSV %q", got)
			}
			fay.Header.Set("Accept-Language", "zh-CN")
			if got := fay.Get(page).Doc.Find(`[data-testid="unmapped"] h2`).Text(); got != "没有 gpubook 用户的 Unix 账户的使用" {
				t.Errorf("heading in Chinese %q", got)
			}
			fay.Header.Del("Accept-Language")
			if res := eve.Post("/admin/usage/unix-map", url.Values{"name": {"gus"}, "user_id": {itoa(id.Eve)}}); res.Code != http.StatusForbidden {
				t.Errorf("eve maps an account: %d, want 403", res.Code)
			}
			if res := fay.Post("/admin/usage/unix-map", url.Values{"name": {"gus"}, "user_id": {""}, "week": {c.Week}}); res.Code != http.StatusUnprocessableEntity {
				t.Errorf("no user chosen: %d, want 422", res.Code)
			}
			res = fay.Post("/admin/usage/unix-map", url.Values{"name": {"gus"}, "user_id": {itoa(id.Eve)}, "week": {c.Week}})
			if res.Code != http.StatusSeeOther || res.Header().Get("Location") != page {
				t.Fatalf("map gus to eve: %d → %q", res.Code, res.Header().Get("Location"))
			}
			res = fay.Get(page)
			if !strings.Contains(res.Body.String(), "The Unix account gus now belongs to eve; 60 stored GPU-minutes were moved to them.") ||
				res.Doc.Find(`[data-testid="unmapped-none"]`).Length() != 1 {
				t.Errorf("after mapping: flash or list wrong: %q", res.Doc.Find(`[data-testid="unmapped"]`).Text())
			}
			x, err := env.DB.UnixIdentity(context.Background(), id.Eve)
			if err != nil || x.Name != "eve" || x.Source != models.UnixSourceAdmin || strings.Join(x.Extra, ",") != "gus" {
				t.Errorf("eve's logins %+v (%v), want eve + gus set by an admin", x, err)
			}
			figs := fairweek.CSVTable(t, eve.Get("/usage?week="+c.Week+"&format=csv&table=figures").Body.String())
			for _, r := range figs.Rows {
				if r[0] == "GPU-hours used without a booking" && r[1] != "4.0" {
					t.Errorf("eve's unbooked after mapping gus: %s, want 4.0", r[1])
				}
			}
		})
	}
}
