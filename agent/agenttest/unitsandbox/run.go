package unitsandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// specEnv carries the Spec to the child (MaybeRun).
const specEnv = "GPUBOOK_UNIT_SANDBOX"

// SystemdPath is the PATH systemd gives a service.
const SystemdPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Bind puts Src at Dst (a file on a file, a folder on a folder).
type Bind struct{ Src, Dst string }

// Spec is one command in a mount namespace of its own.
type Spec struct {
	// Ephemeral folders are made writable copies first (an overlay whose
	// changes vanish with the namespace, kept in a tmpfs on Scratch): /etc,
	// so that a script may replace /etc/bash.bashrc by rename.
	Ephemeral []string
	// Scratch is an empty folder of the test's, needed with Ephemeral.
	Scratch string
	// Binds lay out the node next (a scratch folder in place of
	// /usr/local/bin, say), in order.
	Binds []Bind
	// Tmpfs are empty file systems mounted next (/run for sshd).
	Tmpfs []string
	// Unit, when set, sandboxes the command as the unit says.
	Unit *Unit
	// Argv is the command; the unit's ExecStart when empty.
	Argv []string
	// Env is the command's whole environment.
	Env []string
}

// Command returns the command that runs spec: this test binary again, in
// a new mount namespace (private: nothing it mounts leaks out), which sets
// the namespace up and then executes the command.
func Command(spec Spec) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = []string{specEnv + "=" + string(b)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	return cmd, nil
}

// Mountpoints creates the destinations of binds that do not exist on this
// machine (empty folders or files), and removes them when the test ends.
func Mountpoints(t testing.TB, binds []Bind) {
	t.Helper()
	for _, b := range binds {
		if _, err := os.Stat(b.Dst); err == nil {
			continue
		}
		fi, err := os.Stat(b.Src)
		if err != nil {
			t.Fatal(err)
		}
		var made []string
		for d := filepath.Dir(b.Dst); ; d = filepath.Dir(d) {
			if _, err := os.Stat(d); err == nil {
				break
			}
			made = append(made, d)
		}
		if fi.IsDir() {
			made = append([]string{b.Dst}, made...)
			err = os.MkdirAll(b.Dst, 0o755)
		} else {
			if err = os.MkdirAll(filepath.Dir(b.Dst), 0o755); err == nil {
				err = os.WriteFile(b.Dst, nil, 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			os.Remove(b.Dst)
			for _, d := range made {
				os.Remove(d) // only when empty: nothing of the machine's goes
			}
		})
	}
}

// MaybeRun is the child's side of Command: when started as one it sets up
// the namespace, then executes the command (it never returns); otherwise
// it returns at once. Call it first thing in TestMain.
func MaybeRun() {
	v := os.Getenv(specEnv)
	if v == "" {
		return
	}
	var spec Spec
	if err := json.Unmarshal([]byte(v), &spec); err != nil {
		fail(err)
	}
	if err := setup(spec); err != nil {
		fail(err)
	}
	argv := spec.Argv
	if len(argv) == 0 && spec.Unit != nil {
		argv = spec.Unit.ExecStart
	}
	if spec.Unit != nil {
		argv = append(setpriv(*spec.Unit), argv...)
	}
	for _, kv := range spec.Env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			os.Setenv("PATH", p) // LookPath searches the command's own PATH
		}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fail(err)
	}
	fail(syscall.Exec(path, argv, spec.Env))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "unitsandbox:", err)
	os.Exit(111)
}

// setpriv is the prefix that applies the unit's capability bounding set
// and no_new_privs.
func setpriv(u Unit) []string {
	out := []string{"/usr/bin/setpriv"}
	if u.Caps != nil {
		set := "-all"
		for _, c := range u.Caps {
			set += ",+" + c
		}
		out = append(out, "--bounding-set", set)
	}
	if u.NoNewPrivileges {
		out = append(out, "--no-new-privs")
	}
	return append(out, "--")
}

func setup(spec Spec) error {
	if len(spec.Ephemeral) > 0 {
		if err := unix.Mount("tmpfs", spec.Scratch, "tmpfs", 0, "mode=0700"); err != nil {
			return fmt.Errorf("tmpfs on %s: %w", spec.Scratch, err)
		}
	}
	if strings.ContainsAny(spec.Scratch, ",:") {
		return fmt.Errorf("scratch folder %q: overlay options cannot hold ',' or ':'", spec.Scratch)
	}
	for i, d := range spec.Ephemeral {
		upper, work := filepath.Join(spec.Scratch, fmt.Sprint("upper", i)), filepath.Join(spec.Scratch, fmt.Sprint("work", i))
		for _, p := range []string{upper, work} {
			if err := os.Mkdir(p, 0o755); err != nil {
				return err
			}
		}
		if err := unix.Mount("overlay", d, "overlay", 0, "lowerdir="+d+",upperdir="+upper+",workdir="+work); err != nil {
			return fmt.Errorf("overlay on %s: %w", d, err)
		}
	}
	for _, b := range spec.Binds {
		if err := unix.Mount(b.Src, b.Dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s on %s: %w", b.Src, b.Dst, err)
		}
	}
	for _, d := range spec.Tmpfs {
		if err := unix.Mount("tmpfs", d, "tmpfs", 0, "mode=0755"); err != nil {
			return fmt.Errorf("tmpfs on %s: %w", d, err)
		}
	}
	if spec.Unit == nil {
		return nil
	}
	return sandbox(*spec.Unit)
}

// sandbox applies the unit's paths: each entry becomes a mount of its own
// (a bind onto itself, a tmpfs), then every mount whose covering entry is
// read-only is remounted read-only, submounts included — as systemd does,
// the longest entry covering a mount decides.
func sandbox(u Unit) error {
	points, err := mountpoints()
	if err != nil {
		return err
	}
	for _, p := range u.sortedPaths() {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			continue // systemd skips missing paths of its own tables too
		}
		switch m := u.Paths[p]; {
		case m == "tmpfs":
			err = unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777")
		case m == "inaccessible":
			err = unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0000")
		case points[p] == "":
			err = unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, "")
		}
		if err != nil {
			return fmt.Errorf("%s (%s): %w", p, u.Paths[p], err)
		}
	}
	if points, err = mountpoints(); err != nil {
		return err
	}
	var list []string
	for p := range points {
		list = append(list, p)
	}
	sort.Strings(list)
	for _, p := range list {
		if m := u.ModeOf(p); m != "ro" && m != "inaccessible" {
			continue
		}
		flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY | keptFlags(points[p]))
		if err := unix.Mount("", p, "", flags, ""); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EACCES) {
			return fmt.Errorf("remount %s read-only: %w", p, err)
		}
	}
	return nil
}

// mountpoints maps each mount point of this namespace to its per-mount
// options (mountinfo's sixth field).
func mountpoints() (map[string]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 {
			continue
		}
		out[unescape(fs[4])] = fs[5]
	}
	return out, sc.Err()
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// keptFlags are the per-mount flags a bind remount must repeat, or the
// kernel refuses to drop them (EPERM) or silently clears them.
func keptFlags(opts string) int {
	flags := 0
	for _, o := range strings.Split(opts, ",") {
		flags |= map[string]int{"nosuid": unix.MS_NOSUID, "nodev": unix.MS_NODEV, "noexec": unix.MS_NOEXEC,
			"relatime": unix.MS_RELATIME, "noatime": unix.MS_NOATIME, "nodiratime": unix.MS_NODIRATIME,
			"strictatime": unix.MS_STRICTATIME}[o]
	}
	return flags
}
