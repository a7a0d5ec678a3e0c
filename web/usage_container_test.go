package web_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestStatusNamesTheContainer: a rootful docker container's process on
// GPU 1 (owner root) reaches the portal with its container id, from the
// agent's sample through the usage minute; the admin's live status names
// the container (short id, full id in the title), in English and Chinese;
// a user's status page shows only the owner.
func TestStatusNamesTheContainer(t *testing.T) {
	t.Parallel()
	const id = "4f2a9c1be0d30123456789abcdef0123456789abcdef0123456789abcdef0123"
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			x := enrolledE2E(t, d)
			x.env.AddUser("bob@example.org", "Bob", false)
			x.procs.Add(t, 300, agenttest.UIDRoot)
			cgroup := "12:devices:/system.slice/docker-" + id + ".scope\n0::/system.slice/docker-" + id + ".scope\n"
			if err := os.WriteFile(filepath.Join(x.procs.Root, "300", "cgroup"), []byte(cgroup), 0o644); err != nil {
				t.Fatal(err)
			}
			x.node.Set(1, agenttest.GPUState{Util: 80, UsedMiB: 4000, Procs: []agenttest.Proc{{PID: 300, MemMiB: 4000}}})
			x.run(70 * time.Second)
			row := `[data-testid="status-gpu-` + itoa64(x.gpuIDs(1)[0]) + `"] [data-testid="used-by"]`
			admin := x.env.Client()
			admin.SignIn("root@example.org", "Root Admin")
			page := admin.Get("/status")
			owner := page.Doc.Find(row + ` [data-testid="owner-container"]`)
			if title, _ := owner.Attr("title"); page.Code != 200 || owner.Text() != "in a container 4f2a9c1be0d3" || title != id {
				t.Errorf("admin's status: %d, owner %q (title %q), want the container", page.Code, owner.Text(), title)
			}
			admin.Header.Set("Accept-Language", "zh-CN")
			if got := admin.Get("/status").Doc.Find(row + ` [data-testid="owner-container"]`).Text(); got != "容器 4f2a9c1be0d3 中的进程" {
				t.Errorf("admin's status in zh-CN: owner %q", got)
			}
			bob := x.env.Client()
			bob.SignIn("bob@example.org", "Bob")
			used := bob.Get("/status").Doc.Find(row)
			if used.Find(`[data-testid="owner-container"]`).Length() != 0 || !strings.Contains(used.Text(), "root") {
				t.Errorf("bob's status: used by %q; want the owner without the container", used.Text())
			}
		})
	}
}
