package spool

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// RetiredSuffix names where Retire moves a spool: DIR.previous.
const RetiredSuffix = ".previous"

// Retire moves the spool in dir aside to dir+RetiredSuffix (replacing an
// older one), for a node enrolled again with another portal or as another
// node. Its batch sequence, drop counters and set-aside entries belong to
// the old identity: carried over, they would show on the new portal's node
// page as this node's losses, and its undelivered entries would go to a
// portal that knows neither the node nor its GPUs. They are kept for
// inspection, not sent. It returns how many undelivered entries moved; a
// missing spool is not an error.
func Retire(dir string) (int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("agent: spool: retire: %w", err)
	}
	n := 0
	for _, e := range ents {
		if _, _, ok := parseName(e.Name()); ok && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	old := dir + RetiredSuffix
	if err := os.RemoveAll(old); err != nil {
		return 0, fmt.Errorf("agent: spool: retire: %w", err)
	}
	if err := os.Rename(dir, old); err != nil {
		return 0, fmt.Errorf("agent: spool: retire: %w", err)
	}
	return n, nil
}
