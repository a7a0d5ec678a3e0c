package models

import "context"

type ctxKey int

const (
	userKey ctxKey = iota
	clientIPKey
)

// WithUser returns a context that carries the signed-in user.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey, u)
}

// UserFromContext returns the signed-in user, or nil for an anonymous request.
func UserFromContext(ctx context.Context) *User {
	u, _ := ctx.Value(userKey).(*User)
	return u
}

// WithClientIP returns a context that carries the address of the client
// whose request it serves, so that the audit log records it for changes
// whose store methods take no actor address (cancel, release, extend).
func WithClientIP(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, clientIPKey, ip)
}

// ClientIPFromContext returns the client's address, or "" outside a request.
func ClientIPFromContext(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	ip, _ := ctx.Value(clientIPKey).(string)
	return ip
}
