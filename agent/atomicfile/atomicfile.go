// Package atomicfile writes files so that a reader or a crash sees either
// the old content or the new one, never a torn mix. The schedule cache, the
// spool and the credential all depend on that.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data: temp file in the same directory, fsync,
// chmod, rename, fsync of the directory (so the rename survives a power cut).
func Write(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, true)
}

// Replace is Write without the two fsyncs: readers still never see a torn
// file, but a power cut may bring back the previous content. For files
// rewritten every few seconds whose loss costs nothing (the daemon's
// status), where two fsyncs per write would only stall the writer.
func Replace(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, false)
}

func write(path string, data []byte, perm os.FileMode, durable bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("agent: atomicfile: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("agent: atomicfile: write %s: %w", tmp, err)
	}
	if err := f.Chmod(perm); err != nil {
		_ = f.Close()
		return fmt.Errorf("agent: atomicfile: chmod %s: %w", tmp, err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			_ = f.Close()
			return fmt.Errorf("agent: atomicfile: fsync %s: %w", tmp, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("agent: atomicfile: close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("agent: atomicfile: rename: %w", err)
	}
	ok = true
	if !durable {
		return nil
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory so that renames and removals in it are durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("agent: atomicfile: open dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("agent: atomicfile: fsync dir %s: %w", dir, err)
	}
	return nil
}
