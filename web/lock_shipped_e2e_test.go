package web_test

// The lock as a lab gets it, end to end: the portal, install.sh with an
// enrolment token, the installed unit's ExecStart under the unit's own
// sandbox (simulated GPUs with real 195:N device files, enforce = lock), a
// user known only through the name service (libnss-extrausers; her login
// is not her e-mail's local part), and a real sshd login. She booked GPUs
// 2 and 5; she exports CUDA_VISIBLE_DEVICES=0,1,2,3 and opens 2 and 5 (past
// the lock: ENXIO, no driver) and 3 (EPERM); she releases the booking and
// 2 and 5 are refused too; on cgroup2 the portal shows her attempt on GPU
// 3 with her name.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/agenttest/agentbin"
	"github.com/gpubook/gpubook/agent/agenttest/nodetest"
	"github.com/gpubook/gpubook/agent/agenttest/unitsandbox"
	"github.com/gpubook/gpubook/agent/lock/locktest"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
	"github.com/gpubook/gpubook/web/webtest"
)

// nssLogin is the booker: known to the node only through extrausers, with a
// login that is not her e-mail's local part (ana.lopez).
var nssLogin = struct {
	name  string
	uid   int
	email string
}{"alopez", 61201, "ana.lopez@example.org"}

func TestLockAsShippedEndToEnd(t *testing.T) {
	t.Parallel()
	needLockE2E(t)
	bin := agentbin.Build(t, filepath.Join(t.TempDir(), "gpubook-agent"))
	for _, tc := range []struct{ cgroup, dialect string }{{"v1", "sqlite"}, {"v2", "postgres"}} {
		t.Run(tc.cgroup+"/"+tc.dialect, func(t *testing.T) {
			lockAsShipped(t, bin, tc.cgroup, tc.dialect)
		})
	}
}

