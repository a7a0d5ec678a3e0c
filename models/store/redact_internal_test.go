package store

import (
	"strings"
	"testing"
)

// TestRedact: no password of a database URL reaches a log or an error.
func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://gpubook:s3cret@db:5432/gpubook?sslmode=disable", "postgres://gpubook:xxxxx@db:5432/gpubook?sslmode=disable"},
		{"postgres://gpubook@db/gpubook", "postgres://gpubook@db/gpubook"},
		{"postgres://db/gpubook?user=g&password=s3cret", "postgres://db/gpubook?password=xxxxx&user=g"},
		{"postgres://u:p%40ss@db/x", "postgres://u:xxxxx@db/x"},
		{"sqlite:./gpubook.db", "sqlite:./gpubook.db"},
		{"mysql://root:s3cret@tcp(db)/x", "mysql://root:xxxxx@tcp(db)/x"},
		{"postgres://u:s3cret@db:port/x", "(a database URL that does not parse)"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := redact(tt.in)
			if got != tt.want || strings.Contains(got, "s3cret") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
