package sqlfloor

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
)

// Handler is a floor over HTTP: a net/http server's two calls of a booking
// and its release, doing sqlfloor's database work and nothing else — the
// bearer token's look-up (401 for a token no user has), the JSON body
// read, Book or Release as the given user on the given node, rows marked
// with note — so that what HTTP and the database cost together in one Go
// process is measured rather than added up. It answers POST
// /api/v1/bookings with 201 {"id":…} (the body's first GPU over its
// range) and POST /api/v1/bookings/{id}/release with 200 {}. peerbench's
// floor server and bookload's HTTP floor serve it.
func Handler(db *store.DB, user, node int64, note string) http.Handler {
	conn := New(db)
	pair := func(r *http.Request) (Pair, error) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		p := Pair{TokenHash: models.HashToken(token), UserID: user, NodeID: node, Note: note}
		if !ok {
			return p, ErrNoToken
		}
		return p, conn.Token(r.Context(), p.TokenHash)
	}
	fail := func(w http.ResponseWriter, code int, err error) { http.Error(w, err.Error(), code) }
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/bookings", func(w http.ResponseWriter, r *http.Request) {
		p, err := pair(r)
		if err != nil {
			TokenFailed(w, err)
			return
		}
		req, err := DecodeBooking(r)
		if err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
		p.GPU = req.GPUIDs[0]
		id, err := conn.Book(r.Context(), p, req.StartsAt, req.EndsAt, time.Now().UTC())
		if err != nil {
			fail(w, http.StatusInternalServerError, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":%d}`, id)
	})
	mux.HandleFunc("POST /api/v1/bookings/{id}/release", func(w http.ResponseWriter, r *http.Request) {
		p, err := pair(r)
		if err != nil {
			TokenFailed(w, err)
			return
		}
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil {
			fail(w, http.StatusNotFound, err)
			return
		}
		if err := conn.Release(r.Context(), p, id, time.Now().UTC()); err != nil {
			fail(w, http.StatusInternalServerError, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	})
	return mux
}

// Booking is what a booking call asks the floors for.
type Booking struct {
	GPUIDs   []int64   `json:"gpu_ids"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
}

// DecodeBooking reads a booking call's body; its error (a broken body, no
// GPU, no range) is the caller's 400.
func DecodeBooking(r *http.Request) (Booking, error) {
	var b Booking
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		return b, fmt.Errorf("booking body: %w", err)
	}
	if len(b.GPUIDs) == 0 || !b.EndsAt.After(b.StartsAt) {
		return b, errors.New("booking body: gpu_ids and a range (starts_at before ends_at) are required")
	}
	b.StartsAt, b.EndsAt = b.StartsAt.UTC(), b.EndsAt.UTC()
	return b, nil
}

// TokenFailed answers a failed token look-up: 401 for a token no user has,
// 500 for the database's failure.
func TokenFailed(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, ErrNoToken) {
		code = http.StatusUnauthorized
	}
	http.Error(w, err.Error(), code)
}
