package models

import (
	"slices"
	"strings"
)

// Where a user's Unix login comes from, in order of precedence: the IdP's
// claim at each sign-in, an admin, else the email's local part (assumed).
const (
	UnixSourceAssumed = ""
	UnixSourceAdmin   = "admin"
	UnixSourceSSO     = "sso"
)

// MaxUnixExtra bounds the extra names of one user (shared or old accounts).
const MaxUnixExtra = 16

// UnixLogin is the login name the user has on the GPU nodes: the one set by
// the IdP or an admin, else the email's local part.
func (u *User) UnixLogin() string {
	if u.Unix != "" {
		return u.Unix
	}
	return UnixName(u.Email)
}

// UnixAssumed reports whether nobody has told gpubook the user's login, so
// that the pages can say it is only a guess.
func (u *User) UnixAssumed() bool { return u.Unix == "" }

// UnixIdentity is a change of a user's Unix login: the primary name (empty
// for "back to assumed"), the extra names, and who set it.
type UnixIdentity struct {
	Name   string
	Extra  []string
	Source string
}

// ParseUnixNames splits a list typed as "a, b c" into names, dropping
// empties; validation comes after.
func ParseUnixNames(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
}

// Validate checks every name and drops repeats (and an extra equal to the
// primary), so that what is stored is what the pages show.
func (x *UnixIdentity) Validate() error { return x.ValidateKeeping(nil) }

// ValidateKeeping is Validate that lets through the names in kept, which
// the user already has: a name stored before ValidUnixName tightened must
// not lock its owner out of signing in when the IdP's claim changes their
// primary login and their extras are carried over. Pages mark such names
// (UnsafeUnixNames) for an admin to replace.
func (x *UnixIdentity) ValidateKeeping(kept []string) error {
	fe := FieldErrors{}
	x.Name = strings.TrimSpace(x.Name)
	if x.Name != "" && !ValidUnixName(x.Name) && !slices.Contains(kept, x.Name) {
		fe.Add("unix", M("err.unix_name_invalid", "Name", x.Name))
	}
	if x.Name == "" && len(x.Extra) > 0 {
		fe.Add("unix", M("err.unix_extra_without_primary"))
	}
	if x.Source != UnixSourceAdmin && x.Source != UnixSourceSSO && !(x.Source == UnixSourceAssumed && x.Name == "") {
		fe.Add("unix", M("err.invalid"))
	}
	seen := map[string]bool{x.Name: true}
	extra := x.Extra[:0:0]
	for _, n := range x.Extra {
		n = strings.TrimSpace(n)
		switch {
		case n == "" || seen[n]:
			continue
		case !ValidUnixName(n) && !slices.Contains(kept, n):
			fe.Add("unix_extra", M("err.unix_name_invalid", "Name", n))
		}
		seen[n] = true
		extra = append(extra, n)
	}
	if len(extra) > MaxUnixExtra {
		fe.Add("unix_extra", M("err.unix_extra_too_many", "Max", MaxUnixExtra))
	}
	x.Extra = extra
	return fe.Err()
}

// Names lists the primary name and the extras: every name the user owns.
func (x UnixIdentity) Names() []string {
	if x.Name == "" {
		return nil
	}
	return append([]string{x.Name}, x.Extra...)
}

// ErrUnixNameTaken refuses a name that belongs to another user: one login
// is one person, or bookings and usage would reach the wrong one.
func ErrUnixNameTaken(name string) *Error {
	return NewError(ECONFLICT, M("err.unix_name_taken", "Name", name))
}

// ErrUnixNameAssumed refuses a name that gpubook assumes for another user
// (the local part of their email, who has no login set): their bookings
// reach the nodes under it, and taking it would take those. Only an admin
// moves it, by setting that user's real login first.
func ErrUnixNameAssumed(name, email string) *Error {
	return NewError(ECONFLICT, M("err.unix_name_assumed", "Name", name, "Email", email))
}
