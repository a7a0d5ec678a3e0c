package models

import (
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"
)

// User is a person who books GPUs. Subject is the OIDC subject once the
// user has signed in through SSO; users made by hand have none yet.
type User struct {
	ID       int64
	Subject  string
	Email    string
	Name     string
	Language string // "en", "zh-CN" or "" for the browser's choice
	TimeZone string // IANA zone or "" for the cluster's
	// BrowserZone is the zone the user's browser reports (a cookie that
	// app.js sets), used while TimeZone is "": a new user's pages are in
	// their own zone from the first one. Never stored.
	BrowserZone string
	IsAdmin     bool
	// Unix is the login on the GPU nodes set by the IdP or an admin ("" when
	// assumed from the email, see UnixLogin); UnixSource says which.
	Unix       string
	UnixSource string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// DisabledAt is when an admin deactivated the account; nil: active.
	DisabledAt *time.Time
}

// Languages are the catalogs gpubook ships; the first is the fallback.
var Languages = []string{"en", "zh-CN"}

// NormalizeEmail folds an address (NFKC: fullwidth ａ is a), lower-cases
// and trims it, so that one person is one user and one look is one address.
func NormalizeEmail(s string) string { return strings.TrimSpace(strings.ToLower(foldEmail(s))) }

// ValidEmail reports whether a normalised address is one plain address
// ("a@b"), short enough for the column, free of control characters and
// not a look-alike of another (LookalikeEmail); forms, the CLI and SSO all
// hold an email to it.
func ValidEmail(email string) bool {
	if email == "" || len(email) > 254 || !utf8.ValidString(email) || strings.IndexFunc(email, isControl) >= 0 || LookalikeEmail(email) {
		return false
	}
	a, err := mail.ParseAddress(email)
	return err == nil && a.Address == email && strings.Contains(email, "@")
}

// Validate checks a user before it is written and normalises its email.
func (u *User) Validate() error {
	fe := FieldErrors{}
	u.Email = NormalizeEmail(u.Email)
	if u.Email == "" {
		fe.Add("email", M("err.email_required"))
	} else if !ValidEmail(u.Email) {
		fe.Add("email", M("err.email_invalid"))
	}
	fe.Check("sso_subject", &u.Subject, SubjectText)
	if fe.Check("name", &u.Name, NameText) && u.Name == "" {
		fe.Add("name", M("err.name_required"))
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

// Location returns the zone the user sees times in: the one they chose,
// else their browser's, else the cluster's.
func (u *User) Location(cluster *time.Location) *time.Location {
	if u == nil {
		return cluster
	}
	for _, z := range []string{u.TimeZone, u.BrowserZone} {
		if z == "" {
			continue
		}
		if loc, err := time.LoadLocation(z); err == nil {
			return loc
		}
	}
	return cluster
}
