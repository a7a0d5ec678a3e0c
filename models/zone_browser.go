package models

import (
	"strings"
	"time"
)

// BrowserZone is the zone a browser reports (Intl's resolvedOptions, in a
// cookie), or "" when it is no zone this server knows. The name is held
// to the characters of IANA names before the zone database reads it, so
// that a forged cookie cannot name a file.
func BrowserZone(s string) string {
	if s == "" || len(s) > 64 || strings.Contains(s, "..") || strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/_+-") != "" {
		return ""
	}
	if _, err := time.LoadLocation(s); err != nil || s == "Local" {
		return ""
	}
	return s
}
