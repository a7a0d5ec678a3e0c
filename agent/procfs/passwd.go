package procfs

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"time"
)

// entry is one line of passwd (id = uid, gid = primary gid) or group (id = gid).
type entry struct {
	name    string
	id      int
	gid     int
	members []string
}

// table is a parsed passwd or group file with the stamp it was read at.
type table struct {
	mod    time.Time
	size   int64
	byID   map[int]entry
	byName map[string]entry
}

// refresh returns t, or a re-parsed table when the file changed. A missing
// or unreadable file gives an empty table: names then fall back to numbers.
func (t *table) refresh(path string) *table {
	st, err := os.Stat(path)
	if err != nil {
		return &table{byID: map[int]entry{}, byName: map[string]entry{}}
	}
	if t != nil && st.ModTime().Equal(t.mod) && st.Size() == t.size {
		return t
	}
	nt := &table{mod: st.ModTime(), size: st.Size(), byID: map[int]entry{}, byName: map[string]entry{}}
	f, err := os.Open(path)
	if err != nil {
		return nt
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		e, ok := parseLine(sc.Text())
		if !ok {
			continue
		}
		if _, dup := nt.byID[e.id]; !dup {
			nt.byID[e.id] = e
		}
		nt.byName[e.name] = e
	}
	return nt
}

// parseLine reads "name:x:id:gid:..." (passwd) or "name:x:gid:m1,m2" (group).
func parseLine(line string) (entry, bool) {
	if line == "" || strings.HasPrefix(line, "#") {
		return entry{}, false
	}
	f := strings.Split(line, ":")
	if len(f) < 3 {
		return entry{}, false
	}
	id, err := strconv.Atoi(f[2])
	if err != nil {
		return entry{}, false
	}
	e := entry{name: f[0], id: id, gid: -1}
	if len(f) >= 7 { // passwd
		if gid, err := strconv.Atoi(f[3]); err == nil {
			e.gid = gid
		}
	} else if len(f) == 4 && f[3] != "" { // group
		e.members = strings.Split(f[3], ",")
	}
	return e, true
}
