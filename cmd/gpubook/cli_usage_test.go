package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// Unknown commands and flags fail with a message and usage on stderr and nothing on stdout.
func TestUnknownCommandsAndFlags(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.SQLite)
	for args, want := range map[string]string{
		"":                         "no command given",
		"frobnicate":               `unknown command "frobnicate"`,
		"user":                     "user: missing sub-command",
		"user remove":              `user: unknown sub-command "remove"`,
		"node add --cores 8":       "node add: flag provided but not defined: -cores",
		"serve --port 80":          "serve: flag provided but not defined: -port",
		"migrate --dry-run":        "migrate: flag provided but not defined: -dry-run",
		"demo --yes":               "demo: flag provided but not defined: -yes",
		"version --short":          "version: flag provided but not defined: -short",
		"token list --all":         "token list: flag provided but not defined: -all",
		"migrate up status":        "migrate: wrong number of arguments",
		"user list --database-url": "user list: flag needs an argument: -database-url",
	} {
		out, errOut, err := gpubook(t, url, strings.Fields(args)...)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: error = %v, want %q", args, err, want)
		}
		if out != "" || !strings.Contains(errOut, "Usage: gpubook") {
			t.Errorf("%q: stdout = %q, stderr = %q; want usage on stderr only", args, out, errOut)
		}
	}
}

// Every command and sub-command answers --help with its usage and exit 0.
func TestHelp(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, store.SQLite)
	for _, args := range []string{
		"--help", "help", "help user", "serve --help", "migrate --help", "migrate status -h", "user --help", "user add --help",
		"user list --help", "token --help", "token create --help", "token list --help", "token revoke --help",
		"node --help", "node add --help", "node list --help", "demo --help", "version --help",
	} {
		out, _, err := gpubook(t, url, strings.Fields(args)...)
		if err != nil || !strings.Contains(out, "Usage: gpubook") {
			t.Errorf("%q: err = %v, stdout = %q", args, err, out)
		}
	}
	out, _, _ := gpubook(t, url, "node", "add", "--help")
	for _, flag := range []string{"--name NAME", "--gpus NUMBER", "--model MODEL", "--memory-mib MIB", "--database-url URL"} {
		if !strings.Contains(out, flag) {
			t.Errorf("node add --help lacks %q:\n%s", flag, out)
		}
	}
	if out := mustGpubook(t, url, "version"); !strings.HasPrefix(out, "gpubook ") {
		t.Errorf("version: %q", out)
	}
}

// A bad environment stops every configured command with one line naming the variable.
func TestBadEnvironment(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ key, value, want string }{
		{"GPUBOOK_TIMEZONE", "Mars/Olympus", `GPUBOOK_TIMEZONE: unknown time zone "Mars/Olympus"`},
		{"GPUBOOK_LISTEN", "localhost", `GPUBOOK_LISTEN: "localhost" is not host:port`},
		{"GPUBOOK_DATABASE_URL", "mysql://db", "GPUBOOK_DATABASE_URL: must start with postgres://"},
		{"GPUBOOK_LOG_LEVEL", "verbose", `GPUBOOK_LOG_LEVEL: "verbose" is not one of`},
	} {
		env := map[string]string{"GPUBOOK_DATABASE_URL": storetest.URL(t, store.SQLite), tt.key: tt.value}
		for _, cmd := range [][]string{{"serve"}, {"user", "list"}} {
			var out, errOut bytes.Buffer
			err := run(ctx, append([]string{"gpubook"}, cmd...), envOf(env), &out, &errOut)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s=%s %v: error = %v, want one line %q", tt.key, tt.value, cmd, err, tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("%v: stdout = %q", cmd, out.String())
			}
		}
	}
}
