package main

import (
	"bytes"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/wire"
	"github.com/gpubook/gpubook/web"
	"github.com/gpubook/gpubook/web/webtest"
)

// portalSecrets are the bearer secrets of a running portal, each as its
// holder presents it: the admin's session cookie, a calendar feed token, a
// personal API token, an unspent enrolment token and a node credential.
type portalSecrets struct {
	session, feed, api, enroll, node string
}

// opener presents one value to the wired router in each of the ways a
// secret is presented, and says which of them opened something.
type opener struct {
	t   *testing.T
	env *webtest.Env
}

func (o opener) do(req *http.Request) int {
	rec := httptest.NewRecorder()
	o.env.Server.Echo.ServeHTTP(rec, req)
	return rec.Code
}

// asCookie: the admin's user list with v as the session cookie.
func (o opener) asCookie(v string) bool {
	req := httptest.NewRequest(http.MethodGet, "/admin/users", nil)
	req.AddCookie(&http.Cookie{Name: "gpubook_session", Value: v})
	return o.do(req) == http.StatusOK
}

// asFeed: v as the token in a calendar feed's URL.
func (o opener) asFeed(v string) bool {
	return o.do(httptest.NewRequest(http.MethodGet, "/feeds/"+url.PathEscape(v)+".ics", nil)) == http.StatusOK
}

// asAPIToken: v as the JSON API's bearer token.
func (o opener) asAPIToken(v string) bool {
	req := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+v)
	return o.do(req) == http.StatusOK
}

// asNodeCredential: v as the agent API's bearer credential.
func (o opener) asNodeCredential(v string) bool {
	req := httptest.NewRequest(http.MethodGet, wire.PathSchedule, nil)
	req.Header.Set("Authorization", "Bearer "+v)
	return o.do(req) == http.StatusOK
}

