package main

import (
	"strings"
	"testing"
)

// TestUserSetUnix: "user set" gives a user a Unix login with extra names,
// shown by "user list"; a name another user owns is refused with one
// clear line and changes nothing; an invalid name is refused before the
// database is touched; --unix "" goes back to the assumed login.
func TestUserSetUnix(t *testing.T) {
	t.Parallel()
	eachMigrated(t, func(t *testing.T, url string) {
		mustGpubook(t, url, "user", "add", "--email", "zhangsan@lab.edu.cn", "--name", "Zhang San")
		mustGpubook(t, url, "user", "add", "--email", "bob@lab.edu.cn", "--name", "Bob")
		out := mustGpubook(t, url, "user", "set", "--email", "zhangsan@lab.edu.cn", "--unix", "zs2023", "--unix-extra", "zsold, shared1")
		if out != "user 1 <zhangsan@lab.edu.cn>: unix login zs2023 +zsold,shared1\n" {
			t.Errorf("set: %q", out)
		}
		if list := mustGpubook(t, url, "user", "list"); !strings.Contains(list, "zs2023") || !strings.Contains(list, "bob (assumed)") {
			t.Errorf("list:\n%s", list)
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--email", "bob@lab.edu.cn", "--unix", "bob", "--unix-extra", "shared1"}, `user set: The Unix login "shared1" already belongs to another gpubook user.`},
			{[]string{"--email", "bob@lab.edu.cn", "--unix", "zs2023"}, `user set: The Unix login "zs2023" already belongs to another gpubook user.`},
			{[]string{"--email", "bob@lab.edu.cn", "--unix", "bob:x"}, `user set: --unix: "bob:x" is not a valid login name`},
			{[]string{"--email", "bob@lab.edu.cn"}, `user set: --unix is required`},
			{[]string{"--email", "nobody@lab.edu.cn", "--unix", "nobody"}, `user set: `},
			{[]string{"--email", "bob@lab.edu.cn", "--unix", "daemon"}, `user set: --unix: "daemon" is not a valid login name`},
			{[]string{"--email", "bob@lab.edu.cn", "--unix", "bob", "--unix-extra", "Bob2"}, `user set: --unix-extra: "Bob2" is not a valid login name`},
		} {
			out, _, err := gpubook(t, url, append([]string{"user", "set"}, tc.args...)...)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || out != "" {
				t.Errorf("%v: %q, %v; want error %q", tc.args, out, err, tc.want)
			}
		}
		if list := mustGpubook(t, url, "user", "list"); !strings.Contains(list, "bob (assumed)") {
			t.Errorf("a refused change was saved:\n%s", list)
		}
		if out := mustGpubook(t, url, "user", "set", "--email", "zhangsan@lab.edu.cn", "--unix", ""); out != "user 1 <zhangsan@lab.edu.cn>: unix login zhangsan (assumed)\n" {
			t.Errorf("clear: %q", out)
		}
		// Her bookings now reach "zhangsan": nobody else may take it.
		_, _, err := gpubook(t, url, "user", "set", "--email", "bob@lab.edu.cn", "--unix", "zhangsan")
		if want := `user set: The Unix login "zhangsan" is the one gpubook assumes for zhangsan@lab.edu.cn`; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("bob takes her assumed login: %v, want %q", err, want)
		}
	})
}
