package i18n

import (
	"io/fs"
	"strings"
	"testing"
)

// TestChineseAddressesTheReaderOneWay: the Chinese catalog speaks to the
// reader as 您 throughout, as its emails do; a page that mixed 您 and 你
// read as two products.
func TestChineseAddressesTheReaderOneWay(t *testing.T) {
	paths, err := fs.Glob(locales, "locales/*.zh-CN.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("catalogs: %v %v", paths, err)
	}
	for _, p := range paths {
		b, err := fs.ReadFile(locales, p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "你") {
				t.Errorf("%s:%d says 你, want 您: %s", p, i+1, strings.TrimSpace(line))
			}
		}
	}
}
