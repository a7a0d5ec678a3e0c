package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

func TestTokenCommands(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.SQLite)
	mustGpubook(t, url, "user", "add", "--email", "ada@example.org", "--name", "Ada")
	out := mustGpubook(t, url, "token", "create", "--email", "ADA@example.org", "--name", "laptop")
	var plain string
	for _, f := range strings.Fields(out) {
		if strings.HasPrefix(f, "gpb_") {
			plain = f
			break
		}
	}
	if plain == "" || strings.Count(out, plain) != 2 || !strings.Contains(out, "curl -H \"Authorization: Bearer ") {
		t.Fatalf("create printed:\n%s", out)
	}
	db := storetest.OpenURL(t, url)
	u, err := db.UserByToken(ctx, plain, time.Now())
	if err != nil || u.Email != "ada@example.org" {
		t.Fatalf("UserByToken = %v, %v", u, err)
	}
	list := mustGpubook(t, url, "token", "list", "--email", "ada@example.org")
	if strings.Contains(list, plain) || strings.Contains(list, "gpb_") || !strings.Contains(list, "laptop") {
		t.Errorf("list shows a secret or misses the token:\n%s", list)
	}
	if out := mustGpubook(t, url, "token", "revoke", "1"); out != "revoked token 1\n" {
		t.Errorf("revoke: %q", out)
	}
	if _, err := db.UserByToken(ctx, plain, time.Now()); err == nil {
		t.Error("revoked token still works")
	}
	if _, _, err := gpubook(t, url, "token", "revoke", "1"); err == nil || !strings.Contains(err.Error(), "no active token 1") {
		t.Errorf("revoke twice: %v", err)
	}
	for args, want := range map[string]string{
		"token create --email nobody@example.org": "token create: nobody@example.org: The user does not exist.",
		"token create":                          "token create: --email is required",
		"token revoke abc":                      `token revoke: "abc" is not a token ID`,
		"token revoke":                          "token revoke: missing argument",
		"token list --email nobody@example.org": "token list: nobody@example.org: The user does not exist.",
	} {
		if _, _, err := gpubook(t, url, strings.Fields(args)...); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error = %v, want %q", args, err, want)
		}
	}
}

func TestNodeCommands(t *testing.T) {
	t.Parallel()
	eachMigrated(t, func(t *testing.T, url string) {
		out := mustGpubook(t, url, "node", "add", "--name", "gpu01", "--gpus", "8", "--model", "NVIDIA A100-SXM4-80GB", "--memory-mib", "81920")
		if !strings.HasPrefix(out, "added node 1: gpu01 with 8× NVIDIA A100-SXM4-80GB (81920 MiB)") {
			t.Errorf("add: %q", out)
		}
		out = mustGpubook(t, url, "node", "list")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || strings.Join(strings.Fields(lines[1]), " ") != "gpu01 8 NVIDIA A100-SXM4-80GB 81920 MiB 8/8" {
			t.Errorf("list:\n%s", out)
		}
		if _, _, err := gpubook(t, url, "node", "add", "--name", "gpu01", "--gpus", "2", "--model", "X", "--memory-mib", "1"); err == nil || err.Error() != "node add: This node already exists." {
			t.Errorf("duplicate node: %v", err)
		}
		tests := []struct {
			args []string
			want string
		}{
			{[]string{"--name", "gpu02", "--gpus", "0", "--model", "L4", "--memory-mib", "23034"}, "node add: --gpus: A node has between 1 and 64 GPUs"},
			{[]string{"--name", "gpu02", "--gpus", "2", "--model", "L4", "--memory-mib", "-1"}, "node add: --memory-mib: Memory must be a positive number of MiB"},
			{[]string{"--name", "gpu02", "--gpus", "2", "--memory-mib", "23034"}, "node add: --model: Model is required"},
			{[]string{"--name", "gpu 02", "--gpus", "2", "--model", "L4", "--memory-mib", "23034"}, "node add: --name: Use a host name"},
			{[]string{"--name", "gpu02", "--gpus", "two"}, `node add: invalid value "two" for flag -gpus`},
		}
		for _, tt := range tests {
			out, _, err := gpubook(t, url, append([]string{"node", "add"}, tt.args...)...)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("%v: error = %v, want %q", tt.args, err, tt.want)
			}
			if out != "" {
				t.Errorf("%v: stdout = %q", tt.args, out)
			}
		}
		nodes, err := storetest.OpenURL(t, url).Nodes(ctx)
		if err != nil || len(nodes) != 1 || len(nodes[0].GPUs) != 8 {
			t.Errorf("nodes after bad input = %d, %v; want only gpu01", len(nodes), err)
		}
	})
}
