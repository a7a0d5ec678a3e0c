package procfs

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// TTYs returns the pseudo-terminals (/dev/pts/N) that processes of uid have
// as controlling terminal. Warnings to a user go there, like wall(1) does,
// without needing utmp.
func (r *Resolver) TTYs(uid int) []string {
	ents, err := os.ReadDir(r.Root)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if u, err := r.UID(pid); err != nil || u != uid {
			continue
		}
		if tty := ttyOf(filepath.Join(r.Root, e.Name(), "stat")); tty != "" {
			seen[tty] = true
		}
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ttyOf reads field 7 (tty_nr) of a stat file and maps the Unix98 pty majors
// (136–143) to /dev/pts/N. Other terminals (consoles) are left alone.
func ttyOf(statPath string) string {
	b, err := os.ReadFile(statPath)
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may contain spaces
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 5 {
		return ""
	}
	nr, err := strconv.Atoi(f[4])
	if err != nil || nr == 0 {
		return ""
	}
	major := (nr >> 8) & 0xfff
	minor := (nr & 0xff) | ((nr >> 12) & 0xfff00)
	if major < 136 || major > 143 {
		return ""
	}
	return "/dev/pts/" + strconv.Itoa((major-136)*256+minor)
}
