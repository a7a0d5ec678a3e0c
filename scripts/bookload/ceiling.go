package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// ceiling is the bound for an API on net/http (which gpubook's server is) on
// this machine: a bare net/http server on 127.0.0.1 whose handler decodes
// the same booking body and answers 201 with a booking-sized JSON body, no
// middleware, no database, driven by the same client code as the real load.
// A booking through gpubook costs this plus its database work.
type ceiling struct {
	url string
	srv *http.Server
}

func newCeiling() (*ceiling, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	type request struct {
		GPUIDs   []int64   `json:"gpu_ids"`
		StartsAt time.Time `json:"starts_at"`
		EndsAt   time.Time `json:"ends_at"`
		Note     string    `json:"note"`
	}
	type booking struct {
		ID       int64     `json:"id"`
		UserID   int64     `json:"user_id"`
		GPUIDs   []int64   `json:"gpu_ids"`
		StartsAt time.Time `json:"starts_at"`
		EndsAt   time.Time `json:"ends_at"`
		Note     string    `json:"note"`
		Status   string    `json:"status"`
		Created  time.Time `json:"created_at"`
	}
	var id atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.Header.Get("Authorization") == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(booking{ID: id.Add(1), UserID: 1, GPUIDs: req.GPUIDs, StartsAt: req.StartsAt, EndsAt: req.EndsAt,
			Note: req.Note, Status: "confirmed", Created: time.Now().UTC()})
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return &ceiling{url: "http://" + ln.Addr().String(), srv: srv}, nil
}

func (c *ceiling) close() { c.srv.Close() }

// load drives the bare server exactly as target.load drives gpubook.
func (c *ceiling) load(ctx context.Context, t *target, clients int, d time.Duration) result {
	hc := loadClient(clients)
	return drive(clients, 0, d, func(k int) error {
		return post(ctx, hc, c.url, t.tokens[k%len(t.tokens)], t.body(k))
	})
}
