package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	v1 "github.com/gpubook/gpubook/models/api"
)

// userZone is where the client shows times: the zone the user chose in
// the portal (/api/v1/me), else the cluster's (/api/v1/limits), else the
// machine's.
func (a *apiClient) userZone(ctx context.Context) (*time.Location, error) {
	var me v1.Me
	if err := a.call(ctx, http.MethodGet, v1.PathMe, nil, nil, &me); err != nil {
		return nil, err
	}
	name := me.TimeZone
	if name == "" {
		var lim v1.Limits
		if err := a.call(ctx, http.MethodGet, v1.PathLimits, nil, nil, &lim); err != nil {
			return nil, err
		}
		name = lim.TimeZone
	}
	a.zone = time.Local
	if loc, err := time.LoadLocation(name); err == nil && name != "" {
		a.zone = loc
	}
	return a.zone, nil
}

// parseSpan reads a length: a Go duration (90m, 4h, 1h30m) or whole days (2d).
func parseSpan(flag, s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--%s %q: give a length such as 90m, 4h or 2d", flag, s)
	}
	return d, nil
}

// parseAt reads a start time in the user's zone: RFC 3339, "2006-01-02
// 15:04", or "15:04" (today, or tomorrow once that time has passed).
func parseAt(s string, zone *time.Location, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, zone); err == nil {
			return t, nil
		}
	}
	if t, err := time.ParseInLocation("15:04", s, zone); err == nil {
		n := now.In(zone)
		at := time.Date(n.Year(), n.Month(), n.Day(), t.Hour(), t.Minute(), 0, 0, zone)
		if at.Before(n) {
			at = at.AddDate(0, 0, 1)
		}
		return at, nil
	}
	return time.Time{}, fmt.Errorf("--at %q: give 15:04, 2006-01-02 15:04 (your zone) or RFC 3339", s)
}

// showTime writes t in zone, with the zone's abbreviation.
func showTime(t time.Time, zone *time.Location) string {
	return t.In(zone).Format("Mon 2006-01-02 15:04 MST")
}

// showSpan writes a length for people: 3h20m, 2d4h, 45m.
func showSpan(d time.Duration) string {
	m := int64(d.Round(time.Minute) / time.Minute)
	days, hours, mins := m/1440, m%1440/60, m%60
	var b strings.Builder
	if days > 0 {
		fmt.Fprintf(&b, "%dd", days)
	}
	if hours > 0 {
		fmt.Fprintf(&b, "%dh", hours)
	}
	if mins > 0 || b.Len() == 0 {
		fmt.Fprintf(&b, "%dm", mins)
	}
	return b.String()
}

// gpuCount is "1 GPU" or "n GPUs", as the portal's English pages say it.
func gpuCount(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}
