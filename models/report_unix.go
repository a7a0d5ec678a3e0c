package models

import (
	"slices"
	"sort"
)

// UnixMinutes is the use of one Unix account that maps to no gpubook user
// (no explicit login and no user whose assumed login it is): GPU-minutes in
// which its processes ran on a GPU, booked or not, at any utilisation.
// Nobody's figures count it, so the cluster page and the admins' weekly
// email name it, and an admin maps it to its user from there.
type UnixMinutes struct {
	Name    string
	Minutes int64
}

// Hours is the minutes as GPU-hours.
func (u UnixMinutes) Hours() float64 { return float64(u.Minutes) / 60 }

// SortUnixMinutes orders the list most minutes first, then by name, so
// that every surface lists the accounts in the same order.
func SortUnixMinutes(list []UnixMinutes) {
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].Minutes != list[j].Minutes {
			return list[i].Minutes > list[j].Minutes
		}
		return list[i].Name < list[j].Name
	})
}

// WithUnixExtra is x with name added to its extra names: what an admin's
// "map this account to user u" sets. A user whose login is only assumed
// gets it made explicit first (extra names need a primary one), so that
// their own login keeps working; a login set by SSO stays SSO's (the next
// sign-in keeps the extras), any other becomes the admin's.
func WithUnixExtra(x UnixIdentity, u User, name string) UnixIdentity {
	out := UnixIdentity{Name: x.Name, Source: x.Source, Extra: slices.Clone(x.Extra)}
	if out.Name == "" {
		out.Name = u.UnixLogin()
	}
	if out.Source != UnixSourceSSO {
		out.Source = UnixSourceAdmin
	}
	if name != out.Name && !slices.Contains(out.Extra, name) {
		out.Extra = append(out.Extra, name)
	}
	return out
}

// UnmappedHours is the GPU-hours of all the accounts in list together.
func UnmappedHours(list []UnixMinutes) float64 {
	var m int64
	for _, u := range list {
		m += u.Minutes
	}
	return float64(m) / 60
}
