// Package deploy holds the files an admin installs on a node; this test
// proves the shell hooks never break a login, whatever the binary does.
package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const uuid = "GPU-aaaaaaaa-0000-0000-0000-000000000002"

// hook copies a login hook with the binary path pointed at bin.
func hook(t *testing.T, src, bin string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(openDir(t), filepath.Base(src))
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(data), "/usr/local/bin/gpubook-agent", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// openDir is a temp directory another user can read: the hooks run as
// nobody too.
func openDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fakeAgent writes an executable script standing in for the binary.
func fakeAgent(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(openDir(t), "gpubook-agent")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// users the hooks are tried as: root (left alone when the agent fails)
// and nobody, UID 65534 (no GPU when the agent fails). Running as another
// user needs root; otherwise only the current user is tried.
func hookUsers() []struct {
	name   string
	uid    int
	exempt bool
} {
	type u = struct {
		name   string
		uid    int
		exempt bool
	}
	if os.Getuid() == 0 {
		return []u{{"root", 0, true}, {"nobody", 65534, false}}
	}
	return []u{{"current", os.Getuid(), os.Getuid() < 1000}}
}

func TestLoginHooks(t *testing.T) {
	const closed, unchanged = "", "unset"
	tests := []struct {
		name string
		bin  func(t *testing.T) string
		// wantUser for a non-exempt user; an exempt one gets wantExempt.
		wantUser, wantExempt string
		hint                 bool // the fail-closed hint on stderr for the user
	}{
		{"binary missing", func(t *testing.T) string { return "/nonexistent/gpubook-agent" }, closed, unchanged, true},
		{"binary fails", func(t *testing.T) string { return fakeAgent(t, "echo boom >&2; exit 1") }, closed, unchanged, true},
		{"binary segfaults", func(t *testing.T) string { return fakeAgent(t, "kill -SEGV $$") }, closed, unchanged, true},
		{"binary hangs", func(t *testing.T) string { return fakeAgent(t, "sleep 30") }, closed, unchanged, true},
		{"binary prints junk", func(t *testing.T) string { return fakeAgent(t, "echo 'exit 7'") }, closed, unchanged, true},
		{"binary crashes mid-output", func(t *testing.T) string { return fakeAgent(t, "printf 'export CUDA_VIS'; kill -9 $$") }, closed, unchanged, true},
		{"exempt by config: empty answer, exit 0", func(t *testing.T) string { return fakeAgent(t, "exit 0") }, unchanged, unchanged, false},
		{"booked", func(t *testing.T) string {
			return fakeAgent(t, "echo 'export CUDA_VISIBLE_DEVICES="+uuid+"; export CUDA_DEVICE_ORDER=PCI_BUS_ID'")
		}, uuid, uuid, false},
		{"not booked", func(t *testing.T) string {
			return fakeAgent(t, "echo 'export CUDA_VISIBLE_DEVICES=; export CUDA_DEVICE_ORDER=PCI_BUS_ID'; echo hint >&2")
		}, closed, closed, false},
	}
	// The bashrc snippet runs interactive (ssh with a terminal) and not
	// (`ssh node cmd`, scp, rsync: quiet, no hint on stderr).
	shells := []struct {
		name, shell, file string
		interactive       bool
	}{
		{"profile.d with sh", "sh", "profile.d/gpubook.sh", false},
		{"profile.d with bash", "bash", "profile.d/gpubook.sh", true},
		{"bash.bashrc", "bash", "bash.bashrc.snippet", true},
		{"bash.bashrc non-interactive", "bash", "bash.bashrc.snippet", false},
	}
	for _, sh := range shells {
		if _, err := exec.LookPath(sh.shell); err != nil {
			continue
		}
		for _, u := range hookUsers() {
			for _, tt := range tests {
				t.Run(sh.name+"/"+u.name+"/"+tt.name, func(t *testing.T) {
					t.Parallel() // each case waits on its own shell (the hung binary's cap above all)
					want := tt.wantUser
					if u.exempt {
						want = tt.wantExempt
					}
					out, stderr := runHook(t, sh.shell, hook(t, sh.file, tt.bin(t)), u.uid, sh.interactive)
					lines := strings.SplitN(out, "\n", 2)
					if lines[0] != "after" || len(lines) < 2 || lines[1] != want {
						t.Errorf("output %q, want after + %q", out, want)
					}
					quiet := sh.shell == "bash" && !sh.interactive
					if gotHint := strings.Contains(stderr, "could not be read"); gotHint != (tt.hint && !u.exempt && !quiet) {
						t.Errorf("stderr %q: fail-closed hint %v, want %v", stderr, gotHint, tt.hint && !u.exempt && !quiet)
					}
					if quiet && stderr != "" {
						t.Errorf("non-interactive bash printed %q; scp and rsync want silence", stderr)
					}
				})
			}
		}
	}
}

// runHook sources h in shell as uid (bash interactive when asked, as ssh
// with a terminal) and returns stdout and stderr. A hung binary must
// not hold the login: the hook caps it, far below the 30 s it sleeps.
// Interactive bash reads the stock Debian bash.bashrc from testdata, not
// the machine's (--norc): on a node with the agent installed, that one
// holds the real hook, which would run first and set the guard.
func runHook(t *testing.T, shell, h string, uid int, interactive bool) (string, string) {
	t.Helper()
	script := ". " + h + `; echo "after"; printf '%s' "${CUDA_VISIBLE_DEVICES-unset}"`
	args := []string{"-c", script}
	if shell == "bash" && interactive {
		rc := filepath.Join(openDir(t), "bash.bashrc")
		must(t, os.WriteFile(rc, []byte(readFile(t, "testdata/debian/bash.bashrc")), 0o644))
		args = []string{"--norc", "-i", "-c", ". " + rc + "; " + script}
	}
	cmd := exec.Command(shell, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/"}
	if uid != os.Getuid() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("shell failed: %v (stderr %q)", err, stderr.String())
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("hook took %v: it waited for the hung binary", took)
	}
	return string(out), stderr.String()
}

// TestHookOncePerProcess: `ssh node bash -lc cmd` runs the bash.bashrc
// block, then bash execs `bash -lc cmd` in the same process, which reads
// profile.d: the agent is asked once, not twice (twice is 2 s with a hung
// binary). The guard is no pass: inherited from another process or with
// the variable changed since, the hook runs again and sets the booking.
func TestHookOncePerProcess(t *testing.T) {
	dir := openDir(t)
	count := filepath.Join(dir, "count")
	must(t, os.WriteFile(count, nil, 0o666))
	must(t, os.Chmod(count, 0o666)) // whatever the umask: the hook runs as nobody too
	bin := fakeAgent(t, "echo x >>"+count+"; echo 'export CUDA_VISIBLE_DEVICES="+uuid+"; export CUDA_DEVICE_ORDER=PCI_BUS_ID'")
	bashrc, profile := hook(t, "bash.bashrc.snippet", bin), hook(t, "profile.d/gpubook.sh", bin)
	show := `printf '%s' "${CUDA_VISIBLE_DEVICES-unset}"`
	tests := []struct {
		name, script string
		env          []string
		wantRuns     int
	}{
		{"bashrc, then exec bash -lc", ". " + bashrc + `; exec bash -c '. ` + profile + `; ` + show + `'`, nil, 1},
		{"bashrc, then exec bash -c", ". " + bashrc + `; exec bash -c '. ` + bashrc + `; ` + show + `'`, nil, 1},
		{"sh: profile.d twice", ". " + profile + "; . " + profile + "; " + show, nil, 1},
		{"guard from another process", ". " + profile + "; " + show,
			[]string{"__GPUBOOK_HOOKED=1:65534:=GPU-forged", "CUDA_VISIBLE_DEVICES=GPU-forged"}, 1},
		{"variable changed since", ". " + bashrc + "; export CUDA_VISIBLE_DEVICES=GPU-mine; . " + profile + "; " + show, nil, 2},
		{"a new shell is asked again", ". " + bashrc + "; bash -c '. " + bashrc + "; " + show + "'; true", nil, 2}, // `; true`: a child, not an exec
	}
	for _, u := range hookUsers() {
		for _, tt := range tests {
			t.Run(u.name+"/"+tt.name, func(t *testing.T) {
				must(t, os.Truncate(count, 0))
				cmd := exec.Command("bash", "-c", tt.script)
				cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=/"}, tt.env...)
				if u.uid != os.Getuid() {
					cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
				}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("shell: %v\n%s", err, out)
				}
				if string(out) != uuid {
					t.Errorf("CUDA_VISIBLE_DEVICES = %q, want %q", out, uuid)
				}
				data, err := os.ReadFile(count)
				must(t, err)
				if runs := strings.Count(string(data), "x"); runs != tt.wantRuns {
					t.Errorf("the agent ran %d times, want %d", runs, tt.wantRuns)
				}
			})
		}
	}
}
