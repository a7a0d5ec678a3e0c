package procfs_test

import (
	"os/user"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/procfs"
)

// hungLookups answer nothing until release is closed, like an LDAP server
// that accepts the connection and never replies; calls counts the lookups
// that reached it.
func hungLookups(release chan struct{}, calls *atomic.Int32) procfs.Lookups {
	zs := &user.User{Uid: "70001", Gid: "70001", Username: "zs2023"}
	wait := func() { calls.Add(1); <-release }
	return procfs.Lookups{
		UserByID: func(uid string) (*user.User, error) {
			wait()
			if uid == zs.Uid {
				return zs, nil
			}
			return nil, user.UnknownUserIdError(0)
		},
		UserByName: func(name string) (*user.User, error) {
			wait()
			if name == zs.Username {
				return zs, nil
			}
			return nil, user.UnknownUserError(name)
		},
		GroupByID: func(gid string) (*user.Group, error) { return &user.Group{Gid: gid, Name: "lab-gpu"}, nil },
		GroupIDs:  func(*user.User) ([]string, error) { return []string{"70001"}, nil },
	}
}

// TestNameServiceTimeLimit: a lookup the directory does not answer is cut
// off at its time limit (the caller gets the UID as a number, no groups,
// no UID for a name) and is not started again while it hangs; when the
// directory answers at last, the answer is cached and used.
func TestNameServiceTimeLimit(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	r := procfs.New(t.TempDir(), "", "").WithLookups(hungLookups(release, &calls), 1) // 1 ns: give up at once
	for range 3 {
		if got := r.UserName(70001); got != "70001" {
			t.Fatalf("hung lookup: %q, want the number", got)
		}
	}
	if got := r.UserGroups("zs2023"); got != nil {
		t.Errorf("hung groups: %v", got)
	}
	if _, ok := r.UserID("zs2023"); ok {
		t.Error("hung name lookup answered")
	}
	// The three lookups run in goroutines of their own: wait until each has
	// reached the directory, so that none is counted late below.
	for deadline := time.Now().Add(10 * time.Second); calls.Load() < 3 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	for range 3 { // asked again while they hang: nothing new starts
		r.UserName(70001)
		r.UserGroups("zs2023")
	}
	if n := calls.Load(); n != 3 { // one per key: uid:70001, user:zs2023, groups:zs2023
		t.Errorf("lookups started = %d, want 3 (no new one while one hangs)", n)
	}
	close(release)
	// The lookups end now and fill the cache; the time limit still applies,
	// so ask until every answer is there.
	for i := 0; ; i++ {
		_, named := r.UserID("zs2023")
		if r.UserName(70001) == "zs2023" && named && r.UserGroups("zs2023") != nil {
			break
		}
		if i > 1e6 {
			t.Fatal("the answers never reached the cache")
		}
	}
	before := calls.Load()
	if got := r.UserName(70001); got != "zs2023" || calls.Load() != before {
		t.Errorf("cached: %q with %d new lookups", got, calls.Load()-before)
	}
}

// TestNameServiceAnswers: with no passwd file the resolver asks the name
// service, for names, UIDs and groups; unknown users stay numbers.
func TestNameServiceAnswers(t *testing.T) {
	release := make(chan struct{})
	close(release)
	var calls atomic.Int32
	r := procfs.New(t.TempDir(), "", "").WithLookups(hungLookups(release, &calls), 0)
	if got := r.UserName(70001); got != "zs2023" {
		t.Errorf("name = %q", got)
	}
	if got := r.UserName(70002); got != "70002" {
		t.Errorf("unknown uid = %q", got)
	}
	if uid, ok := r.UserID("zs2023"); !ok || uid != 70001 {
		t.Errorf("uid = %d, %v", uid, ok)
	}
	if got := r.UserGroups("zs2023"); !slices.Equal(got, []string{"lab-gpu"}) {
		t.Errorf("groups = %v", got)
	}
	if got := r.UserGroups("nobody-here"); got != nil {
		t.Errorf("unknown user's groups = %v", got)
	}
}
