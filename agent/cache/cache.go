// Package cache keeps the node's schedule on disk so that logins and
// enforcement keep working while the portal is unreachable. The daemon
// (root) writes it atomically; `gpubook-agent env` (any user) reads it under
// a hard time budget so that a hung disk can never hang a login.
package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gpubook/gpubook/agent/atomicfile"
	"github.com/gpubook/gpubook/models/wire"
)

// Version is the cache file format; a reader refuses other versions rather
// than guess.
const Version = 1

// ErrTimeout is returned when the cache could not be read within the budget.
var ErrTimeout = errors.New("agent: cache: read timed out")

// File is the cache content: the schedule, its ETag, when it was fetched,
// and the node's GPUs (so that a hint can say "GPU 3" instead of a UUID).
type File struct {
	Version   int           `json:"version"`
	FetchedAt time.Time     `json:"fetched_at"`
	ETag      string        `json:"etag"`
	GPUs      []wire.GPU    `json:"gpus"`
	Schedule  wire.Schedule `json:"schedule"`
}

// Write stores f at path, world-readable (logins of every user read it).
// E-mail addresses are dropped: nothing on the node needs them and the file
// is readable by everyone.
func Write(path string, f File) error {
	f.Version = Version
	bookings := make([]wire.Booking, len(f.Schedule.Bookings))
	for i, b := range f.Schedule.Bookings {
		b.Email = ""
		bookings[i] = b
	}
	f.Schedule.Bookings = bookings
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("agent: cache: encode: %w", err)
	}
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("agent: cache: %w", err)
	}
	return nil
}

// Read loads the cache, giving up after budget. The read runs in its own
// goroutine because a read(2) on a hung NFS or a dying disk cannot be
// cancelled; on timeout that goroutine is abandoned (the process is short-lived).
func Read(ctx context.Context, path string, budget time.Duration) (File, error) {
	type result struct {
		f   File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		f, err := readNow(path)
		ch <- result{f, err}
	}()
	t := time.NewTimer(budget)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-t.C:
		return File{}, ErrTimeout
	case <-ctx.Done():
		return File{}, fmt.Errorf("agent: cache: %w", ctx.Err())
	}
}

// maxSize bounds what a reader accepts; 1,000 bookings take about 200 KiB.
const maxSize = 16 << 20

func readNow(path string) (File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return File{}, fmt.Errorf("agent: cache: %w", err)
	}
	defer fh.Close()
	var f File
	dec := json.NewDecoder(&limitedReader{r: fh, n: maxSize})
	if err := dec.Decode(&f); err != nil {
		return File{}, fmt.Errorf("agent: cache: decode %s: %w", path, err)
	}
	if f.Version != Version {
		return File{}, fmt.Errorf("agent: cache: %s has version %d, want %d", path, f.Version, Version)
	}
	return f, nil
}

// limitedReader is io.LimitReader that reports overflow instead of a silent EOF.
type limitedReader struct {
	r interface{ Read([]byte) (int, error) }
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("agent: cache: file too large")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}
