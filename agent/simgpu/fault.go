package simgpu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SampleErrorFile, in the simulation's folder (Config.Dir), makes every
// sample fail while it exists, as NVML's calls do when a GPU falls off the
// bus or the driver wedges: a demo or a test sees what a node that cannot
// measure looks like, on `gpubook-agent status` and on the portal. Its
// first line, if any, is the error; remove the file and sampling resumes.
const SampleErrorFile = "sample-error"

// sampleFault returns the error the next sample must fail with, nil when
// sampling should work.
func (s *Sim) sampleFault() error {
	data, err := os.ReadFile(filepath.Join(s.cfg.Dir, SampleErrorFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("agent: simgpu: %s: %w", SampleErrorFile, err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	if first = strings.TrimSpace(first); first == "" {
		first = "Unknown Error"
	}
	return fmt.Errorf("agent: simgpu: sampling fails on purpose (%s exists): nvml: %s", SampleErrorFile, first)
}
