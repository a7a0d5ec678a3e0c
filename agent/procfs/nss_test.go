package procfs_test

import (
	"errors"
	"os/user"
	"slices"
	"sync"
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

// directory is a name service whose behaviour a test switches: it answers,
// fails (server unreachable), hangs, says "no such user", or has renamed
// the user.
type directory struct {
	mode         atomic.Value // "answer", "fail", "hang", "gone", "renamed"
	calls, ended atomic.Int32
	release      chan struct{} // ends the hung lookups
}

func (d *directory) lookups() procfs.Lookups {
	zs := func() (*user.User, error) {
		d.calls.Add(1)
		defer d.ended.Add(1)
		switch d.mode.Load() {
		case "fail":
			return nil, errors.New("nss_ldap: failed to bind to LDAP server ldap://ldap.lab: Can't contact LDAP server")
		case "hang":
			<-d.release
			return nil, errors.New("timed out")
		case "gone":
			return nil, user.UnknownUserIdError(70001)
		case "renamed":
			return &user.User{Uid: "70001", Gid: "70001", Username: "zs2024"}, nil
		}
		return &user.User{Uid: "70001", Gid: "70001", Username: "zs2023"}, nil
	}
	return procfs.Lookups{
		UserByID:   func(string) (*user.User, error) { return zs() },
		UserByName: func(string) (*user.User, error) { return zs() },
		GroupByID:  func(gid string) (*user.Group, error) { return &user.Group{Gid: gid, Name: "lab-gpu"}, nil },
		GroupIDs:   func(*user.User) ([]string, error) { return []string{"70001"}, nil },
	}
}

// TestNameServiceKeepsKnownName: once the name service has named a UID, a
// directory that starts failing or hanging does not turn the name back
// into a number (the lock would rewrite a booked user's rules with no
// GPUs), however long it fails; its groups and UID stay known too. A
// "no such user" is believed after DefaultKeepGone, a new name at once,
// and a UID never named stays a number.
func TestNameServiceKeepsKnownName(t *testing.T) {
	d := &directory{release: make(chan struct{})}
	var once sync.Once
	unhang := func() { once.Do(func() { close(d.release) }) }
	defer unhang()
	d.mode.Store("answer")
	now := time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)
	r := procfs.New(t.TempDir(), "", "").WithLookups(d.lookups(), 50*time.Millisecond)
	r.SetClock(func() time.Time { return now })
	check := func(step, wantName string, wantGroups []string) {
		t.Helper()
		if got := r.UserName(70001); got != wantName {
			t.Errorf("%s: UserName = %q, want %q", step, got, wantName)
		}
		if got := r.UserGroups("zs2023"); !slices.Equal(got, wantGroups) {
			t.Errorf("%s: UserGroups = %v, want %v", step, got, wantGroups)
		}
		uid, ok := r.UserID("zs2023")
		if wantOK := wantName != "70001"; ok != wantOK || (ok && uid != 70001) {
			t.Errorf("%s: UserID = %d, %v, want 70001, %v", step, uid, ok, wantOK)
		}
	}
	check("directory up", "zs2023", []string{"lab-gpu"})

	steps := []struct {
		mode    string
		advance time.Duration
	}{
		{"fail", procfs.DefaultPositiveTTL + time.Second}, // past the cache: asked again
		{"fail", time.Minute},                             // the 60 s outage of the report
		{"fail", 24 * time.Hour},
		{"hang", procfs.DefaultPositiveTTL},
	}
	for _, s := range steps {
		d.mode.Store(s.mode)
		now = now.Add(s.advance)
		before := d.calls.Load()
		check(s.mode+" after "+s.advance.String(), "zs2023", []string{"lab-gpu"})
		if d.calls.Load() == before {
			t.Errorf("%s after %v: the directory was not asked again", s.mode, s.advance)
		}
	}
	// The hung lookups end (failed): until they do, no new one starts.
	unhang()
	for deadline := time.Now().Add(10 * time.Second); d.ended.Load() < d.calls.Load(); {
		if time.Now().After(deadline) {
			t.Fatal("the hung lookups never ended")
		}
		time.Sleep(time.Millisecond)
	}
	check("hang ended in a failure", "zs2023", []string{"lab-gpu"})

	// A failing directory with nothing known before: the UID is a number.
	if got := r.UserName(70002); got != "70002" {
		t.Errorf("never named, directory down: %q, want the number", got)
	}

	d.mode.Store("gone")
	now = now.Add(time.Hour)
	check("gone, just said", "zs2023", []string{"lab-gpu"})
	now = now.Add(procfs.DefaultKeepGone)
	check("gone for DefaultKeepGone", "70001", nil)

	d.mode.Store("renamed")
	now = now.Add(time.Minute)
	if got := r.UserName(70001); got != "zs2024" {
		t.Errorf("renamed: UserName = %q, want zs2024", got)
	}
}
