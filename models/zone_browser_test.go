package models

import (
	"testing"
	"time"
)

func TestBrowserZone(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Asia/Tokyo", "Asia/Tokyo"},
		{"UTC", "UTC"},
		{"Etc/GMT+5", "Etc/GMT+5"},
		{"America/Argentina/Buenos_Aires", "America/Argentina/Buenos_Aires"},
		{"", ""},
		{"Local", ""},
		{"Mars/Olympus", ""},
		{"../../etc/passwd", ""},
		{"Asia/Tokyo\x00", ""},
		{"Asia/Tokyo;x", ""},
	} {
		if got := BrowserZone(tc.in); got != tc.want {
			t.Errorf("BrowserZone(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A zone the user chose wins over the browser's, which wins over the
// cluster's.
func TestUserLocationBrowserZone(t *testing.T) {
	cluster, _ := time.LoadLocation("Asia/Shanghai")
	for _, tc := range []struct {
		name string
		u    *User
		want string
	}{
		{"no user", nil, "Asia/Shanghai"},
		{"nothing known", &User{}, "Asia/Shanghai"},
		{"browser", &User{BrowserZone: "Europe/Berlin"}, "Europe/Berlin"},
		{"chosen", &User{TimeZone: "Asia/Tokyo", BrowserZone: "Europe/Berlin"}, "Asia/Tokyo"},
		{"bad chosen, browser", &User{TimeZone: "Mars/Olympus", BrowserZone: "Europe/Berlin"}, "Europe/Berlin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.u.Location(cluster).String(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
