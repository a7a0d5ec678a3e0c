package models

import (
	"net/mail"
	"strings"
	"time"
)

// User is a person who books GPUs. Subject is the OIDC subject once the
// user has signed in through SSO; users made by hand have none yet.
type User struct {
	ID        int64
	Subject   string
	Email     string
	Name      string
	Language  string // "en", "zh-CN" or "" for the browser's choice
	TimeZone  string // IANA zone or "" for the cluster's
	IsAdmin   bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Languages are the catalogs gpubook ships; the first is the fallback.
var Languages = []string{"en", "zh-CN"}

// NormalizeEmail lower-cases and trims an address so that one person is one user.
func NormalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// Validate checks a user before it is written and normalises its email.
func (u *User) Validate() error {
	fe := FieldErrors{}
	u.Email = NormalizeEmail(u.Email)
	u.Name = strings.TrimSpace(u.Name)
	if u.Email == "" {
		fe.Add("email", M("err.email_required"))
	} else if a, err := mail.ParseAddress(u.Email); err != nil || a.Address != u.Email || len(u.Email) > 254 {
		fe.Add("email", M("err.email_invalid"))
	}
	if u.Name == "" {
		fe.Add("name", M("err.name_required"))
	} else if len(u.Name) > 200 {
		fe.Add("name", M("err.too_long", "Max", 200))
	}
	if u.Language != "" && !ValidLanguage(u.Language) {
		fe.Add("language", M("err.language_unsupported"))
	}
	if u.TimeZone != "" {
		if _, err := time.LoadLocation(u.TimeZone); err != nil {
			fe.Add("time_zone", M("err.time_zone_unknown"))
		}
	}
	return fe.Err()
}

// ValidLanguage reports whether gpubook ships a catalog for lang.
func ValidLanguage(lang string) bool {
	for _, l := range Languages {
		if l == lang {
			return true
		}
	}
	return false
}

// Location returns the zone the user sees times in: their own, else the cluster's.
func (u *User) Location(cluster *time.Location) *time.Location {
	if u != nil && u.TimeZone != "" {
		if loc, err := time.LoadLocation(u.TimeZone); err == nil {
			return loc
		}
	}
	return cluster
}
