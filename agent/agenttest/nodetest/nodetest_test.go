package nodetest

import "testing"

func TestLocked(t *testing.T) {
	for status, want := range map[string]bool{
		"node n1\nenforce: lock v1 (v1 refuses opens without counting them)\n":                   true,
		"node n1\nenforce: lock v2\n":                                                            true,
		"node n1\nenforce: NOT LOCKED: detect (cannot lock: cgroup v1: read-only file system)\n": true,
		"node n1\nenforce: NOT LOCKED: lock v1 (guarding nothing: no GPU listed yet)\n":          false,
		"node n1\nenforce: detect\n":                                                             false,
		"":                                                                                       false,
	} {
		if got := Locked(status); got != want {
			t.Errorf("Locked(%q) = %v, want %v", status, got, want)
		}
	}
}
