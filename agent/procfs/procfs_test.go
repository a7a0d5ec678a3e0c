package procfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gpubook/gpubook/agent/agenttest"
	"github.com/gpubook/gpubook/agent/procfs"
)

func TestUIDAndName(t *testing.T) {
	p := agenttest.NewProcs(t)
	p.Add(t, 100, agenttest.UIDAlice)
	p.Add(t, 200, 4242) // not in passwd (LDAP user)
	r := procfs.New(p.Root, p.Passwd, p.Group)
	tests := []struct {
		name     string
		pid      int
		wantUID  int
		wantName string
		wantErr  error
	}{
		{"known user", 100, agenttest.UIDAlice, "alice", nil},
		{"unknown uid falls back to number", 200, 4242, "4242", nil},
		{"vanished pid", 999, 0, "", procfs.ErrGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uid, err := r.UID(tt.pid)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("UID err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got, want := uid, tt.wantUID; got != want {
				t.Errorf("UID = %d, want %d", got, want)
			}
			if got, want := r.UserName(uid), tt.wantName; got != want {
				t.Errorf("UserName = %q, want %q", got, want)
			}
		})
	}
}

func TestMalformedStatus(t *testing.T) {
	p := agenttest.NewProcs(t)
	dir := filepath.Join(p.Root, "300")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "status"), []byte("Name:\tx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := procfs.New(p.Root, p.Passwd, p.Group).UID(300)
	if err == nil || errors.Is(err, procfs.ErrGone) {
		t.Errorf("UID = %v, want a parse error", err)
	}
}

func TestUserGroups(t *testing.T) {
	p := agenttest.NewProcs(t)
	r := procfs.New(p.Root, p.Passwd, p.Group)
	tests := []struct {
		user string
		want []string
	}{
		{"carol", []string{"carol", "gpuadmins"}},
		{"alice", []string{"alice"}},
		{"nobody-here", nil},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			got := r.UserGroups(tt.user)
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("UserGroups = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPasswdReloadsWhenChanged(t *testing.T) {
	p := agenttest.NewProcs(t)
	r := procfs.New(p.Root, p.Passwd, p.Group)
	if got, want := r.UserName(5000), "5000"; got != want {
		t.Fatalf("UserName = %q, want %q", got, want)
	}
	f, err := os.OpenFile(p.Passwd, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("dave:x:5000:5000::/home/dave:/bin/bash\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got, want := r.UserName(5000), "dave"; got != want {
		t.Errorf("UserName after edit = %q, want %q", got, want)
	}
}

func TestTTYs(t *testing.T) {
	p := agenttest.NewProcs(t)
	p.Add(t, 100, agenttest.UIDAlice)
	p.Add(t, 101, agenttest.UIDAlice)
	p.Add(t, 200, agenttest.UIDBob)
	r := procfs.New(p.Root, p.Passwd, p.Group)
	if got, want := r.TTYs(agenttest.UIDAlice), []string{"/dev/pts/1"}; !slices.Equal(got, want) {
		t.Errorf("TTYs = %v, want %v", got, want)
	}
	if got := r.TTYs(agenttest.UIDCarol); len(got) != 0 {
		t.Errorf("TTYs(carol) = %v, want none", got)
	}
}
