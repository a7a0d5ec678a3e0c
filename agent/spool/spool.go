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
	Kind      string          `json:"kind"` // the endpoint path, e.g. models.AgentPathUsage
	CreatedAt time.Time       `json:"created_at"`
	Body      json.RawMessage `json:"body"`
}

// Limits bound the spool so that a long outage cannot fill the disk: entries
// older than MaxAge, and the oldest entries beyond MaxBytes, are dropped
// (and logged, because that is data loss the admin must know about).
type Limits struct {
	MaxAge   time.Duration
	MaxBytes int64
}

// DefaultLimits: 7 days, 512 MiB.
func DefaultLimits() Limits { return Limits{MaxAge: 7 * 24 * time.Hour, MaxBytes: 512 << 20} }

// Spool is a directory of entries named by zero-padded sequence number.
type Spool struct {
	dir string
	lim Limits
	now func() time.Time
	log *slog.Logger

	mu    sync.Mutex
	next  uint64
	files []fileInfo // sorted by seq
}

type fileInfo struct {
	seq  uint64
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
	s := &Spool{dir: dir, lim: lim, now: now, log: log, next: 1}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("agent: spool: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			_ = os.Remove(filepath.Join(dir, name))
			continue
		}
		if setAside(name) {
			s.pruneSetAside(e)
			continue
		}
		seq, err := strconv.ParseUint(strings.TrimSuffix(name, suffix), 10, 64)
		if err != nil || !strings.HasSuffix(name, suffix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		s.files = append(s.files, fileInfo{seq: seq, size: info.Size(), at: info.ModTime()})
		s.next = max(s.next, seq+1)
	}
	sort.Slice(s.files, func(i, j int) bool { return s.files[i].seq < s.files[j].seq })
	return s, nil
}

func (s *Spool) path(seq uint64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%020d%s", seq, suffix))
}

// Append marshals body and stores it durably as the newest entry.
func (s *Spool) Append(kind string, body any) (Entry, error) {
	return s.AppendSeq(kind, func(uint64) any { return body })
}

// AppendSeq is Append for a body that names its own sequence number (the
// batch IDs that both sides log).
func (s *Spool) AppendSeq(kind string, build func(seq uint64) any) (Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, err := json.Marshal(build(s.next))
	if err != nil {
		return Entry{}, fmt.Errorf("agent: spool: encode: %w", err)
	}
	e := Entry{Seq: s.next, Kind: kind, CreatedAt: s.now().UTC(), Body: raw}
	data, err := json.Marshal(e)
	if err != nil {
		return Entry{}, fmt.Errorf("agent: spool: encode: %w", err)
	}
	if err := atomicfile.Write(s.path(e.Seq), data, 0o600); err != nil {
		return Entry{}, fmt.Errorf("agent: spool: %w", err)
	}
	s.next++
	s.files = append(s.files, fileInfo{seq: e.Seq, size: int64(len(data)), at: e.CreatedAt})
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
		data, err := os.ReadFile(s.path(f.seq))
		var e Entry
		if err == nil {
			err = json.Unmarshal(data, &e)
		}
		if err == nil {
			return e, nil
		}
		s.log.Error("agent: spool: unreadable entry set aside", "seq", f.seq, "err", err)
		if err := os.Rename(s.path(f.seq), s.path(f.seq)+".bad"); err != nil {
			s.log.Error("agent: spool: set aside unreadable entry", "seq", f.seq, "err", err)
		}
		s.files = s.files[1:]
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
func (s *Spool) pruneSetAside(e os.DirEntry) {
	info, err := e.Info()
	if err != nil || s.lim.MaxAge <= 0 || s.now().Sub(info.ModTime()) <= s.lim.MaxAge {
		return
	}
	if err := os.Remove(filepath.Join(s.dir, e.Name())); err != nil {
		s.log.Warn("agent: spool: remove old set-aside entry", "file", e.Name(), "err", err)
		return
	}
	s.log.Info("agent: spool: removed set-aside entry past the age limit", "file", e.Name())
}

// Ack removes a delivered entry durably.
func (s *Spool) Ack(seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.Remove(s.path(seq)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("agent: spool: ack %d: %w", seq, err)
	}
	s.forget(seq)
	return atomicfile.SyncDir(s.dir)
}

// forget drops seq from the in-memory queue; s.mu must be held.
func (s *Spool) forget(seq uint64) {
	s.files = slices.DeleteFunc(s.files, func(f fileInfo) bool { return f.seq == seq })
}
