// Package spool keeps undelivered reports on disk until the portal has
// acknowledged them. Each entry is one file, written atomically before any
// attempt to send it and removed only after the portal answered 2xx, so a
// crash at any point loses nothing; a resend after a crash between the ack
// and the removal is harmless because every record carries a stable key.
// Entries are delivered strictly in order (by sequence number).
package spool

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpubook/gpubook/agent/atomicfile"
)

// Entry is one spooled request body and where it goes.
type Entry struct {
	Seq       uint64          `json:"seq"`
	Kind      string          `json:"kind"` // the endpoint path, e.g. wire.PathUsage
	CreatedAt time.Time       `json:"created_at"`
	Body      json.RawMessage `json:"body"`
}

// Limits bound the spool so that a long outage cannot fill the disk: entries
// older than MaxAge, and entries beyond MaxBytes (usage first, because
// violations and idle reports are rarer and matter more), are dropped,
// logged and counted.
type Limits struct {
	MaxAge   time.Duration
	MaxBytes int64
}

// DefaultLimits: 7 days, 512 MiB.
func DefaultLimits() Limits { return Limits{MaxAge: 7 * 24 * time.Hour, MaxBytes: 512 << 20} }

// Spool is a directory of entries named by zero-padded sequence number and
// kind, plus a small state file (next sequence number, drop counters).
type Spool struct {
	dir string
	lim Limits
	now func() time.Time
	log *slog.Logger

	mu       sync.Mutex
	st       state
	files    []fileInfo // sorted by seq
	setAside int        // *.rejected and *.bad files present
}

type fileInfo struct {
	seq  uint64
	tag  string // last element of the kind ("usage"); "" when unknown
	name string
	size int64
	at   time.Time
}

const suffix = ".json"

// Open loads the spool in dir, creating it (mode 0700) if needed. Leftover
// temp files from a crash are removed: their entry was never acknowledged to
// the caller, which still holds the data and will append it again.
func Open(dir string, lim Limits, now func() time.Time, log *slog.Logger) (*Spool, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("agent: spool: %w", err)
	}
	s := &Spool{dir: dir, lim: lim, now: now, log: log}
	if err := s.loadState(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("agent: spool: %w", err)
	}
	for _, e := range ents {
		s.openEntry(e)
	}
	sort.Slice(s.files, func(i, j int) bool { return s.files[i].seq < s.files[j].seq })
	return s, nil
}

// openEntry files one directory entry found at Open.
func (s *Spool) openEntry(e os.DirEntry) {
	name := e.Name()
	switch {
	case strings.HasPrefix(name, "."):
		_ = os.Remove(filepath.Join(s.dir, name))
		return
	case setAside(name):
		if !s.pruneSetAside(e) {
			s.setAside++
		}
		return
	}
	seq, tag, ok := parseName(name)
	if !ok {
		return
	}
	info, err := e.Info()
	if err != nil {
		return
	}
	if tag == "" { // written by an older agent: the kind is only inside
		tag = s.readTag(name)
	}
	s.files = append(s.files, fileInfo{seq: seq, tag: tag, name: name, size: info.Size(), at: info.ModTime()})
	s.st.NextSeq = max(s.st.NextSeq, seq+1)
}

// parseName reads "SEQ.TAG.json" (and the older "SEQ.json").
func parseName(name string) (seq uint64, tag string, ok bool) {
	if !strings.HasSuffix(name, suffix) {
		return 0, "", false
	}
	num, tag, _ := strings.Cut(strings.TrimSuffix(name, suffix), ".")
	seq, err := strconv.ParseUint(num, 10, 64)
	return seq, tag, err == nil
}

func (s *Spool) readTag(name string) string {
	data, err := os.ReadFile(filepath.Join(s.dir, name))
	var e Entry
	if err != nil || json.Unmarshal(data, &e) != nil {
		return ""
	}
	return path.Base(e.Kind)
}

