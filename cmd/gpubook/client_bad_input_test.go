package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
)

// The client's bad-input cases (issue 36): a portal (or a man in the
// middle) that sends escape sequences, a redirect to another origin, a
// plain-http portal on the network, a planted config.tmp symlink.

// hostilePortal answers the calls of login, ls, free, limits and extend
// with names, notes and messages full of control characters: ESC and OSC
// sequences that retitle the terminal and erase lines, a note whose lines
// fake table rows, C1 CSI, a bidi override.
func hostilePortal(t *testing.T) *httptest.Server {
	now := time.Now().UTC().Truncate(time.Second)
	answers := map[string]string{
		"GET /api/v1/me": `{"id":1,"email":"eve@example.org\u001b[2K","name":"\u001b]0;pwned\u0007\r\u001b[2KLogged in to https://real as Admin\n","time_zone":"UTC"}`,
		"GET /api/v1/bookings": fmt.Sprintf(`{"bookings":[{"id":7,"node":"node-a\u001b[31m","gpu_ids":[1],"gpu_uuids":["GPU-1\u001b[0m"],"starts_at":%q,"ends_at":%q,`+
			`"note":"train\n8   node-b   1   fake row\r","phase":"active\u009b2J","status":"confirmed"}]}`, now.Add(-time.Hour).Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339)),
		"GET /api/v1/gpus": `{"gpus":[{"id":2,"node_id":1,"node":"node-a\u001b[31m","index":1,"uuid":"GPU-2","model":"A100\u202eevil","in_service":true}]}`,
		"GET /api/v1/limits": fmt.Sprintf(`{"limits":[{"key":"max_gpus\u001b[8m","rule":"max_gpus","period":"any","unit":"gpus","source":"global\u0007","value":2,"source_name":"x\ry"}],`+
			`"week_start":%q,"used_gpu_minutes":0}`, now.Format(time.RFC3339)),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if body, ok := answers[r.Method+" "+r.URL.Path]; ok {
			fmt.Fprint(w, body)
			return
		}
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, `{"error":{"code":"conflict\u001b[2J","message":"taken\u001b]0;x\u0007\nby","fields":{"ends_at\u001b[1A":"no\u0085"},`+
			`"conflicts":[{"gpu_index":1,"user_name":"\u001b]8;;https://evil\u0007eve\u001b]8;;\u0007","starts_at":"2026-01-01T00:00:00Z","ends_at":"2026-01-01T01:00:00Z"}]}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// clientRun runs the client in-process with a home of its own.
func clientRun(home string, vars map[string]string, stdin string, args ...string) (string, string, error) {
	env := map[string]string{"XDG_CONFIG_HOME": filepath.Join(home, "cfg"), "HOME": home,
		"GPUBOOK_DATABASE_URL":          "sqlite:" + filepath.Join(home, "no", "such", "dir", "x.db"),
		"GPUBOOK_AGENT_CREDENTIAL_FILE": filepath.Join(home, "absent"), "GPUBOOK_AGENT_CACHE_FILE": filepath.Join(home, "absent")}
	for k, v := range vars {
		env[k] = v
	}
	var out, errOut syncBuffer
	err := runIO(context.Background(), append([]string{"gpubook"}, args...), envOf(env),
		cliIO{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, pollMin: 20 * time.Millisecond})
	return out.String(), errOut.String(), err
}

// rawControl finds a character a terminal would act on, other than the
// line ends and tabs the client writes itself.
func rawControl(s string) (rune, bool) {
	for _, r := range s {
		if r != '\n' && r != '\t' && models.Unprintable(r) {
			return r, true
		}
	}
	return 0, false
}

func TestClientEscapesPortalText(t *testing.T) {
	t.Parallel()
	srv := hostilePortal(t)
	home := t.TempDir()
	out, errOut, err := clientRun(home, nil, "gpb_token\n", "login", "--portal", srv.URL)
	if err != nil {
		t.Fatalf("login: %v %s", err, errOut)
	}
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, `as \x1b]0;pwned\x07\r\x1b[2KLogged in to https://real as Admin\n <eve@example.org\x1b[2K>`) {
		t.Errorf("login printed %q", out)
	}
	vars := map[string]string{}
	for _, tc := range []struct {
		args  []string
		lines int // lines of output, -1: any
	}{
		{[]string{"ls"}, 2}, // the header and one booking: the note's lines make no rows
		{[]string{"ls", "--json"}, -1},
		{[]string{"free"}, 2},
		{[]string{"limits"}, 3},
		{[]string{"extend", "7", "--by", "1h"}, 0},
	} {
		out, errOut, err := clientRun(home, vars, "", tc.args...)
		all := out + errOut
		if err != nil {
			all += err.Error()
		}
		if r, bad := rawControl(all); bad {
			t.Errorf("%s: a raw %U reaches the terminal: %q", strings.Join(tc.args, " "), r, all)
		}
		if n := strings.Count(out, "\n"); tc.lines >= 0 && n != tc.lines {
			t.Errorf("%s: %d lines, want %d:\n%s", strings.Join(tc.args, " "), n, tc.lines, out)
		}
		if tc.args[0] == "extend" && (err == nil || !strings.Contains(err.Error(), `held by \x1b]8;;https://evil\x07eve`)) {
			t.Errorf("extend: %v, want the refusal with its text escaped", err)
		}
		if len(tc.args) > 1 && tc.args[1] == "--json" && !strings.Contains(out, `\u009b2J`) {
			t.Errorf("ls --json: %s, want C1 as \\u009b", out)
		}
	}
}

