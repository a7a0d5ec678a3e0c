package store_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestApplicationName checks, through pg_stat_activity, that every
// connection of the pool names its replica (gpubook/<host>/<pid>), and that
// a name the URL gives wins.
func TestApplicationName(t *testing.T) {
	names := func(t *testing.T, db *store.DB, hold int) []string {
		t.Helper()
		var conns []*sql.Conn // held together, so the pool opens that many
		for range hold {
			c, err := db.SQL.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.PingContext(ctx); err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		rows, err := conns[0].QueryContext(context.Background(), `SELECT application_name FROM pg_stat_activity
			WHERE datname = current_database() AND backend_type = 'client backend' ORDER BY pid`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		return out
	}
	t.Run("default", func(t *testing.T) {
		want := store.ApplicationName()
		got := names(t, storetest.OpenURL(t, storetest.URL(t, store.Postgres)), 3)
		if len(got) < 3 {
			t.Fatalf("pg_stat_activity lists %d connections (%q), want at least 3", len(got), got)
		}
		for _, n := range got {
			if n != want {
				t.Errorf("application_name = %q, want %q", n, want)
			}
		}
	})
	t.Run("from the URL", func(t *testing.T) {
		got := names(t, storetest.OpenURL(t, storetest.URL(t, store.Postgres)+"&application_name=reporting"), 2)
		for _, n := range got {
			if n != "reporting" {
				t.Errorf("application_name = %q, want the URL's %q", n, "reporting")
			}
		}
		if len(got) < 2 {
			t.Fatalf("pg_stat_activity lists %d connections, want at least 2", len(got))
		}
	})
}