func lockAsShipped(t *testing.T, bin, cgroup, dialect string) {
	ctx := context.Background()
	env := webtest.New(t, dialect)
	srv := httptest.NewServer(env.Server.Echo)
	t.Cleanup(srv.Close)
	node := &models.Node{Name: "lab1"}
	gpus, _ := models.NewNodeGPUs("lab1", 8, "NVIDIA A100-SXM4-80GB", 81920)
	if err := env.DB.CreateNode(ctx, node, gpus, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	env.AddUser("root@example.org", "Root Admin", true)
	ana := env.AddUser(nssLogin.email, "Ana López", false)
	if err := env.DB.SetUnixLogin(ctx, ana.ID, models.UnixIdentity{Name: nssLogin.name, Source: "admin"}, models.CLIActor); err != nil {
		t.Fatal(err)
	}
	token, _, err := env.DB.CreateEnrollToken(ctx, node.ID, time.Now(), models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}

	// The node: the name service knows her; install.sh enrols it.
	dir := t.TempDir()
	must(t, os.Chmod(dir, 0o755))
	binds := nssBinds(t, dir)
	n := nodetest.Install(t, bin, "../agent/deploy", binds, nil, []string{srv.URL}, []string{"GPUBOOK_AGENT_TOKEN=" + token})
	n.AppendConf(t, "metrics_addr =\nsample_interval = 1s\nsync_interval = 1s\ndeliver_interval = 1s\nusage_spread = 2s\nheartbeat_interval = 2s\n"+
		"gpu = simulated\nenforce = lock\nlock_cgroup = "+cgroup+"\n")
	a := n.StartAgent(t)
	status := n.WaitStatus(t, a, nodetest.Locked)
	if !regexp.MustCompile(`(?m)^enforce: lock ` + cgroup + `( \(v1 refuses|$)`).MatchString(status) {
		t.Fatalf("status after start:\n%s\nwant enforce: lock %s", status, cgroup)
	}

	// Her booking of GPUs 2 and 5, made once the agent has sent its
	// inventory (the simulated GPUs' UUIDs).
	var nd *models.Node
	waitUntil(t, a, "inventory", func() bool {
		nd, _ = env.DB.Node(ctx, node.ID)
		return nd != nil && !strings.HasPrefix(nd.GPUs[2].UUID, "GPU-manual-")
	})
	start := time.Now().UTC().Add(-time.Minute)
	booking, err := env.DB.CreateBooking(ctx, models.NewBooking{UserID: ana.ID, GPUIDs: []int64{nd.GPUs[2].ID, nd.GPUs[5].ID},
		StartsAt: start, EndsAt: start.Add(2 * time.Hour)}, models.DefaultBookingLimits, start, models.CLIActor)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, a, "schedule on the node", func() bool {
		out, _ := n.Command(t, unitsandbox.Spec{Argv: []string{"/usr/local/bin/gpubook-agent", "status"}, Env: []string{unitsandbox.SystemdPath}}).CombinedOutput()
		return strings.Contains(string(out), nssLogin.name)
	})

	// She logs in over sshd (a login shell: /etc/profile.d/gpubook.sh as
	// installed), ignores her booking and opens GPUs 2, 5, 3 and 0.
	s := startNodeSSHD(t, n, dir)
	got := s.login(t, `printf 'hook=%s\n' "$CUDA_VISIBLE_DEVICES"
export CUDA_VISIBLE_DEVICES=0,1,2,3
for _ in $(seq 100); do grep -q gpubook /proc/$$/cgroup && break; sleep 0.1; done
printf 'cgroup=%s\n' "$(grep -m1 gpubook /proc/$$/cgroup || echo none)"
for g in 2 5 3 0; do
  if msg=$( (: <> /dev/gpubook-sim/lab1/nvidia$g) 2>&1 ); then echo "gpu$g=OK"; else echo "gpu$g=${msg##*: }"; fi
done`)
	t.Logf("her session on %s:\n%s", cgroup, got)
	hook := nd.GPUs[2].UUID + "," + nd.GPUs[5].UUID
	for _, want := range []string{"hook=" + hook + "\n", "gpu2=No such device or address\n", "gpu5=No such device or address\n",
		"gpu3=Operation not permitted\n", "gpu0=Operation not permitted\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("her session printed:\n%s\nwant a line %q", got, strings.TrimSpace(want))
		}
	}
	if strings.Contains(got, "cgroup=none") {
		t.Errorf("her login was never placed in her cgroup:\n%s", got)
	}

	// She releases the booking: once the node has the new schedule, GPUs 2
	// and 5 are refused to her too.
	if _, err := env.DB.ReleaseBooking(ctx, booking.ID, ana, time.Now()); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, a, "the release reaches the node", func() bool {
		out, _ := n.Command(t, unitsandbox.Spec{Argv: []string{"/usr/local/bin/gpubook-agent", "status"}, Env: []string{unitsandbox.SystemdPath}}).CombinedOutput()
		return !strings.Contains(string(out), nssLogin.name)
	})
	// The next sample (1 s) applies it to her rules; she tries again until
	// it has, for at most 30 s.
	after := ""
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		after = s.login(t, `for _ in $(seq 100); do grep -q gpubook /proc/$$/cgroup && break; sleep 0.1; done
for g in 2 5; do
  if msg=$( (: <> /dev/gpubook-sim/lab1/nvidia$g) 2>&1 ); then echo "gpu$g=OK"; else echo "gpu$g=${msg##*: }"; fi
done`)
		if strings.Count(after, "=Operation not permitted\n") == 2 {
			break
		}
	}
	for _, want := range []string{"gpu2=Operation not permitted\n", "gpu5=Operation not permitted\n"} {
		if !strings.Contains(after, want) {
			t.Errorf("30 s after the release her session printed:\n%s\nwant a line %q", after, strings.TrimSpace(want))
		}
	}
	if cgroup != "v2" {
		return // v1 cannot count refusals (agent/README.md)
	}

	// cgroup2 counts the refusal: the portal shows her attempt on GPU 3,
	// with her name, on the live status and on her own page.
	waitUntil(t, a, "the refused open reaches the portal", func() bool {
		vs, _ := telemetry.New(env.DB).Violations(ctx, models.ViolationFilter{})
		for _, v := range vs {
			if v.Kind == wire.ViolationRefused && v.GPUIndex == 3 && v.UserID == ana.ID {
				return true
			}
		}
		return false
	})
	c := env.Client()
	c.SignIn(nssLogin.email, "Ana López")
	row := c.Get("/status").Doc.Find(`[data-testid="status-gpu-` + strconv.FormatInt(nd.GPUs[3].ID, 10) + `"] [data-testid="flag-violation"]`)
	if txt := strings.Join(strings.Fields(row.Text()), " "); !strings.Contains(txt, "tried GPU 3 without a booking: Ana López ("+nssLogin.name+")") {
		t.Errorf("status of GPU 3: %q; want her attempt with her name", txt)
	}
	admin := env.Client()
	admin.SignIn("root@example.org", "Root Admin")
	link := admin.Get("/status").Doc.Find(`[data-testid="status-gpu-` + strconv.FormatInt(nd.GPUs[3].ID, 10) + `"] a[data-testid="violation-person"]`)
	if href, _ := link.Attr("href"); link.Text() != "Ana López" || href != "/admin/users/"+strconv.FormatInt(ana.ID, 10) {
		t.Errorf("admin's status of GPU 3: person %q → %q; want Ana López linked to her page", link.Text(), href)
	}
	mine := c.Get("/violations/mine").Doc.Find(`[data-testid="violation-kind"]`).Text()
	if !strings.Contains(mine, "tried GPU 3 without a booking") {
		t.Errorf("/violations/mine kinds: %q; want her attempt on GPU 3", mine)
	}
}

