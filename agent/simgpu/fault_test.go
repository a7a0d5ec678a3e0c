package simgpu

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSampleErrorFile: while the file exists every sample fails with its
// first line; once it is gone sampling works again.
func TestSampleErrorFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sim")
	sim, err := New(Config{Node: "n1", GPUs: 2, Dir: dir, CachePath: filepath.Join(t.TempDir(), "schedule.json"),
		Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := sim.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		file    *string // nil: no file
		wantErr string  // "" : the sample works
	}{
		{"no file", nil, ""},
		{"with a message", faultText("GPU is lost\nsecond line\n"), "sampling fails on purpose (sample-error exists): nvml: GPU is lost"},
		{"empty", faultText(""), "sampling fails on purpose (sample-error exists): nvml: Unknown Error"},
		{"removed again", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, SampleErrorFile)
			if tt.file == nil {
				_ = os.Remove(path)
			} else if err := os.WriteFile(path, []byte(*tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := src.Sample(context.Background())
			switch {
			case tt.wantErr == "" && (err != nil || len(got) != 2):
				t.Errorf("sample = %d GPUs, %v; want 2 and no error", len(got), err)
			case tt.wantErr != "" && (err == nil || !strings.HasSuffix(err.Error(), tt.wantErr) || len(got) != 0):
				t.Errorf("sample = %d GPUs, %v; want none and an error ending %q", len(got), err, tt.wantErr)
			}
		})
	}
}

func faultText(s string) *string { return &s }
