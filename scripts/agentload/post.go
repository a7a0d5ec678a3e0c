package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// result is one kind's run: the answers by status, its wall time and the
// highest RSS sampled while it ran.
type result struct {
	answers string
	wall    time.Duration
	peak    int64
}

// post sends every body to path, o.clients at a time, sampling the
// server's RSS every 2 ms.
func post(ctx context.Context, s *server, cred, path string, bodies [][]byte, o options) result {
	stop := make(chan struct{})
	peak := make(chan int64)
	go func() {
		var top int64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- max(top, s.rssKiB())
				return
			case <-tick.C:
				top = max(top, s.rssKiB())
			}
		}
	}()
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	start := time.Now()
	for c := range o.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < len(bodies); i += o.clients {
				code := send(ctx, s, cred, path, bodies[i])
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	close(stop)
	return result{answers: summarise(codes), wall: wall, peak: <-peak}
}

func send(ctx context.Context, s *server, cred, path string, body []byte) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Base+path, bytes.NewReader(body))
	if err != nil {
		return -1
	}
	req.Header.Set("Authorization", "Bearer "+cred)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func summarise(codes map[int]int) string {
	var parts []string
	for c, n := range codes {
		parts = append(parts, fmt.Sprintf("%d× %d", n, c))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
