package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestAPIConcurrentOverlappingBookings is the double booking other
// booking tools let through under load, tried through real HTTP: 100 clients ask at the same moment for overlapping ranges on the
// same GPUs. Exactly one is told 201, all others 409, and the database holds
// exactly one booking.
func TestAPIConcurrentOverlappingBookings(t *testing.T) {
	t.Parallel()
	const clients = 100
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newAPIFixture(t, d)
			srv := httptest.NewServer(f.env.Server.Echo)
			defer srv.Close()
			httpc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
			// One token per client (the API is rate-limited per token), each
			// used once first, so that the race is only about bookings.
			tokens := make([]string, clients)
			for i := range tokens {
				c := *f.adaAPI
				c.Token = f.env.Token(f.ada)
				if res := c.Get("/api/v1/me"); res.Code != http.StatusOK {
					t.Fatalf("me: %d", res.Code)
				}
				tokens[i] = c.Token
			}
			gpus := []int64{f.gpus[0].ID, f.gpus[1].ID}
			start := make(chan struct{})
			statuses := make([]int, clients)
			bodies := make([]string, clients)
			var wg sync.WaitGroup
			for i := range clients {
				body, _ := json.Marshal(map[string]any{"gpu_ids": gpus, "note": fmt.Sprint("client ", i),
					"starts_at": hoursAfter(1).Add(time.Duration(i) * time.Minute).Format(time.RFC3339),
					"ends_at":   hoursAfter(3).Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
				wg.Add(1)
				go func() {
					defer wg.Done()
					req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/bookings", bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+tokens[i])
					req.Header.Set("Content-Type", "application/json")
					<-start
					res, err := httpc.Do(req)
					if err != nil {
						bodies[i] = err.Error()
						return
					}
					defer res.Body.Close()
					b, _ := io.ReadAll(res.Body)
					statuses[i], bodies[i] = res.StatusCode, string(b)
				}()
			}
			close(start)
			wg.Wait()
			count := map[int]int{}
			for i, s := range statuses {
				count[s]++
				if s != http.StatusCreated && s != http.StatusConflict {
					t.Errorf("client %d: status %d: %.300s", i, s, bodies[i])
				}
			}
			if count[http.StatusCreated] != 1 || count[http.StatusConflict] != clients-1 {
				t.Errorf("statuses = %v, want one 201 and %d 409", count, clients-1)
			}
			var n, links int64
			f.env.DB.Gorm.Table("bookings").Count(&n)
			f.env.DB.Gorm.Table("booking_gpus").Where("blocking").Count(&links)
			if n != 1 || links != 2 {
				t.Errorf("database holds %d bookings and %d blocking GPU rows, want 1 and 2", n, links)
			}
		})
	}
}
