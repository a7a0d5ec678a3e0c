package i18n_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/views/i18n"
)

func TestCatalogsHaveTheSameKeys(t *testing.T) {
	b := i18n.MustLoad()
	en, zh := set(b.Keys("en")), set(b.Keys("zh-CN"))
	if len(en) == 0 {
		t.Fatal("no English messages loaded")
	}
	for k := range en {
		if !zh[k] {
			t.Errorf("zh-CN lacks %q", k)
		}
	}
	for k := range zh {
		if !en[k] {
			t.Errorf("en lacks %q", k)
		}
	}
}

// keyUse finds literal message keys in Go and templ sources: T("key", M("key".
var keyUse = regexp.MustCompile(`(?:\bT|\bM|Msg)\("([a-z0-9_]+\.[a-zA-Z0-9_.\-]+)"`)

func TestEveryUsedKeyExists(t *testing.T) {
	b := i18n.MustLoad()
	en := set(b.Keys("en"))
	root := filepath.Join("..", "..")
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() && (info.Name() == ".git" || info.Name() == "node_modules" || info.Name() == "agent") {
			return filepath.SkipDir
		}
		if !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".templ")) || strings.HasSuffix(path, "_templ.go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range keyUse.FindAllStringSubmatch(string(src), -1) {
			if !en[m[1]] {
				t.Errorf("%s uses %q, which no catalog defines", path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestTranslate(t *testing.T) {
	b := i18n.MustLoad()
	tests := []struct {
		lang, key string
		kv        []any
		want      string
	}{
		{"en", "err.too_long", []any{"Max", 100}, "At most 100 characters."},
		{"zh-CN", "err.too_long", []any{"Max", 100}, "最多 100 个字符。"},
		{"en", "err.booking_conflict", []any{"Count", 1}, "The GPUs are already booked at that time."},
		{"en", "err.booking_conflict", []any{"Count", 3}, "The GPUs are already booked at that time (3 bookings in the way)."},
		{"fr", "nav.calendar", nil, "Calendar"},
	}
	for _, tt := range tests {
		t.Run(tt.lang+"/"+tt.key, func(t *testing.T) {
			if got := b.For(tt.lang).T(tt.key, tt.kv...); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	tests := []struct{ setting, accept, want string }{
		{"zh-CN", "en-US", "zh-CN"},
		{"", "zh-CN,zh;q=0.9,en;q=0.8", "zh-CN"},
		{"", "zh-TW,en;q=0.5", "en"},
		{"", "de-DE", "en"},
		{"", "", "en"},
		{"xx", "zh", "zh-CN"},
		{"", "zh-Hans-CN", "zh-CN"},
		{"", "zh-Hant", "en"},
		{"", "zh-HK,zh;q=0.5", "zh-CN"},
		{"", "fr-FR,zh-CN;q=0.8", "zh-CN"},
		{"", "fr-FR,en;q=0.9,zh-CN;q=0.8", "en"},
		{"", "not a header;;", "en"},
	}
	for _, tt := range tests {
		t.Run(tt.setting+"|"+tt.accept, func(t *testing.T) {
			if got := i18n.Match(tt.setting, tt.accept); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func set(keys []string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

func TestWhatIsTranslated(t *testing.T) {
	b := i18n.MustLoad()
	tests := []struct{ lang, what, want string }{
		{"en", "booking", "The booking does not exist."},
		{"zh-CN", "booking", "该预订不存在。"},
		{"zh-CN", "group mapping", "该用户组映射不存在。"},
		{"zh-CN", "GPU", "该GPU不存在。"},
		{"en", "something new", "The something new does not exist."},
	}
	for _, tt := range tests {
		t.Run(tt.lang+"/"+tt.what, func(t *testing.T) {
			if got := b.For(tt.lang).T("err.not_found", "What", tt.what); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
