package views

import "testing"

func TestJoinClauses(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"A100: 4 free", "for more than a day.", "A100: 4 free for more than a day."},
		{"A100：空闲 4 块", "，一天以上无人预订。", "A100：空闲 4 块，一天以上无人预订。"},
		{"空闲 4 块", "可用 3 小时", "空闲 4 块可用 3 小时"},
		{"a", "", "a"},
	} {
		if got := joinClauses(c.a, c.b); got != c.want {
			t.Errorf("joinClauses(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}
