package models

import "context"

type ctxKey int

const userKey ctxKey = iota

// WithUser returns a context that carries the signed-in user.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey, u)
}

// UserFromContext returns the signed-in user, or nil for an anonymous request.
func UserFromContext(ctx context.Context) *User {
	u, _ := ctx.Value(userKey).(*User)
	return u
}
