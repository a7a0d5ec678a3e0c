package lock

import (
	"strings"
	"testing"
)

func TestJudgeSelfCheck(t *testing.T) {
	for _, tc := range []struct{ name, out, want string }{
		{"refused and null open", "EPERM\nOK\n", ""},
		{"kernel ignores the rules", "ENXIO\nOK\n", "did not enforce"},
		{"a real GPU answered", "OK\nOK\n", "did not enforce"},
		{"rules refuse everything", "EPERM\nEPERM\n", "refuse too much"},
		{"could not join", "MOVE open cgroup.procs: read-only file system\n", "cannot join the scratch cgroup: open cgroup.procs: read-only"},
		{"garbage", "", "unexpected answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := judgeSelfCheck(tc.out, "/dev/x/nvidia253")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}
