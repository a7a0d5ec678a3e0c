package main

import (
	"strings"
	"testing"
)

// TestUserDisableEnableRename: "user disable" offboards a person (their
// token revoked, said in one line), refuses a second time, "user enable"
// brings them back, and "user rename" changes the address, refusing one
// another user holds.
func TestUserDisableEnableRename(t *testing.T) {
	t.Parallel()
	eachMigrated(t, func(t *testing.T, url string) {
		mustGpubook(t, url, "user", "add", "--email", "zhangsan@lab.edu.cn", "--name", "Zhang San")
		mustGpubook(t, url, "user", "add", "--email", "bob@lab.edu.cn", "--name", "Bob")
		mustGpubook(t, url, "token", "create", "--email", "zhangsan@lab.edu.cn")
		out := mustGpubook(t, url, "user", "disable", "--email", "zhangsan@lab.edu.cn")
		if want := "user 1 <zhangsan@lab.edu.cn> deactivated: 0 bookings cancelled, 0 ended, 1 tokens and 0 feeds revoked\n"; out != want {
			t.Errorf("disable: %q, want %q", out, want)
		}
		if list := mustGpubook(t, url, "user", "list"); !strings.Contains(list, "Zhang San (deactivated)") || strings.Contains(list, "Bob (deactivated)") {
			t.Errorf("list after disable:\n%s", list)
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"disable", "--email", "zhangsan@lab.edu.cn"}, "user disable: This account is already deactivated."},
			{[]string{"disable", "--email", "nobody@lab.edu.cn"}, "user disable: "},
			{[]string{"enable", "--email", "bob@lab.edu.cn"}, "user enable: This account is active."},
			{[]string{"rename", "--email", "bob@lab.edu.cn", "--to", "zhangsan@lab.edu.cn"}, "user rename: "},
			{[]string{"rename", "--email", "bob@lab.edu.cn", "--to", "bob"}, "user rename: "},
		} {
			out, _, err := gpubook(t, url, append([]string{"user"}, tc.args...)...)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || out != "" {
				t.Errorf("%v: %q, %v; want error %q", tc.args, out, err, tc.want)
			}
		}
		if out := mustGpubook(t, url, "user", "enable", "--email", "zhangsan@lab.edu.cn"); out != "user 1 <zhangsan@lab.edu.cn> reactivated\n" {
			t.Errorf("enable: %q", out)
		}
		if out := mustGpubook(t, url, "user", "rename", "--email", "bob@lab.edu.cn", "--to", "Bob.New@Lab.edu.cn"); out != "user 2: bob@lab.edu.cn is now bob.new@lab.edu.cn\n" {
			t.Errorf("rename: %q", out)
		}
		if list := mustGpubook(t, url, "user", "list"); !strings.Contains(list, "bob.new@lab.edu.cn") || strings.Contains(list, "bob@lab.edu.cn") {
			t.Errorf("list after rename:\n%s", list)
		}
	})
}
