package main

import (
	"strings"
	"testing"
)

// TestUserAddLookalikeEmail: the CLI holds addresses to the rule SSO does
// (issue 36): an invisible character or mixed scripts are refused, a
// fullwidth letter is folded to the address it displays as.
func TestUserAddLookalikeEmail(t *testing.T) {
	t.Parallel()
	eachMigrated(t, func(t *testing.T, url string) {
		for _, email := range []string{"adm\u200bin@lab.edu.cn", "adm\u0456n@lab.edu.cn"} {
			out, _, err := gpubook(t, url, "user", "add", "--email", email, "--name", "Eve")
			if err == nil || !strings.Contains(err.Error(), "--email") || out != "" {
				t.Errorf("%q: %q, %v; want --email refused", email, out, err)
			}
		}
		mustGpubook(t, url, "user", "add", "--email", "\uff41dmin@lab.edu.cn", "--name", "Admin")
		if list := mustGpubook(t, url, "user", "list"); !strings.Contains(list, " admin@lab.edu.cn ") {
			t.Errorf("fullwidth address not folded:\n%s", list)
		}
	})
}
