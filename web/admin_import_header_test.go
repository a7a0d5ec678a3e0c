package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models/store"
)

// A spreadsheet's export, its header row in the sheet's words behind a
// byte order mark, imports on the admin's page too; a header naming an
// unknown column is refused in the admin's language, naming its line.
func TestAdminImportHeader(t *testing.T) {
	t.Parallel()
	env, root, _, _, _ := reportEnv(t, store.SQLite)
	res := upload(t, root, "\uFEFFUser,Node,GPU indexes,Start time,End time,Note\r\nalice@example.org,n1,1,2026-12-02 02:00,2026-12-02 03:00,from the sheet\r\n", false)
	if res.Code != http.StatusOK || !strings.Contains(res.Doc.Find(`[data-testid="import-done"]`).Text(), "Imported 1 bookings of 1 rows; 0 rejected") {
		t.Fatalf("header import: %d %s", res.Code, res.Doc.Find("main").Text())
	}
	var n int64
	must(t, env.DB.Gorm.Table("bookings").Where("note = ?", "from the sheet").Count(&n).Error)
	if n != 1 {
		t.Errorf("imported %d bookings, want 1", n)
	}
	root.Header.Set("Accept-Language", "zh-CN")
	res = upload(t, root, "user,node,gpus,start,end,project\nalice@example.org,n1,1,2026-12-02 04:00,2026-12-02 05:00,x\n", false)
	if got := res.Doc.Find("main").Text(); res.Code != http.StatusUnprocessableEntity || !strings.Contains(got, "第 1 行是表头，但“project”不是任何一列的名称") {
		t.Errorf("unknown column: %d %s", res.Code, got)
	}
}
