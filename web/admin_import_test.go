package web_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web/webtest"
)

// upload posts file to /admin/import as a browser's form would.
func upload(t *testing.T, c *webtest.Client, file string, skipBad bool) *webtest.Response {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	must(t, w.WriteField("_csrf", c.CSRF))
	if skipBad {
		must(t, w.WriteField("skip_bad", "1"))
	}
	fw, err := w.CreateFormFile("file", "history.csv")
	must(t, err)
	_, err = fw.Write([]byte(file))
	must(t, err)
	must(t, w.Close())
	req := httptest.NewRequest(http.MethodPost, "/admin/import", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return c.Do(req)
}

// TestAdminImportPage: the upload lists each rejected line with its reason
// in the admin's language and writes nothing; ticked, it imports the good
// row, a past booking that the week's report then counts.
func TestAdminImportPage(t *testing.T) {
	t.Parallel()
	file := "email,node,gpus,start,end,note\n" +
		"alice@example.org,n1,1,2026-11-30 10:00,2026-11-30 12:00,from the sheet\n" +
		"bob@example.org,n1,0,2026-11-30 11:00,2026-11-30 13:00,clash\n" +
		"nobody@example.org,n1,0,2026-12-01 10:00,2026-12-01 11:00,\n"
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env, root, alice, _, _ := reportEnv(t, d)
			if res := root.Get("/admin/import"); res.Code != http.StatusOK || res.Doc.Find(`[data-testid="import-form"]`).Length() != 1 {
				t.Fatalf("import page: %d", res.Code)
			}
			if res := upload(t, alice, file, true); res.Code != http.StatusForbidden {
				t.Errorf("a user imported: %d", res.Code)
			}
			count := func() (n int64) {
				must(t, env.DB.Gorm.Table("bookings").Count(&n).Error)
				return n
			}
			for lang, want := range map[string][]string{
				"en":    {"overlaps an existing booking", "no user has the email nobody@example.org"},
				"zh-CN": {"与已有预订重叠", "没有邮箱为 nobody@example.org 的用户"},
			} {
				root.Header.Set("Accept-Language", lang)
				res := upload(t, root, file, false)
				if res.Code != http.StatusUnprocessableEntity || res.Doc.Find(`[data-testid="import-nothing"]`).Length() != 1 {
					t.Fatalf("%s: %d %s", lang, res.Code, res.Body.String())
				}
				for i, line := range []string{"3", "4"} {
					if got := res.Doc.Find(`[data-testid="import-rejects"] tr[data-line="` + line + `"]`).Text(); !strings.Contains(got, want[i]) {
						t.Errorf("%s: line %s: %q, want %q", lang, line, got, want[i])
					}
				}
				if n := count(); n != 1 {
					t.Errorf("%s: all or nothing wrote %d bookings", lang, n-1)
				}
			}
			root.Header.Set("Accept-Language", "en")
			res := upload(t, root, file, true)
			if res.Code != http.StatusOK || !strings.Contains(res.Doc.Find(`[data-testid="import-done"]`).Text(), "Imported 1 bookings of 3 rows; 2 rejected") {
				t.Fatalf("skip bad: %d %s", res.Code, res.Doc.Find(`[data-testid="import-result"]`).Text())
			}
			if n := count(); n != 2 {
				t.Errorf("%d bookings, want 2", n)
			}
			if got := figureValue(alice.Get("/usage?week=2026-W49"), "GPU-hours booked"); got != "4.0" {
				t.Errorf("the imported past booking is not in the report: booked %q", got)
			}
		})
	}
}
