package main

import (
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models"
)

// TestTokenCreateCap: "gpubook token create" holds a user to the 20
// active tokens the profile page allows (it made a 21st, issue 36);
// revoking one makes room again.
func TestTokenCreateCap(t *testing.T) {
	t.Parallel()
	eachMigrated(t, func(t *testing.T, url string) {
		mustGpubook(t, url, "user", "add", "--email", "ada@example.org", "--name", "Ada")
		for range models.MaxActiveTokens {
			mustGpubook(t, url, "token", "create", "--email", "ada@example.org")
		}
		out, _, err := gpubook(t, url, "token", "create", "--email", "ada@example.org", "--name", "one too many")
		if err == nil || !strings.HasPrefix(err.Error(), "token create: ada@example.org already has 20 active tokens") || strings.Contains(out, "gpb_") {
			t.Fatalf("a 21st token: %v\n%s", err, out)
		}
		list := mustGpubook(t, url, "token", "list", "--email", "ada@example.org")
		if n := strings.Count(list, "\n") - 1; n != models.MaxActiveTokens {
			t.Errorf("%d tokens listed, want %d", n, models.MaxActiveTokens)
		}
		mustGpubook(t, url, "token", "revoke", "3")
		if out := mustGpubook(t, url, "token", "create", "--email", "ada@example.org"); !strings.Contains(out, "gpb_") {
			t.Errorf("after a revoke: %s", out)
		}
	})
}