// asEnrollToken: v as the token of an enrolment (which a valid one spends).
func (o opener) asEnrollToken(v string) bool {
	body, _ := json.Marshal(wire.EnrollRequest{Token: v, Hostname: "thief", AgentVersion: "0"})
	req := httptest.NewRequest(http.MethodPost, wire.PathEnroll, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return o.do(req) == http.StatusOK
}

// opens lists the ways v (or v with the prefix its kind of secret starts
// with) opens something; none is the only right answer for what a backup
// holds.
func (o opener) opens(v string) []string {
	var got []string
	try := func(what string, ok bool) {
		if ok {
			got = append(got, what)
		}
	}
	try("session cookie", o.asCookie(v))
	for _, p := range []string{"", models.FeedTokenPrefix} {
		try("feed URL "+p+"…", o.asFeed(withPrefix(p, v)))
	}
	for _, p := range []string{"", models.TokenPrefix} {
		try("API token "+p+"…", o.asAPIToken(withPrefix(p, v)))
	}
	for _, p := range []string{"", models.NodeCredentialPrefix} {
		try("node credential "+p+"…", o.asNodeCredential(withPrefix(p, v)))
	}
	for _, p := range []string{"", models.EnrollTokenPrefix} {
		try("enrolment token "+p+"…", o.asEnrollToken(withPrefix(p, v)))
	}
	return got
}

func withPrefix(p, v string) string {
	if strings.HasPrefix(v, p) {
		return v
	}
	return p + v
}

// makeSecrets gives the portal one secret of each kind, each made the way
// the portal makes it, and checks that each opens what it should: the
// test's way of presenting them is then known to work.
func makeSecrets(t *testing.T, env *webtest.Env, o opener) portalSecrets {
	t.Helper()
	now := time.Now()
	admin := env.AddUser("ada@example.org", "Ada", true)
	var s portalSecrets

	c := env.Client()
	c.Get("/login")
	res := c.Post("/login/dev", url.Values{"email": {admin.Email}, "name": {admin.Name}})
	if res.Code != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", res.Code, res.Body)
	}
	for _, ck := range res.Result().Cookies() {
		if ck.Name == "gpubook_session" {
			s.session = ck.Value
		}
	}
	c.Get(res.Header().Get("Location"))

	var err error
	if _, s.feed, err = env.DB.CreateFeedToken(ctx, admin.ID, 0, now, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	if _, s.api, err = env.DB.CreateToken(ctx, admin.ID, "laptop", now, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	gpus, err := models.NewNodeGPUs("gpu01", 2, "NVIDIA A100-SXM4-80GB", 81920)
	if err != nil {
		t.Fatal(err)
	}
	node := &models.Node{Name: "gpu01"}
	if err := env.DB.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	spent, _, err := env.DB.CreateEnrollToken(ctx, node.ID, now, models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(wire.EnrollRequest{Token: spent, Hostname: "gpu01", AgentVersion: "test"})
	req := httptest.NewRequest(http.MethodPost, wire.PathEnroll, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	env.Server.Echo.ServeHTTP(rec, req)
	var cred wire.EnrollResponse
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &cred) != nil || cred.Credential == "" {
		t.Fatalf("enrol: %d %s", rec.Code, rec.Body)
	}
	s.node = cred.Credential
	// The one left in the backup is unspent (presenting it spends it).
	if s.enroll, _, err = env.DB.CreateEnrollToken(ctx, node.ID, now, models.CLIActor); err != nil {
		t.Fatal(err)
	}

	for what, ok := range map[string]bool{
		"the session cookie":  o.asCookie(s.session) && s.session != "",
		"the feed token":      o.asFeed(s.feed),
		"the API token":       o.asAPIToken(s.api),
		"the node credential": o.asNodeCredential(s.node),
	} {
		if !ok {
			t.Fatalf("%s does not open what it should before the backup: the test presents it wrongly", what)
		}
	}
	return s
}

// tokenish matches every run of characters a bearer secret is made of
// (base32, base64url, hex, prefixes): each one in a backup is a candidate.
var tokenish = regexp.MustCompile(`[A-Za-z0-9_-]{20,}`)

// pgHex is a bytea value in a pg_dump script's COPY data.
var pgHex = regexp.MustCompile(`\\\\x([0-9a-f]+)`)

// backupContent is every byte a backup gives away: a SQLite file's bytes
// and each value of each of its tables; a pg_dump archive as the SQL
// script pg_restore makes of it, with its bytea values decoded.
func backupContent(t *testing.T, dialect, file string) []byte {
	t.Helper()
	if dialect == store.Postgres {
		out, err := exec.Command("pg_restore", "--file=-", file).Output()
		if err != nil {
			t.Fatalf("pg_restore of the backup: %v", err)
		}
		for _, m := range pgHex.FindAllSubmatch(out, -1) {
			if b, err := hex.DecodeString(string(m[1])); err == nil {
				out = append(append(out, '\n'), b...)
			}
		}
		return out
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+file+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables, err := (&store.DB{SQL: db, Dialect: store.SQLite}).Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		rows, err := db.Query(`SELECT * FROM "` + tb + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				switch v := v.(type) {
				case string:
					raw = append(append(raw, '\n'), v...)
				case []byte:
					raw = append(append(raw, '\n'), v...)
				}
			}
		}
		rows.Close()
	}
	return raw
}

// TestBackupHoldsNoUsableSecret (issue 36): a backup made under the usual
// umask (022) is 0600, holds none of the portal's bearer secrets as it is,
// and no string in it (a stored hash, a CSRF token inside a session's
// data, anything of a secret's alphabet) opens anything when presented as
// a session cookie, a feed URL, an API token, a node credential or an
// enrolment token. Not parallel: the umask is the process's.
func TestBackupHoldsNoUsableSecret(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)

	// The server's own SQLite file, and its -wal and -shm, are 0600 too.
	t.Run("sqlite file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "gpubook.db")
		db, err := store.Open(ctx, "sqlite:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.MigrateUp(ctx); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("%s: %v under umask 022, want -rw-------", filepath.Base(p), st.Mode().Perm())
			}
		}
	})
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			if d == store.Postgres {
				for _, tool := range []string{"pg_dump", "pg_restore"} {
					if _, err := exec.LookPath(tool); err != nil {
						t.Skipf("%s not on PATH", tool)
					}
				}
			}
			src := storetest.MigratedURL(t, d)
			db := storetest.OpenURL(t, src)
			free := func(c *web.Config) {
				c.APIRate = web.Rate{PerMinute: 1e6, Burst: 1e6}
				c.APIFailRate = web.Rate{PerMinute: 1e6, Burst: 1e6}
				c.SignInRate = web.Rate{PerMinute: 1e6, Burst: 1e6}
			}
			env := webtest.NewOn(t, db, free)
			o := opener{t: t, env: env}
			secrets := makeSecrets(t, env, o)

			file := filepath.Join(t.TempDir(), "gpubook-backup")
			mustGpubook(t, src, "backup", file)
			st, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("backup mode %v under umask 022, want -rw-------", st.Mode().Perm())
			}

			content := backupContent(t, d, file)
			for what, plain := range map[string]string{"session token": secrets.session, "feed token": secrets.feed,
				"API token": secrets.api, "enrolment token": secrets.enroll, "node credential": secrets.node} {
				if bytes.Contains(content, []byte(plain)) {
					t.Errorf("the backup holds the %s as it is", what)
				}
			}
			var candidates []string
			for _, m := range tokenish.FindAll(content, -1) {
				candidates = append(candidates, string(m))
			}
			slices.Sort(candidates)
			candidates = slices.Compact(candidates)
			for _, h := range []string{models.HashToken(secrets.session), models.HashToken(secrets.feed), models.HashToken(secrets.api),
				models.HashToken(secrets.enroll), models.HashToken(secrets.node)} {
				if !slices.Contains(candidates, h) {
					t.Errorf("hash %s… not among the %d candidates: the secret is stored otherwise, or the backup is misread", h[:8], len(candidates))
				}
			}
			opened := 0
			for _, v := range candidates {
				if got := o.opens(v); len(got) > 0 {
					opened++
					t.Errorf("%.12s… (%d chars) from the backup opens: %s", v, len(v), strings.Join(got, ", "))
				}
			}
			t.Logf("%s: %d candidates from the backup, %d open anything", d, len(candidates), opened)

			// Presenting them all spent nothing: the holders' secrets still work.
			if !o.asCookie(secrets.session) || !o.asFeed(secrets.feed) || !o.asAPIToken(secrets.api) ||
				!o.asNodeCredential(secrets.node) || !o.asEnrollToken(secrets.enroll) {
				t.Error("a holder's own secret stopped working")
			}
		})
	}
}
