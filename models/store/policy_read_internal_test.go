package store

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPolicyQuerySQLiteParameters: on SQLite every parameter of the policy
// read is "+?" (see policyQuery) and the arguments match the markers, for
// no GPU, one and several.
func TestPolicyQuerySQLiteParameters(t *testing.T) {
	bare := regexp.MustCompile(`[^+]\?`)
	for _, ids := range [][]int64{nil, {7}, {7, 8, 9}} {
		q, args := policyQuery(SQLite, true, 3, ids)
		if m := bare.FindString(q); m != "" {
			t.Errorf("%d GPUs: a bare parameter %q in\n%s", len(ids), m, q)
		}
		if n := regexp.MustCompile(`\+\?`).FindAllStringIndex(q, -1); len(n) != len(args) {
			t.Errorf("%d GPUs: %d markers, %d arguments", len(ids), len(n), len(args))
		}
	}
	if q, args := policyQuery(Postgres, true, 3, []int64{7, 8}); !regexp.MustCompile(`FOR NO KEY UPDATE`).MatchString(q) || len(args) != 5 {
		t.Errorf("postgres: %d arguments, query\n%s", len(args), q)
	}
}

// BenchmarkPolicyQuery runs the policy read for users and GPU lists taking
// turns, as bookings do; "bare" is the same statement with plain "?"
// parameters, which SQLite compiled again on every change of value:
//
//	go test -run '^$' -bench PolicyQuery ./models/store/
func BenchmarkPolicyQuery(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "t.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.MigrateUp(ctx); err != nil {
		b.Fatal(err)
	}
	for _, variant := range []string{"pinned", "bare"} {
		b.Run(variant, func(b *testing.B) {
			i := int64(0)
			for b.Loop() {
				i++
				q, args := policyQuery(SQLite, false, 1+i%2, []int64{1 + i%3})
				if variant == "bare" {
					q = strings.ReplaceAll(q, "+?", "?")
				}
				var rows []policyReadRow
				if err := db.Gorm.WithContext(ctx).Raw(q, args...).Scan(&rows).Error; err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