// TestClientRedirectKeepsToken: a redirect to another port of the same
// host (another origin) arrives without the Authorization header, which Go
// keeps for the same host name; a redirect within the origin keeps it.
func TestClientRedirectKeepsToken(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(other.Close)
	portal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/v1/me" && r.URL.Query().Get("away") == "":
			http.Redirect(w, r, "/moved/api/v1/me", http.StatusTemporaryRedirect)
		case r.URL.Path == "/moved/api/v1/me" && r.Header.Get("Authorization") == "Bearer gpb_secret":
			http.Redirect(w, r, other.URL+"/api/v1/me", http.StatusTemporaryRedirect)
		default:
			http.Error(w, "no token", http.StatusUnauthorized)
		}
	}))
	t.Cleanup(portal.Close)
	_, _, err := clientRun(t.TempDir(), nil, "gpb_secret\n", "login", "--portal", portal.URL)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "" {
		t.Errorf("the other origin saw Authorization %q (login: %v)", seen, err)
	}
}

// TestClientPlainHTTP: the token goes over plain http:// only to this
// machine, unless --allow-http (or GPUBOOK_ALLOW_HTTP=1), which login
// records for the later commands.
func TestClientPlainHTTP(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, portal := range []string{"http://gpubook.example.org", "http://192.0.2.1:8080", "http://[2001:db8::1]/", "http://127.0.0.1.nip.io"} {
		_, _, err := clientRun(home, nil, "", "login", "--portal", portal)
		if err == nil || !strings.Contains(err.Error(), "refusing to send your token in clear over http://") {
			t.Errorf("login --portal %s: %v", portal, err)
		}
		_, _, err = clientRun(home, map[string]string{"GPUBOOK_PORTAL": portal, "GPUBOOK_TOKEN": "gpb_x"}, "", "ls")
		if err == nil || !strings.Contains(err.Error(), "refusing to send your token in clear") {
			t.Errorf("ls on %s: %v", portal, err)
		}
	}
	ip := nonLoopbackIP(t)
	if ip == "" {
		t.Log("no non-loopback address on this machine: --allow-http not tried")
		return
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skipf("listen on %s: %v", ip, err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"id":1,"email":"ada@example.org","name":"Ada","time_zone":"UTC"}`)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	if _, _, err := clientRun(home, nil, "gpb_x\n", "login", "--portal", srv.URL); err == nil || !strings.Contains(err.Error(), "--allow-http") {
		t.Errorf("login to %s without --allow-http: %v", srv.URL, err)
	}
	if out, _, err := clientRun(home, nil, "gpb_x\n", "login", "--portal", srv.URL, "--allow-http"); err != nil || !strings.Contains(out, "as Ada") {
		t.Errorf("login --allow-http: %q %v", out, err)
	}
	if data, _ := os.ReadFile(filepath.Join(home, "cfg", "gpubook", "config")); !strings.Contains(string(data), "allow_http = true\n") {
		t.Errorf("config: %q, want allow_http recorded", data)
	}
	if _, _, err := clientRun(home, nil, "", "ls"); err != nil && strings.Contains(err.Error(), "refusing") {
		t.Errorf("ls after login --allow-http: %v", err)
	}
}

func nonLoopbackIP(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

// TestClientConfigSymlink: login writes its config through a file it
// created itself; a config.tmp planted as a symlink (the old fixed name)
// no longer receives the token.
func TestClientConfigSymlink(t *testing.T) {
	t.Parallel()
	srv := hostilePortal(t)
	home := t.TempDir()
	dir := filepath.Join(home, "cfg", "gpubook")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(home, "victim")
	if err := os.WriteFile(victim, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "config.tmp")); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := clientRun(home, nil, "gpb_secret\n", "login", "--portal", srv.URL); err != nil {
		t.Fatalf("login: %v %s", err, errOut)
	}
	if data, _ := os.ReadFile(victim); string(data) != "mine\n" {
		t.Errorf("the symlink's target now holds %q", data)
	}
	st, err := os.Lstat(filepath.Join(dir, "config"))
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Fatalf("config: %v %v, want a regular file with mode 0600", st, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "config")); !strings.Contains(string(data), "token = gpb_secret\n") {
		t.Errorf("config holds %q", data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d entries in %s, want config and the planted link (no temporary file left)", len(entries), dir)
	}
}