// Tag is the short name of a kind used in file names and counters:
// "usage" for wire.PathUsage.
func Tag(kind string) string { return path.Base(kind) }

func (s *Spool) path(f fileInfo) string { return filepath.Join(s.dir, f.name) }

// Append marshals body and stores it durably as the newest entry.
func (s *Spool) Append(kind string, body any) (Entry, error) {
	return s.AppendSeq(kind, func(uint64) any { return body })
}

// AppendSeq is Append for a body that names its own sequence number (the
// batch IDs that both sides log). Sequence numbers never repeat on a node:
// the next one is kept in the state file, also when the spool is empty.
func (s *Spool) AppendSeq(kind string, build func(seq uint64) any) (Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := max(s.st.NextSeq, 1)
	raw, err := json.Marshal(build(seq))
	if err != nil {
		return Entry{}, fmt.Errorf("agent: spool: encode: %w", err)
	}
	e := Entry{Seq: seq, Kind: kind, CreatedAt: s.now().UTC(), Body: raw}
	data, err := json.Marshal(e)
	if err != nil {
		return Entry{}, fmt.Errorf("agent: spool: encode: %w", err)
	}
	f := fileInfo{seq: seq, tag: Tag(kind), name: fmt.Sprintf("%020d.%s%s", seq, Tag(kind), suffix), size: int64(len(data)), at: e.CreatedAt}
	s.st.NextSeq = seq + 1
	if err := s.saveState(); err != nil { // before the entry: a seq is never reused
		return Entry{}, err
	}
	if err := atomicfile.Write(s.path(f), data, 0o600); err != nil {
		return Entry{}, fmt.Errorf("agent: spool: %w", err)
	}
	s.files = append(s.files, f)
	s.pruneLocked()
	return e, nil
}

// ErrEmpty is returned by Oldest when nothing waits.
var ErrEmpty = errors.New("agent: spool: empty")

// Oldest returns the entry to deliver next. An unreadable entry (disk
// damage) is set aside as .bad so it cannot block the spool forever.
func (s *Spool) Oldest() (Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.files) > 0 {
		f := s.files[0]
		data, err := os.ReadFile(s.path(f))
		var e Entry
		if err == nil {
			err = json.Unmarshal(data, &e)
		}
		if err == nil {
			return e, nil
		}
		s.log.Error("agent: spool: unreadable entry set aside", "seq", f.seq, "err", err)
		s.setAsideLocked(f, ".bad", "unreadable: "+err.Error())
	}
	return Entry{}, ErrEmpty
}

// setAside reports whether name is an entry set aside as undeliverable
// (.rejected by the portal, .bad when unreadable): kept for the admin to
// look at, never sent again.
func setAside(name string) bool {
	return strings.HasSuffix(name, suffix+".rejected") || strings.HasSuffix(name, suffix+".bad")
}

// pruneSetAside removes a set-aside entry once it is older than MaxAge, the
// age at which a queued entry is dropped too, so that they cannot pile up.
// It reports whether the file was removed.
func (s *Spool) pruneSetAside(e os.DirEntry) bool {
	info, err := e.Info()
	if err != nil || s.lim.MaxAge <= 0 || s.now().Sub(info.ModTime()) <= s.lim.MaxAge {
		return false
	}
	if err := os.Remove(filepath.Join(s.dir, e.Name())); err != nil {
		s.log.Warn("agent: spool: remove old set-aside entry", "file", e.Name(), "err", err)
		return false
	}
	s.log.Info("agent: spool: removed set-aside entry past the age limit", "file", e.Name())
	return true
}

// Ack removes a delivered entry durably.
func (s *Spool) Ack(seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.files, func(f fileInfo) bool { return f.seq == seq })
	if i < 0 {
		return nil
	}
	if err := os.Remove(s.path(s.files[i])); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("agent: spool: ack %d: %w", seq, err)
	}
	s.files = slices.Delete(s.files, i, i+1)
	return atomicfile.SyncDir(s.dir)
}
