package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	tests := []struct {
		name  string
		write func(string, []byte, fs.FileMode) error
		data  string
		perm  fs.FileMode
	}{
		{"create private", Write, "one", 0o600},
		{"replace world-readable", Write, "two", 0o644},
		{"replace without fsync", Replace, "three", 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.write(path, []byte(tt.data), tt.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != tt.data {
				t.Errorf("content = %q, %v; want %q", got, err, tt.data)
			}
			st, _ := os.Stat(path)
			if st.Mode().Perm() != tt.perm {
				t.Errorf("mode = %v, want %v", st.Mode().Perm(), tt.perm)
			}
		})
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("dir has %d entries, want 1 (no temp files left)", len(ents))
	}
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Error("Write into a missing directory succeeded")
	}
}

// TestJSON: a missing file is "not found" without an error, a damaged one
// is ErrDamaged, and what WriteJSON wrote reads back.
func TestJSON(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	var got struct{ N int }
	if found, err := ReadJSON(path, &got); found || err != nil {
		t.Fatalf("missing file: found %v, err %v", found, err)
	}
	if err := WriteJSON(path, struct{ N int }{7}, 0o600); err != nil {
		t.Fatal(err)
	}
	if found, err := ReadJSON(path, &got); !found || err != nil || got.N != 7 {
		t.Fatalf("read back: found %v, err %v, got %+v", found, err, got)
	}
	if err := os.WriteFile(path, []byte("{torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	if found, err := ReadJSON(path, &got); !found || !errors.Is(err, ErrDamaged) {
		t.Fatalf("damaged file: found %v, err %v", found, err)
	}
}