// needLockE2E skips on a laptop (root, sshd, extrausers, both cgroup
// device controllers); CI installs what it needs and must run it.
func needLockE2E(t *testing.T) {
	t.Helper()
	var missing []string
	if os.Getuid() != 0 {
		missing = append(missing, "root")
	}
	for _, p := range []string{"/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/setpriv", "/sys/fs/cgroup/devices/devices.allow", "/sys/fs/cgroup/unified/cgroup.procs"} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	a, _ := filepath.Glob("/usr/lib/libnss_extrausers.so.2")
	b, _ := filepath.Glob("/usr/lib/*/libnss_extrausers.so.2")
	if len(a)+len(b) == 0 {
		missing = append(missing, "libnss-extrausers")
	}
	if len(missing) == 0 {
		locktest.HoldAgentPrefix(t)
		return
	}
	why := "the shipped-lock test needs " + strings.Join(missing, ", ")
	if os.Getenv("CI") == "true" {
		t.Fatal(why + " (.ci/run installs them)")
	}
	t.Skip(why)
}

// nssBinds makes the name service of the node: nsswitch.conf with
// extrausers, and her entry there only.
func nssBinds(t *testing.T, dir string) []unitsandbox.Bind {
	t.Helper()
	ext := filepath.Join(dir, "extrausers")
	home := filepath.Join(dir, "home", nssLogin.name)
	must(t, os.MkdirAll(ext, 0o755))
	must(t, os.MkdirAll(home, 0o755))
	must(t, os.Chmod(filepath.Dir(home), 0o755))
	must(t, os.Chown(home, nssLogin.uid, nssLogin.uid))
	uid := strconv.Itoa(nssLogin.uid)
	must(t, os.WriteFile(filepath.Join(ext, "passwd"), []byte(nssLogin.name+":x:"+uid+":"+uid+":Ana Lopez:"+home+":/bin/bash\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(ext, "group"), []byte(nssLogin.name+":x:"+uid+":\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(ext, "shadow"), []byte(nssLogin.name+":*:19000:0:99999:7:::\n"), 0o640))
	nss := filepath.Join(dir, "nsswitch.conf")
	must(t, os.WriteFile(nss, []byte("passwd: files extrausers\ngroup: files extrausers\nshadow: files extrausers\nhosts: files\n"), 0o644))
	if data, _ := os.ReadFile("/etc/passwd"); regexp.MustCompile(`(?m)^` + nssLogin.name + `:`).Match(data) {
		t.Fatalf("%s is in /etc/passwd: the test would prove nothing", nssLogin.name)
	}
	binds := []unitsandbox.Bind{{Src: nss, Dst: "/etc/nsswitch.conf"}, {Src: ext, Dst: "/var/lib/extrausers"}}
	return binds
}

// nodeSSHD is an OpenSSH sshd on the node (its binds, so it sees her
// through extrausers and the installed login hooks).
type nodeSSHD struct{ dir, port string }

func startNodeSSHD(t *testing.T, n *nodetest.Node, dir string) *nodeSSHD {
	t.Helper()
	s := &nodeSSHD{dir: filepath.Join(dir, "ssh")}
	keys := filepath.Join(s.dir, "keys")
	must(t, os.MkdirAll(keys, 0o755))
	for _, k := range []string{"host_key", "id"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(s.dir, k)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
	}
	pub, err := os.ReadFile(filepath.Join(s.dir, "id.pub"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(keys, nssLogin.name), pub, 0o644))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	s.port = strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cfg := fmt.Sprintf("ListenAddress 127.0.0.1\nPort %s\nHostKey %s/host_key\nAuthorizedKeysFile %s/%%u\nStrictModes no\nUsePAM no\nPidFile none\n",
		s.port, s.dir, keys)
	must(t, os.WriteFile(filepath.Join(s.dir, "sshd_config"), []byte(cfg), 0o644))
	cmd := n.Command(t, unitsandbox.Spec{Tmpfs: []string{"/run"}, Argv: []string{"sh", "-c", "mkdir /run/sshd && exec /usr/sbin/sshd -D -e -f " + s.dir + "/sshd_config"},
		Env: []string{unitsandbox.SystemdPath}})
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	must(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("sshd log:\n%s", logs.String())
		}
	})
	for range 100 {
		if c, err := net.Dial("tcp", "127.0.0.1:"+s.port); err == nil {
			c.Close()
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("sshd did not listen:\n%s", logs.String())
	return nil
}

// login runs script in her login shell over ssh (LC_ALL=C: the errno
// texts) and returns what it printed.
func (s *nodeSSHD) login(t *testing.T, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ssh", "-F", "/dev/null", "-i", filepath.Join(s.dir, "id"), "-o", "IdentitiesOnly=yes",
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
		"-p", s.port, nssLogin.name+"@127.0.0.1", "LC_ALL=C exec bash -l")
	cmd.Stdin = strings.NewReader(script + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ssh %s: %v\n%s", nssLogin.name, err, out)
	}
	return string(out)
}

// waitUntil polls cond for up to 90 s while the agent runs.
func waitUntil(t *testing.T, a *nodetest.Agent, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(90 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 90 s\nagent log:\n%s", what, a.Log())
}
