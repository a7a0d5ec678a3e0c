//go:build linux && cgo

package procfs_test

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/procfs"
)

// The user and group that exist only in the name service (libnss-extrausers
// stands in for LDAP or SSSD: a module nsswitch.conf names, not /etc/passwd).
const (
	nssUser  = "zs2023"
	nssUID   = 71234
	nssGroup = "lab-gpu"
	nssGID   = 71235
	childEnv = "GPUBOOK_NSS_CHILD"
)

// skipOrFail skips on a developer's machine; CI must run the test.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why + " (set CI=true to make this a failure)")
}

// needExtrausers checks for root and the extrausers NSS module; under
// CI=true it installs libnss-extrausers when missing.
func needExtrausers(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		skipOrFail(t, "the name-service test needs root (a mount namespace over /etc/nsswitch.conf)")
	}
	lib := func() bool {
		for _, pat := range []string{"/usr/lib/libnss_extrausers.so.2", "/usr/lib/*/libnss_extrausers.so.2", "/lib/*/libnss_extrausers.so.2"} {
			if m, _ := filepath.Glob(pat); len(m) > 0 {
				return true
			}
		}
		return false
	}
	if !lib() && os.Getenv("CI") == "true" {
		out, err := exec.Command("sh", "-c", "export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq libnss-extrausers || { apt-get update -qq && apt-get install -y -qq libnss-extrausers; }").CombinedOutput()
		if err != nil {
			t.Fatalf("installing libnss-extrausers: %v\n%s", err, out)
		}
	}
	if !lib() {
		skipOrFail(t, "libnss-extrausers not installed: apt-get install -y libnss-extrausers")
	}
}

// TestNameServiceUser: a user who exists only through NSS (not in
// /etc/passwd) is resolved by the agent's resolver: UID → name, name → UID,
// and groups. The test binary re-runs itself in a private mount namespace
// where /etc/nsswitch.conf and /var/lib/extrausers are bind-mounted from a
// temporary directory, so the host's files are never changed.
func TestNameServiceUser(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		nssChild(t)
		return
	}
	needExtrausers(t)
	if data, _ := os.ReadFile("/etc/passwd"); strings.Contains(string(data), "\n"+nssUser+":") || strings.HasPrefix(string(data), nssUser+":") {
		t.Fatalf("%s is in /etc/passwd: the test would prove nothing", nssUser)
	}
	dir := t.TempDir()
	ext := filepath.Join(dir, "extrausers")
	must(t, os.MkdirAll(ext, 0o755))
	must(t, os.WriteFile(filepath.Join(ext, "passwd"), []byte(nssUser+":x:"+strconv.Itoa(nssUID)+":"+strconv.Itoa(nssGID)+":Zhang San:/nonexistent:/bin/sh\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(ext, "group"), []byte(nssGroup+":x:"+strconv.Itoa(nssGID)+":"+nssUser+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(ext, "shadow"), nil, 0o640))
	must(t, os.WriteFile(filepath.Join(dir, "nsswitch.conf"), []byte("passwd: files extrausers\ngroup: files extrausers\nshadow: files extrausers\n"), 0o644))
	// The mount point must exist; an empty directory made here is removed again.
	if _, err := os.Stat("/var/lib/extrausers"); os.IsNotExist(err) {
		must(t, os.MkdirAll("/var/lib/extrausers", 0o755))
		t.Cleanup(func() { os.Remove("/var/lib/extrausers") })
	}
	script := "set -e\nmount --bind " + filepath.Join(dir, "nsswitch.conf") + " /etc/nsswitch.conf\n" +
		"mount --bind " + ext + " /var/lib/extrausers\n" +
		"exec \"$0\" -test.run '^TestNameServiceUser$' -test.v -test.count=1\n"
	cmd := exec.Command("sh", "-c", script, os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=1")
	// Go makes the new namespace's mounts private: nothing leaks out.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child in a mount namespace: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestNameServiceUser") {
		t.Fatalf("child did not pass:\n%s", out)
	}
	t.Logf("child:\n%s", out)
}

// nssChild runs inside the namespace: the resolver with no passwd file
// must find the NSS-only user.
func nssChild(t *testing.T) {
	r := procfs.New(t.TempDir(), "", "")
	if got := r.UserName(nssUID); got != nssUser {
		t.Errorf("UserName(%d) = %q, want %q", nssUID, got, nssUser)
	}
	if uid, ok := r.UserID(nssUser); !ok || uid != nssUID {
		t.Errorf("UserID(%s) = %d, %v", nssUser, uid, ok)
	}
	if got := r.UserGroups(nssUser); !slices.Contains(got, nssGroup) {
		t.Errorf("UserGroups(%s) = %v, want %s among them", nssUser, got, nssGroup)
	}
	// The files path does not know the user: it is the name service that did.
	files := procfs.New(t.TempDir(), "/etc/passwd", "/etc/group")
	if got := files.UserName(nssUID); got != strconv.Itoa(nssUID) {
		t.Errorf("passwd file knows %d as %q", nssUID, got)
	}

	// The directory goes away (its files hidden under an empty directory,
	// as when LDAP or SSSD is down): the resolver, past its cache, asks
	// again and keeps the name it had; a resolver that never knew the
	// user has only the number.
	must(t, exec.Command("mount", "-t", "tmpfs", "tmpfs", "/var/lib/extrausers").Run())
	_, err := user.LookupId(strconv.Itoa(nssUID))
	t.Logf("the C library, directory gone: %v (%T)", err, err)
	if err == nil {
		t.Fatal("the user still resolves with the directory gone: the test would prove nothing")
	}
	now := time.Now()
	r.SetClock(func() time.Time { return now })
	for _, after := range []time.Duration{procfs.DefaultPositiveTTL + time.Second, time.Minute, 2 * time.Minute} {
		now = now.Add(after)
		if got := r.UserName(nssUID); got != nssUser {
			t.Errorf("directory gone, %v later: UserName = %q, want %q kept", after, got, nssUser)
		}
		if got := r.UserGroups(nssUser); !slices.Contains(got, nssGroup) {
			t.Errorf("directory gone, %v later: UserGroups = %v, want %s kept", after, got, nssGroup)
		}
	}
	if got := procfs.New(t.TempDir(), "", "").UserName(nssUID); got != strconv.Itoa(nssUID) {
		t.Errorf("a new resolver, directory gone: %q, want the number", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
