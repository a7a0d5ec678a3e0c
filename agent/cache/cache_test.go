package cache_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/models/wire"
)

const uuid = "GPU-8c3e7a3b-4d6f-4b9c-9a51-0e6c2d1f0a11"

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "schedule.json")
	at := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	in := cache.File{FetchedAt: at, ETag: `"v1"`, GPUs: []wire.GPU{{UUID: uuid, Index: 3, Model: "A100", MemoryMiB: 40960}},
		Schedule: wire.Schedule{Node: "n1", Bookings: []wire.Booking{{ID: 1, User: "alice", Email: "alice@example.org",
			GPUUUIDs: []string{uuid}, StartsAt: at, EndsAt: at.Add(time.Hour), Kind: wire.KindStandard}}}}
	if err := cache.Write(path, in); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Mode().Perm(), fs.FileMode(0o644); got != want {
		t.Errorf("mode = %v, want %v (every user's login reads it)", got, want)
	}
	got, err := cache.Read(context.Background(), path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b := got.Schedule.Bookings[0]
	if got.Version != cache.Version || got.ETag != `"v1"` || !got.FetchedAt.Equal(at) || got.GPUs[0].Index != 3 ||
		b.User != "alice" || b.Email != "" || b.GPUUUIDs[0] != uuid || !b.EndsAt.Equal(at.Add(time.Hour)) {
		t.Errorf("read back %+v", got)
	}
	if in.Schedule.Bookings[0].Email == "" {
		t.Error("Write modified the caller's bookings")
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*"))
	if len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
}

func TestReadFailures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		path string
	}{
		{"missing", filepath.Join(dir, "nope.json")},
		{"empty", write("empty.json", "")},
		{"corrupt", write("corrupt.json", `{"version":1,"schedule":{"bookings":[{"id":`)},
		{"other version", write("v9.json", `{"version":9}`)},
		{"directory", dir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := cache.Read(context.Background(), tt.path, time.Second); err == nil {
				t.Error("Read succeeded, want error")
			}
		})
	}
}

// TestReadHungDisk uses a FIFO with no writer: open(2) blocks forever, like
// a read on a dead NFS server. Read must still return within its budget.
func TestReadHungDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	start := time.Now()
	_, err := cache.Read(context.Background(), path, 100*time.Millisecond)
	if !errors.Is(err, cache.ErrTimeout) {
		t.Errorf("err = %v, want ErrTimeout", err)
	}
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Errorf("took %v, want about 100ms", el)
	}
	// unblock the abandoned reader so the test leaves no goroutine stuck
	if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}
