package models

import (
	"slices"
	"testing"
)

func TestValidUnixName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"zs2023", true}, {"s.wang", true}, {"a", true}, {"wang-s", true}, {"svc_gpu", true}, {"a.b.c", true},
		{"abcdefghijklmnopqrstuvwxyz012345", true}, {"abcdefghijklmnopqrstuvwxyz0123456", false},
		{"", false}, {"-x", false}, {"12345", false}, {"1abc", false}, {"a b", false}, {"a:b", false}, {"é", false},
		// Debian's NAME_REGEX: lower case, starting with a letter.
		{"Wang-S", false}, {"Anna", false}, {"_svc", false}, {"_apt", false}, {".x", false},
		// Dots only between parts: root. and a..b look like other names.
		{"root.", false}, {"a..b", false}, {"a.", false},
		// System accounts, whatever the case.
		{"root", false}, {"ROOT", false}, {"Root", false}, {"nobody", false}, {"daemon", false}, {"www-data", false},
		{"sshd", false}, {"postgres", false}, {"messagebus", false}, {"systemd-network", false}, {"systemd-timesync", false},
		{"rooted", true}, {"nobody2", true}, {"systemd", true},
	} {
		if got := ValidUnixName(tc.name); got != tc.want {
			t.Errorf("ValidUnixName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSystemLogin(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"root", true}, {"ROOT", true}, {"Daemon", true}, {"Systemd-Resolve", true}, {"gnats", true}, {"uucp", true},
		{"anna.schmidt", false}, {"admin", false}, {"rootkit", false}, {"", false},
	} {
		if got := SystemLogin(tc.name); got != tc.want {
			t.Errorf("SystemLogin(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestUnsafeUnixNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		user  User
		extra []string
		want  []string
	}{
		{"fine", User{Email: "anna.schmidt@example.org"}, nil, nil},
		{"assumed system account", User{Email: "root@example.org"}, nil, []string{"root"}},
		{"assumed local part no login can be", User{Email: "a+gpu@example.org"}, nil, []string{"a+gpu"}},
		{"stored before the rule", User{Email: "x@example.org", Unix: "Wang-S", UnixSource: UnixSourceAdmin}, []string{"ok", "nobody"}, []string{"Wang-S", "nobody"}},
		{"set and fine", User{Email: "root@example.org", Unix: "ops1", UnixSource: UnixSourceSSO}, []string{"ops_old"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnsafeUnixNames(&tc.user, tc.extra); !slices.Equal(got, tc.want) {
				t.Errorf("UnsafeUnixNames = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestUnixIdentityValidate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        UnixIdentity
		wantExtra []string
		wantErr   bool
	}{
		{"dedup", UnixIdentity{Name: " zs ", Extra: []string{"a", "zs", "a", " b"}, Source: UnixSourceAdmin}, []string{"a", "b"}, false},
		{"clear", UnixIdentity{}, []string{}, false},
		{"extra without primary", UnixIdentity{Extra: []string{"a"}, Source: UnixSourceAdmin}, []string{"a"}, true},
		{"bad extra", UnixIdentity{Name: "zs", Extra: []string{"a;b"}, Source: UnixSourceAdmin}, []string{"a;b"}, true},
		{"bad source", UnixIdentity{Name: "zs", Source: "x"}, []string{}, true},
		{"no source", UnixIdentity{Name: "zs"}, []string{}, true},
		{"system account", UnixIdentity{Name: "zs", Extra: []string{"nobody"}, Source: UnixSourceAdmin}, []string{"nobody"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.in.Validate()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !slices.Equal(tc.in.Extra, tc.wantExtra) && !(len(tc.in.Extra) == 0 && len(tc.wantExtra) == 0) {
				t.Errorf("extra = %v, want %v", tc.in.Extra, tc.wantExtra)
			}
		})
	}
	if got := ParseUnixNames("a, b  c,,d"); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("ParseUnixNames = %v", got)
	}
}

// TestUnixIdentityValidateKeeping: a name the user already has passes even
// if the rule now refuses it; a new one does not.
func TestUnixIdentityValidateKeeping(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      UnixIdentity
		kept    []string
		wantErr bool
	}{
		{"kept extra", UnixIdentity{Name: "zs", Extra: []string{"Wang-S"}, Source: UnixSourceSSO}, []string{"Wang-S"}, false},
		{"kept primary", UnixIdentity{Name: "Legacy", Source: UnixSourceSSO}, []string{"Legacy"}, false},
		{"new bad extra", UnixIdentity{Name: "zs", Extra: []string{"Wang-S", "nobody"}, Source: UnixSourceSSO}, []string{"Wang-S"}, true},
		{"nothing kept", UnixIdentity{Name: "zs", Extra: []string{"Wang-S"}, Source: UnixSourceSSO}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.in.ValidateKeeping(tc.kept); (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}
