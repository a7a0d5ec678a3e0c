package web_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web/webtest"
)

// TestBadAuditFilter sends the audit log's filter NUL, invalid UTF-8 and
// control characters in every field: PostgreSQL answered
// ?target_type=%00 with a 500. Each is a 422 with the field's message.
func TestBadAuditFilter(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d)
			root := env.Client()
			root.SignIn("root@example.org", "Root")
			for _, field := range []string{"target_type", "user", "action", "target_id", "since", "until", "page"} {
				for name, v := range merge(badText, map[string]string{"CR LF": "a\r\nb", "NEL": "a\u0085b", "bidi": "a\u202eb"}) {
					q := url.Values{field: {v}}
					if field == "target_id" {
						q.Set("target_type", "booking")
					}
					res := root.Get("/admin/audit?" + q.Encode())
					if res.Code >= 500 || (name != "bidi" && res.Code != http.StatusUnprocessableEntity) {
						t.Errorf("%s=%s: %d, want 422", field, name, res.Code)
					}
				}
			}
			if res := root.Get("/admin/audit?target_type=booking&user=root@example.org"); res.Code != http.StatusOK {
				t.Errorf("a good filter: %d", res.Code)
			}
		})
	}
}
