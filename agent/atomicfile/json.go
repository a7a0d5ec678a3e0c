package atomicfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrDamaged is ReadJSON's answer for a file that is there but does not
// decode: each caller decides whether that stops it or only resets state.
var ErrDamaged = errors.New("damaged file")

// WriteJSON is Write of v encoded as JSON: the agent's small state files
// (watermark, minute checkpoint, grace periods, spool counters).
func WriteJSON(path string, v any, perm os.FileMode) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("agent: atomicfile: %s: %w", path, err)
	}
	return Write(path, data, perm)
}

// ReadJSON decodes path into v. found is false, with no error, when the
// file does not exist (nothing saved yet); a file that does not decode is
// an error wrapping ErrDamaged.
func ReadJSON(path string, v any) (found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("agent: atomicfile: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return true, fmt.Errorf("%w: %s: %v", ErrDamaged, path, err)
	}
	return true, nil
}
