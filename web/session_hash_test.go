package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web/webtest"
)

// sessionOpens reports whether token, as the browser's session cookie,
// opens the admin's user list.
func sessionOpens(env *webtest.Env, token string) bool {
	req := httptest.NewRequest(http.MethodGet, "/admin/users", nil)
	req.AddCookie(&http.Cookie{Name: "gpubook_session", Value: token})
	rec := httptest.NewRecorder()
	env.Server.Echo.ServeHTTP(rec, req)
	return rec.Code == http.StatusOK
}

// TestSessionsStoredAsHashes (issue 36): the sessions table holds the
// SHA-256 of each session's token, never the cookie's value, and refuses
// a key that is not a hash; a session stored raw before migration 00024 is
// hashed in place by it, and the browser that holds its cookie stays
// signed in, while the old row key opens nothing.
func TestSessionsStoredAsHashes(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			env := webtest.New(t, d)
			db := env.DB
			env.AddUser("ada@example.org", "Ada", true)
			c := env.Client()
			c.Get("/login")
			res := c.Post("/login/dev", url.Values{"email": {"ada@example.org"}, "name": {"Ada"}})
			var token string
			for _, ck := range res.Result().Cookies() {
				if ck.Name == "gpubook_session" {
					token = ck.Value
				}
			}
			if token == "" || !sessionOpens(env, token) {
				t.Fatalf("sign-in gave no working session cookie (%d)", res.Code)
			}
			insert := "INSERT INTO sessions (token, data, expiry) VALUES (?, ?, ?)"
			if d == store.Postgres {
				insert = "INSERT INTO sessions (token, data, expiry) VALUES ($1, $2, $3)"
			}
			var key string
			var data []byte
			var expiry any
			if err := db.SQL.QueryRowContext(t.Context(), "SELECT token, data, expiry FROM sessions").Scan(&key, &data, &expiry); err != nil {
				t.Fatal(err)
			}
			if key != models.HashToken(token) {
				t.Fatalf("the session's row key is %q, want the SHA-256 of the cookie's value", key)
			}
			if sessionOpens(env, key) {
				t.Error("the stored row key opens the session as a cookie")
			}
			if _, err := db.SQL.ExecContext(t.Context(), insert,
				"raw-"+token, data, expiry); err == nil {
				t.Error("the sessions table took a key that is not a hash")
			}

			// Back to before 00024, with the row as the server then stored it.
			for {
				st, err := db.MigrationStatus(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(st, func(m store.MigrationState) bool { return m.Version == 24 && m.Applied }) {
					break
				}
				if _, err := db.MigrateDownOne(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			var left int
			if err := db.SQL.QueryRowContext(t.Context(), "SELECT count(*) FROM sessions").Scan(&left); err != nil || left != 0 {
				t.Errorf("sessions after rolling 00024 back = %d, %v; want 0 (a hash cannot be undone)", left, err)
			}
			if _, err := db.SQL.ExecContext(t.Context(), insert,
				token, data, expiry); err != nil {
				t.Fatal(err)
			}
			if _, err := db.MigrateUp(t.Context()); err != nil {
				t.Fatal(err)
			}
			var keys []string
			rows, err := db.SQL.QueryContext(t.Context(), "SELECT token FROM sessions")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var k string
				rows.Scan(&k)
				keys = append(keys, k)
			}
			rows.Close()
			if !slices.Equal(keys, []string{models.HashToken(token)}) {
				t.Errorf("row keys after 00024 = %q, want just the hash of the cookie's value", keys)
			}
			if !sessionOpens(env, token) {
				t.Error("the browser's cookie stopped working when 00024 hashed its session")
			}
		})
	}
}
