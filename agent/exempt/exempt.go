// Package exempt decides which users the agent leaves alone: root, system
// accounts (gdm, Xorg's user), and whatever the admin lists. The login
// environment and violation detection share it, so a user is exempt from
// both or from neither.
package exempt

// Rules lists who is exempt.
type Rules struct {
	Users  []string
	Groups []string
	// SystemUIDMax: every UID at or below it is a system account and exempt
	// (999 on Debian). A negative value exempts no UID by number.
	SystemUIDMax int
}

// Default is root plus every system account (UID < 1000).
func Default() Rules { return Rules{Users: []string{"root"}, SystemUIDMax: 999} }

// Exempt reports whether user (with uid; pass -1 when unknown) is exempt.
// groups is called only when group rules exist, because looking groups up
// can be slow (NSS, LDAP).
//
// Root (UID 0) is exempt whatever the rules say: no setting may hide the
// GPUs from the administrator or point enforcement at system processes.
func (r Rules) Exempt(user string, uid int, groups func(user string) []string) bool {
	if uid == 0 || (uid < 0 && user == "root") {
		return true
	}
	if uid >= 0 && uid <= r.SystemUIDMax {
		return true
	}
	for _, u := range r.Users {
		if u == user {
			return true
		}
	}
	if len(r.Groups) == 0 || groups == nil {
		return false
	}
	for _, g := range groups(user) {
		for _, eg := range r.Groups {
			if g == eg {
				return true
			}
		}
	}
	return false
}
