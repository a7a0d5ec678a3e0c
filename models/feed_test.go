package models

import (
	"strings"
	"testing"
)

func TestValidFeedToken(t *testing.T) {
	plain, hash, err := NewFeedSecret()
	if err != nil {
		t.Fatal(err)
	}
	if !ValidFeedToken(plain) || hash != HashToken(plain) || !strings.HasPrefix(plain, FeedTokenPrefix) {
		t.Fatalf("fresh token %q (hash %q) not valid", plain, hash)
	}
	for name, s := range map[string]string{
		"empty":          "",
		"prefix only":    FeedTokenPrefix,
		"api token":      "gpb_" + plain[4:],
		"one short":      plain[:len(plain)-1],
		"one long":       plain + "a",
		"upper case":     strings.ToUpper(plain[:4]) + plain[4:],
		"base32 digit 1": plain[:len(plain)-1] + "1",
		"dot":            plain[:len(plain)-1] + ".",
		"non-ASCII":      plain[:len(plain)-2] + "é",
	} {
		if ValidFeedToken(s) {
			t.Errorf("%s: %q taken as a feed token", name, s)
		}
	}
}
