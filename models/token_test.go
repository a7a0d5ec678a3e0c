package models

import (
	"testing"
	"time"
)

func TestCheckTokenCap(t *testing.T) {
	revoked := time.Unix(0, 0)
	tokens := func(active, gone int) []APIToken {
		var out []APIToken
		for range active {
			out = append(out, APIToken{})
		}
		for range gone {
			out = append(out, APIToken{RevokedAt: &revoked})
		}
		return out
	}
	tests := []struct {
		name         string
		active, gone int
		wantErr      bool
	}{
		{"none yet", 0, 0, false},
		{"one below the cap", MaxActiveTokens - 1, 0, false},
		{"at the cap", MaxActiveTokens, 0, true},
		{"revoked ones do not count", MaxActiveTokens - 1, 50, false},
		{"above the cap (from before it existed)", MaxActiveTokens + 3, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckTokenCap(tokens(tt.active, tt.gone))
			if got := err != nil; got != tt.wantErr {
				t.Fatalf("error = %v, want one: %v", err, tt.wantErr)
			}
			if err != nil && ErrorCode(err) != EINVALID {
				t.Errorf("code = %q, want %q", ErrorCode(err), EINVALID)
			}
		})
	}
}
