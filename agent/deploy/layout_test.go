package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRoot is a directory standing for a node's / with the given stock
// files copied in (path in the root → testdata file).
func fakeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := openDir(t)
	for dst, src := range files {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, dst)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// installInto runs install.sh with root as DESTDIR.
func installInto(t *testing.T, root string) {
	t.Helper()
	cmd := exec.Command("sh", "install.sh")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "DESTDIR=" + root, "GPUBOOK_AGENT_BIN=" + fakeAgent(t, "exit 0")}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
}

func bashrcHook(t *testing.T, action, root string) (string, error) {
	t.Helper()
	out, err := exec.Command("sh", "bashrc-hook.sh", action, root).CombinedOutput()
	return string(out), err
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// checkPlaced: the file holds exactly one hook block, it comes first, and
// the stock content follows it unchanged.
func checkPlaced(t *testing.T, path, stock string) {
	t.Helper()
	got := readFile(t, path)
	snippet := readFile(t, "bash.bashrc.snippet")
	if n := strings.Count(got, "# --- gpubook"); n != 1 {
		t.Errorf("%s has %d hook blocks, want 1", path, n)
	}
	if got != snippet+stock {
		t.Errorf("%s is not the snippet followed by the stock file:\n%s", path, got)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("%s mode: %v %v, want 0644 kept", path, fi.Mode(), err)
	}
}

// nonInteractive sources the system bashrc as `ssh node cmd` gets it on
// each family (no PS1, not interactive), and
// returns CUDA_VISIBLE_DEVICES ("unset" when untouched).
func nonInteractive(t *testing.T, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", script+`; printf '%s' "${CUDA_VISIBLE_DEVICES-unset}"`)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	return string(out)
}

// pointAt rewrites the hook's binary path in a placed file (the test
// cannot install to /usr/local/bin) and returns the copy.
func pointAt(t *testing.T, placed, bin string) string {
	t.Helper()
	p := filepath.Join(openDir(t), filepath.Base(placed))
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(readFile(t, placed), "/usr/local/bin/gpubook-agent", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const bookedAgent = "echo 'export CUDA_VISIBLE_DEVICES=" + uuid + "; export CUDA_DEVICE_ORDER=PCI_BUS_ID'"

// TestInstallDebianLayout: Debian's and Ubuntu's stock /etc/bash.bashrc
// returns at once for non-interactive shells, so an appended hook never
// runs for `ssh node cmd`; the hook goes above that return.
func TestInstallDebianLayout(t *testing.T) {
	stock := readFile(t, "testdata/debian/bash.bashrc")
	root := fakeRoot(t, map[string]string{"etc/bash.bashrc": "testdata/debian/bash.bashrc"})
	installInto(t, root)
	placed := filepath.Join(root, "etc/bash.bashrc")
	checkPlaced(t, placed, stock)
	if _, err := os.Stat(filepath.Join(root, "etc/bashrc")); !os.IsNotExist(err) {
		t.Errorf("etc/bashrc created on a Debian layout: %v", err)
	}
	if got := nonInteractive(t, ". "+pointAt(t, placed, fakeAgent(t, bookedAgent))); got != uuid {
		t.Errorf("non-interactive bash after the Debian bash.bashrc: CUDA_VISIBLE_DEVICES %q, want %q", got, uuid)
	}
}

// TestInstallRHELLayout: the RHEL family has /etc/bashrc (sourced by
// ~/.bashrc, which bash reads under ssh) and no /etc/bash.bashrc.
func TestInstallRHELLayout(t *testing.T) {
	stock := readFile(t, "testdata/rhel/bashrc")
	root := fakeRoot(t, map[string]string{"etc/bashrc": "testdata/rhel/bashrc"})
	installInto(t, root)
	for _, f := range []string{"usr/local/bin/gpubook-agent", "etc/gpubook/agent.conf", "etc/profile.d/gpubook.sh",
		"etc/systemd/system/gpubook-agent.service", "usr/share/gpubook-agent/bash.bashrc.snippet", "usr/share/gpubook-agent/bashrc-hook.sh"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	placed := filepath.Join(root, "etc/bashrc")
	checkPlaced(t, placed, stock)
	if _, err := os.Stat(filepath.Join(root, "etc/bash.bashrc")); !os.IsNotExist(err) {
		t.Errorf("etc/bash.bashrc created on a RHEL layout: %v", err)
	}
	// ~/.bashrc as RHEL ships it, with /etc/bashrc pointed at the placed copy.
	skel := strings.ReplaceAll(readFile(t, "testdata/rhel/skel.bashrc"), "/etc/bashrc", pointAt(t, placed, fakeAgent(t, bookedAgent)))
	home := filepath.Join(openDir(t), ".bashrc")
	if err := os.WriteFile(home, []byte(skel), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := nonInteractive(t, ". "+home); got != uuid {
		t.Errorf("non-interactive bash after RHEL's ~/.bashrc: CUDA_VISIBLE_DEVICES %q, want %q", got, uuid)
	}
}

// TestBashrcHookUpgradeAndRemove: a block appended by an older install.sh
// moves to the top, a second install changes nothing, remove gives back
// the stock file byte for byte, and an unmatched marker is refused rather
// than cutting the file.
func TestBashrcHookUpgradeAndRemove(t *testing.T) {
	stock := readFile(t, "testdata/debian/bash.bashrc")
	snippet := readFile(t, "bash.bashrc.snippet")
	root := fakeRoot(t, map[string]string{"etc/bash.bashrc": "testdata/debian/bash.bashrc"})
	p := filepath.Join(root, "etc/bash.bashrc")
	old := "# --- gpubook (appended to /etc/bash.bashrc by install.sh) ---\necho old\n# --- end gpubook ---\n"
	if err := os.WriteFile(p, []byte(stock+old), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if out, err := bashrcHook(t, "install", root); err != nil {
			t.Fatalf("install #%d: %v %s", i+1, err, out)
		}
		checkPlaced(t, p, stock)
	}
	if out, err := bashrcHook(t, "remove", root); err != nil {
		t.Fatalf("remove: %v %s", err, out)
	}
	if got := readFile(t, p); got != stock {
		t.Errorf("after remove the file differs from the stock one:\n%s", got)
	}

	broken := snippet[:strings.Index(snippet, "# --- end gpubook ---")] + stock
	if err := os.WriteFile(p, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := bashrcHook(t, "install", root); err == nil || !strings.Contains(out, "unmatched") {
		t.Errorf("install with an unmatched marker: err %v, output %q; want a refusal", err, out)
	}
	if got := readFile(t, p); got != broken {
		t.Errorf("a refused install changed the file")
	}
}
