package models

import "strings"

// MaxUnixName is the longest login name useradd accepts by default.
const MaxUnixName = 32

// ValidUnixName reports whether s may be set as someone's login on the
// GPU nodes. It is Debian's adduser NAME_REGEX (^[a-z][-a-z0-9_]*$, which
// useradd on RHEL and SSSD's LDAP and AD logins also keep to), with dots
// allowed between the parts (firstname.lastname is how most directories
// name people), 1 to MaxUnixName characters, and never a system account
// (SystemLogin): a booking must not open GPUs to root's or a daemon's
// processes, and a claim must not name them to take their use.
func ValidUnixName(s string) bool {
	if s == "" || len(s) > MaxUnixName || s[0] < 'a' || s[0] > 'z' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return !SystemLogin(s)
}

// systemLogins are accounts that distributions and common services create
// below UID 1000 (Debian's base-passwd, then daemons a GPU server runs):
// nobody's person. Compared in lower case.
var systemLogins = map[string]bool{
	// Debian base-passwd, and RHEL's additions.
	"root": true, "daemon": true, "bin": true, "sys": true, "sync": true, "games": true, "man": true, "lp": true,
	"mail": true, "news": true, "uucp": true, "proxy": true, "www-data": true, "backup": true, "list": true,
	"irc": true, "gnats": true, "nobody": true, "nogroup": true, "nfsnobody": true, "adm": true, "halt": true,
	"shutdown": true, "operator": true, "ftp": true, "gopher": true,
	// Services of a typical GPU server and the portal's host.
	"messagebus": true, "sshd": true, "postgres": true, "mysql": true, "redis": true, "syslog": true, "uuidd": true,
	"tcpdump": true, "tss": true, "polkitd": true, "dnsmasq": true, "avahi": true, "chrony": true, "ntp": true,
	"statd": true, "rpc": true, "rpcuser": true, "dbus": true, "usbmux": true, "rtkit": true, "landscape": true,
	"pollinate": true, "lxd": true, "dhcpcd": true, "fwupd-refresh": true, "nvidia-persistenced": true,
	"docker": true, "dockremap": true, "nginx": true, "apache": true, "httpd": true, "postfix": true,
	"dovecot": true, "named": true, "bind": true, "unbound": true, "openldap": true, "ldap": true, "sssd": true,
	"nscd": true, "munge": true, "slurm": true, "prometheus": true, "grafana": true, "node_exporter": true,
}

// systemLoginPrefixes start families of system accounts (systemd-network,
// systemd-resolve, ...).
var systemLoginPrefixes = []string{"systemd-"}

// SystemLogin reports whether s names a system account, ignoring case:
// "ROOT" and "Root" are refused with "root", as a directory that folds case
// (AD through SSSD) would map them to it.
func SystemLogin(s string) bool {
	s = strings.ToLower(s)
	if systemLogins[s] {
		return true
	}
	for _, p := range systemLoginPrefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// UnsafeUnixNames lists the names of x, and the assumed login of u when
// it has none, that ValidUnixName refuses today: names stored before the
// rule tightened, or an email local part that could never be a login.
// Pages show them, marked, so that an admin sets proper ones.
func UnsafeUnixNames(u *User, extra []string) []string {
	var out []string
	if !ValidUnixName(u.UnixLogin()) {
		out = append(out, u.UnixLogin())
	}
	for _, n := range extra {
		if !ValidUnixName(n) {
			out = append(out, n)
		}
	}
	return out
}
