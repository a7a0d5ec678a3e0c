package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gpubook/gpubook/models"
)

func TestRetryDeadlock(t *testing.T) {
	deadlock := &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}
	other := errors.New("disk full")
	cases := []struct {
		name  string
		fails []error // what each try returns, in turn
		tries int
		want  error
	}{
		{"succeeds at once", []error{nil}, 1, nil},
		{"another error is not tried again", []error{other}, 1, other},
		{"a deadlock's victim is tried again", []error{deadlock, nil}, 2, nil},
		{"wrapped as internal, still a deadlock", []error{models.Internal(fmt.Errorf("store: x: %w", deadlock)), nil}, 2, nil},
		{"a victim again is tried again", []error{deadlock, deadlock, nil}, 3, nil},
		{"three tries at most", []error{deadlock, deadlock, deadlock, nil}, 3, deadlock},
		{"the second try's own error", []error{deadlock, other}, 2, other},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tries := 0
			err := retryDeadlock(func() error {
				tries++
				return c.fails[tries-1]
			})
			if tries != c.tries || !errors.Is(err, c.want) {
				t.Errorf("%d tries, %v; want %d, %v", tries, err, c.tries, c.want)
			}
		})
	}
}
