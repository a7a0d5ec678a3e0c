package models

import "testing"

// TestLookalikeEmails: issue 36's look-alikes of admin@lab.example, and
// addresses in one script (or scripts written together) that must pass.
func TestLookalikeEmails(t *testing.T) {
	for _, tc := range []struct {
		name, raw, normalized string
		valid                 bool
	}{
		{"plain", " Admin@Lab.Example ", "admin@lab.example", true},
		{"fullwidth ａ folds", "\uff41dmin@lab.example", "admin@lab.example", true},
		{"mathematical bold folds", "\U0001d41admin@lab.example", "admin@lab.example", true},
		{"zero-width space", "adm\u200bin@lab.example", "adm\u200bin@lab.example", false},
		{"zero-width joiner", "adm\u200din@lab.example", "adm\u200din@lab.example", false},
		{"soft hyphen", "adm\u00adin@lab.example", "adm\u00adin@lab.example", false},
		{"word joiner", "admin\u2060@lab.example", "admin\u2060@lab.example", false},
		{"BOM", "\ufeffadmin@lab.example", "\ufeffadmin@lab.example", false},
		{"variation selector", "admin\ufe0f@lab.example", "admin\ufe0f@lab.example", false},
		{"Hangul filler", "admin\u3164@lab.example", "admin\u1160@lab.example", false},
		{"Cyrillic і in Latin", "adm\u0456n@lab.example", "adm\u0456n@lab.example", false},
		{"Greek ο in Latin", "r\u03bf\u03bft@lab.example", "r\u03bf\u03bft@lab.example", false},
		{"Cyrillic а in a domain label", "admin@l\u0430b.example", "admin@l\u0430b.example", false},
		{"Han", "张三@例子.中国", "张三@例子.中国", true},
		{"Latin and Han", "zhang三@lab.example", "zhang三@lab.example", true},
		{"Latin and kana", "taro.たろう@lab.example", "taro.たろう@lab.example", true},
		{"Cyrillic parts", "иван@пример.рф", "иван@пример.рф", true},
		{"Latin local part, Cyrillic domain", "ivan@пример.рф", "ivan@пример.рф", true},
		{"accents", "jose.müller@lab.example", "jose.müller@lab.example", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NormalizeEmail(tc.raw)
			if got != tc.normalized {
				t.Errorf("NormalizeEmail(%q) = %q, want %q", tc.raw, got, tc.normalized)
			}
			if v := ValidEmail(got); v != tc.valid {
				t.Errorf("ValidEmail(%q) = %v, want %v", got, v, tc.valid)
			}
		})
	}
}

// TestSSOIdentityFoldedEmailIsUnverified: the IdP verified the fullwidth
// string, not the address it folds to, so it may not link an account.
func TestSSOIdentityFoldedEmailIsUnverified(t *testing.T) {
	for _, tc := range []struct {
		email        string
		wantVerified bool
	}{
		{"\uff41dmin@lab.example", false},
		{" Admin@Lab.Example", true},
	} {
		id := SSOIdentity{Subject: "s", Email: tc.email, EmailVerified: true, Name: "A"}
		if err := id.Validate(); err != nil {
			t.Fatal(err)
		}
		if id.Email != "admin@lab.example" || id.EmailVerified != tc.wantVerified {
			t.Errorf("%q: email %q verified %v, want admin@lab.example %v", tc.email, id.Email, id.EmailVerified, tc.wantVerified)
		}
	}
}
