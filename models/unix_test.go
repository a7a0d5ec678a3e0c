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
		{"zs2023", true}, {"s.wang", true}, {"_svc", true}, {"Wang-S", true}, {"a", true},
		{"", false}, {"root", false}, {"-x", false}, {"12345", false}, {"a b", false}, {"a:b", false}, {"é", false},
		{"abcdefghijklmnopqrstuvwxyz012345", true}, {"abcdefghijklmnopqrstuvwxyz0123456", false},
	} {
		if got := ValidUnixName(tc.name); got != tc.want {
			t.Errorf("ValidUnixName(%q) = %v, want %v", tc.name, got, tc.want)
		}
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
