package web

import (
	"context"
	"time"

	"github.com/alexedwards/scs/v2"

	"github.com/gpubook/gpubook/models"
)

// hashedSessions keeps a session under the SHA-256 of its token (hex, as
// models.HashToken stores API, feed and agent secrets), never the token
// itself: the browser's cookie still holds scs's token, but a backup, a
// dump or a stolen database file holds only hashes, which open nothing
// when presented as a cookie. scs's tokens carry 256 random bits, so a
// plain hash leaves nothing to brute-force. The sessions table refuses a
// key that is not 64 characters long (migration 00024), so a store that
// skipped this wrapper would fail loudly rather than keep raw tokens.
type hashedSessions struct{ inner scs.Store }

// hashSessions wraps store, unless it is already wrapped.
func hashSessions(store scs.Store) scs.Store {
	if h, ok := store.(hashedSessions); ok {
		return h
	}
	return hashedSessions{inner: store}
}

func (h hashedSessions) Find(token string) ([]byte, bool, error) {
	return h.inner.Find(models.HashToken(token))
}

func (h hashedSessions) Commit(token string, b []byte, expiry time.Time) error {
	return h.inner.Commit(models.HashToken(token), b, expiry)
}

func (h hashedSessions) Delete(token string) error {
	return h.inner.Delete(models.HashToken(token))
}

func (h hashedSessions) FindCtx(ctx context.Context, token string) ([]byte, bool, error) {
	if c, ok := h.inner.(scs.CtxStore); ok {
		return c.FindCtx(ctx, models.HashToken(token))
	}
	return h.Find(token)
}

func (h hashedSessions) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	if c, ok := h.inner.(scs.CtxStore); ok {
		return c.CommitCtx(ctx, models.HashToken(token), b, expiry)
	}
	return h.Commit(token, b, expiry)
}

func (h hashedSessions) DeleteCtx(ctx context.Context, token string) error {
	if c, ok := h.inner.(scs.CtxStore); ok {
		return c.DeleteCtx(ctx, models.HashToken(token))
	}
	return h.Delete(token)
}
