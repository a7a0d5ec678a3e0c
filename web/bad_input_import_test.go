package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// importNow is the clock of the import cases: the date bounds count from it.
var importNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// badImports are files /admin/import must refuse, all or nothing, naming
// line 2 with a reason in the admin's words: PostgreSQL answered the NUL
// note with a 500 (SQLSTATE 22021) and SQLite stored it; escape
// sequences reached pages and the calendar feed; an end 1 ns after the
// start broke the database's CHECK (a 500 on both); year 0001 and an end
// in 9999 were stored (issue 36).
var badImports = []struct {
	name, row, reason string
}{
	{"NUL note", "alice@example.org,n1,0,2026-03-01 10:00,2026-03-01 11:00,a\x00b", "control characters"},
	{"escape note", "alice@example.org,n1,0,2026-03-01 10:00,2026-03-01 11:00,\x1b[2J\x1b]0;pwned\a", "control characters"},
	{"BEL note", "alice@example.org,n1,0,2026-03-01 10:00,2026-03-01 11:00,ding\a", "control characters"},
	{"NEL note", "alice@example.org,n1,0,2026-03-01 10:00,2026-03-01 11:00,a\u0085b", "control characters"},
	{"invalid UTF-8 note", "alice@example.org,n1,0,2026-03-01 10:00,2026-03-01 11:00,a\xff\xfeb", "not valid UTF-8"},
	{"end 1 ns after start", "alice@example.org,n1,0,2026-03-01T10:00:00Z,2026-03-01T10:00:00.000000001Z,", "the end is not after the start"},
	{"year 0001", "alice@example.org,n1,0,0001-01-01T00:00:00Z,0001-01-01T01:00:00Z,", "at most 10 years ago"},
	{"ends 9999-12-31", "alice@example.org,n1,0,2026-03-01 10:00,9999-12-31 23:59,", "at most 2 years ahead"},
	{"escape in the email", "al\x1b[31mice@example.org,n1,0,2026-03-01 10:00,2026-03-01 11:00,", `al\x1b[31mice@example.org`},
	{"NUL node", "alice@example.org,n\x001,0,2026-03-01 10:00,2026-03-01 11:00,", "no node is named"},
	{"invalid UTF-8 times", "alice@example.org,n1,0,2026-03-01 10:00\xff,2026-03-01 11:00,", "is not a time"},
}

// TestBadImportInput uploads each bad file on both databases: never a
// 5xx, a 422 that names line 2 and why, no booking stored and no control
// character in the page. Then the files that are fine but were misread:
// CR-only line ends (once "0 of 0 rows", a success) and a BOM before the
// header (once "not an email").
func TestBadImportInput(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := importEnv(t, d)
			root := env.Client()
			root.SignIn("root@example.org", "Root")
			count := func() (n int64) {
				must(t, env.DB.Gorm.Table("bookings").Count(&n).Error)
				return n
			}
			for _, tc := range badImports {
				res := upload(t, root, "email,node,gpus,start,end,note\n"+tc.row+"\n", false)
				if res.Code != http.StatusUnprocessableEntity || res.Doc == nil {
					t.Errorf("%s: %d, want 422: %.300s", tc.name, res.Code, res.Body.String())
					continue
				}
				if got := res.Doc.Find(`[data-testid="import-rejects"] tr[data-line="2"]`).Text(); !strings.Contains(got, tc.reason) {
					t.Errorf("%s: line 2 says %q, want %q", tc.name, got, tc.reason)
				}
				if strings.ContainsAny(res.Body.String(), "\x00\x1b\a\u0085") {
					t.Errorf("%s: the page carries a control character", tc.name)
				}
			}
			if n := count(); n != 0 {
				t.Errorf("%d bookings stored from refused files", n)
			}
			root.Header.Set("Accept-Language", "zh-CN")
			res := upload(t, root, "email,node,gpus,start,end,note\n"+badImports[0].row+"\n", false)
			if got := res.Doc.Find(`[data-testid="import-rejects"] tr[data-line="2"]`).Text(); !strings.Contains(got, "备注包含控制字符") {
				t.Errorf("zh-CN: line 2 says %q", got)
			}
			root.Header.Set("Accept-Language", "en")
			for name, file := range map[string]string{"header only": "email,node,gpus,start,end,note\n", "empty": "",
				"CR-only header": "email,node,gpus,start,end,note\r"} {
				if res := upload(t, root, file, true); res.Code != http.StatusUnprocessableEntity || !strings.Contains(res.Body.String(), "no rows to import") {
					t.Errorf("%s: %d, want 422 'no rows to import'", name, res.Code)
				}
			}
			for _, tc := range []struct{ name, file string }{
				{"CR-only line ends", "email,node,gpus,start,end,note\ralice@example.org,n1,0,2026-03-01 10:00,2026-03-01 11:00,a\rbob@example.org,n1,1,2026-03-01 10:00,2026-03-01 11:00,b\r"},
				{"BOM before the header", "\uFEFFemail,node,gpus,start,end,note\r\nalice@example.org,n1,0,2026-03-02 10:00,2026-03-02 11:00,x\r\nbob@example.org,n1,1,2026-03-02 10:00,2026-03-02 11:00,y\r\n"},
			} {
				res := upload(t, root, tc.file, false)
				if got := res.Doc.Find(`[data-testid="import-done"]`).Text(); res.Code != http.StatusOK || !strings.Contains(got, "Imported 2 bookings of 2 rows") {
					t.Errorf("%s: %d %q, want 2 of 2 imported", tc.name, res.Code, res.Doc.Find(`[data-testid="import-result"]`).Text())
				}
			}
			if n := count(); n != 4 {
				t.Errorf("%d bookings, want 4", n)
			}
		})
	}
}

// importEnv is a portal at importNow with root (an admin), alice, bob
// and node n1 (GPUs 0, 1).
func importEnv(t *testing.T, d string) *webtest.Env {
	env := webtest.New(t, d, func(c *web.Config) { c.Now = func() time.Time { return importNow } })
	env.AddUser("root@example.org", "Root", true)
	env.AddUser("alice@example.org", "Alice", false)
	env.AddUser("bob@example.org", "Bob", false)
	gpus, err := models.NewNodeGPUs("n1", 2, "A100", 81920)
	must(t, err)
	must(t, env.DB.CreateNode(context.Background(), &models.Node{Name: "n1"}, gpus, models.CLIActor))
	return env
}
