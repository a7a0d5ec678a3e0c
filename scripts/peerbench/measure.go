package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// perOp runs op one call after another for d (at most n calls) and
// returns the mean time of one call.
func perOp(d time.Duration, n int, op func() error) (time.Duration, error) {
	start := time.Now()
	done := 0
	for done < n && time.Since(start) < d {
		if err := op(); err != nil {
			return 0, err
		}
		done++
	}
	return time.Since(start) / time.Duration(max(done, 1)), nil
}

// get reads url with hc and fails on anything but 200 reached without a
// redirect to another path (a redirect to /login means signed out).
func get(ctx context.Context, hc *http.Client, url string, header http.Header) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK || res.Request.URL.Path != req.URL.Path {
		return nil, fmt.Errorf("GET %s: %d at %s", url, res.StatusCode, res.Request.URL.Path)
	}
	return body, nil
}

// call sends one API request with the token and decodes the answer's id.
func call(ctx context.Context, hc *http.Client, method, url, token, body string, want int) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	if res.StatusCode != want {
		return 0, fmt.Errorf("%s %s: %d %s", method, url, res.StatusCode, raw)
	}
	var v struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(raw, &v)
	return v.ID, nil
}

// bookNowBody asks for gpu from now (whole seconds) for an hour.
func bookNowBody(gpu int64) string {
	now := time.Now().UTC().Truncate(time.Second)
	return fmt.Sprintf(`{"gpu_ids":[%d],"starts_at":"%s","ends_at":"%s"}`, gpu, now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
}

// bookRelease books gpu now and releases it, on one kept-alive connection
// to the server at base (the portal, or the floor server of floors.go).
func bookRelease(ctx context.Context, hc *http.Client, base, token string, gpu int64) func() error {
	return func() error {
		id, err := call(ctx, hc, http.MethodPost, base+"/api/v1/bookings", token, bookNowBody(gpu), http.StatusCreated)
		if err != nil {
			return err
		}
		_, err = call(ctx, hc, http.MethodPost, fmt.Sprintf("%s/api/v1/bookings/%d/release", base, id), token, "", http.StatusOK)
		return err
	}
}

// gpubookShell does the same with two curl processes, as from a shell,
// against the portal at base (or the bare server of floors.go).
func gpubookShell(ctx context.Context, base, token string, gpu int64) func() error {
	auth := "Authorization: Bearer " + token
	return func() error {
		out, err := exec.CommandContext(ctx, "curl", "-sSf", "-H", auth, "-H", "Content-Type: application/json",
			"-d", bookNowBody(gpu), base+"/api/v1/bookings").Output()
		if err != nil {
			return fmt.Errorf("curl book: %w", err)
		}
		var v struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			return err
		}
		if err := exec.CommandContext(ctx, "curl", "-sSf", "-o", "/dev/null", "-X", "POST", "-H", auth,
			fmt.Sprintf("%s/api/v1/bookings/%d/release", base, v.ID)).Run(); err != nil {
			return fmt.Errorf("curl release: %w", err)
		}
		return nil
	}
}

// peerShell reserves one GPU and releases it with two canhazgpu processes.
func peerShell(ctx context.Context, pr *peer) func() error {
	return func() error {
		if out, err := pr.cli(ctx, "reserve", "--nonblock", "--gpus", "1", "--duration", "1h", "--short").CombinedOutput(); err != nil {
			return fmt.Errorf("canhazgpu reserve: %w: %s", err, out)
		}
		if out, err := pr.cli(ctx, "release").CombinedOutput(); err != nil || !bytes.Contains(out, []byte("Released 1")) {
			return fmt.Errorf("canhazgpu release: %v: %s", err, out)
		}
		return nil
	}
}

// peerBookRelease runs the keep-alive client for d and returns its mean
// time per pair, measured inside it (its process start is not counted).
func peerBookRelease(ctx context.Context, pr *peer, d time.Duration, n int) (time.Duration, error) {
	out, err := exec.CommandContext(ctx, pr.client, "-port", strconv.Itoa(pr.redisPort), "-d", d.String(), "-n", strconv.Itoa(n)).Output()
	if err != nil {
		return 0, fmt.Errorf("peerclient: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return 0, fmt.Errorf("peerclient said %q", out)
	}
	done, _ := strconv.Atoi(f[0])
	ns, _ := strconv.ParseInt(f[1], 10, 64)
	if done == 0 {
		return 0, fmt.Errorf("peerclient did nothing")
	}
	return time.Duration(ns / int64(done)), nil
}

// pages reads each url in turn: one view of a page.
func pages(ctx context.Context, hc *http.Client, header http.Header, urls ...string) func() error {
	return func() error {
		for _, u := range urls {
			if _, err := get(ctx, hc, u, header); err != nil {
				return err
			}
		}
		return nil
	}
}

// pair is one row's rounds: gpubook and canhazgpu measured back to back.
type pair struct{ g, c []time.Duration }

func (p pair) ratios() []float64 {
	r := make([]float64, len(p.g))
	for i := range p.g {
		r[i] = float64(p.g[i]) / float64(p.c[i])
	}
	slices.Sort(r)
	return r
}

func median[T int64 | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
