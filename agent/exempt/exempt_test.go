package exempt

import "testing"

func TestExempt(t *testing.T) {
	rules := Default()
	rules.Users = append(rules.Users, "svc-backup")
	rules.Groups = []string{"gpuadmins"}
	groups := func(u string) []string {
		if u == "carol" {
			return []string{"carol", "gpuadmins"}
		}
		return []string{u}
	}
	tests := []struct {
		name string
		user string
		uid  int
		want bool
	}{
		{"root by name", "root", 0, true},
		{"system account by uid (gdm)", "gdm", 120, true},
		{"listed user", "svc-backup", 5000, true},
		{"exempt group", "carol", 1003, true},
		{"ordinary user", "alice", 1001, false},
		{"unknown uid, ordinary name", "bob", -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rules.Exempt(tt.user, tt.uid, groups); got != tt.want {
				t.Errorf("Exempt(%q, %d) = %v, want %v", tt.user, tt.uid, got, tt.want)
			}
		})
	}
	none := Rules{SystemUIDMax: -1}
	if got := none.Exempt("gdm", 120, nil); got {
		t.Error("SystemUIDMax -1 still exempted uid 120")
	}
}
