// Package i18n translates every user-visible string of gpubook. Catalogs are
// JSON files named AREA.LANG.json under locales/ (core.en.json,
// booking.zh-CN.json, …): one file per area and language, so that parts of
// the product keep their strings apart; all files of a language merge.
package i18n

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/gpubook/gpubook/models"
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

//go:embed locales/*.json
var locales embed.FS

// Bundle holds every catalog; build it once at start-up.
type Bundle struct {
	b *goi18n.Bundle
	// keys per language, for completeness checks
	keys map[string]map[string]bool
}

// Load parses the embedded catalogs. It fails on a malformed file, so a
// broken catalog stops start-up instead of showing message IDs.
func Load() (*Bundle, error) {
	b := goi18n.NewBundle(language.English)
	b.RegisterUnmarshalFunc("json", json.Unmarshal)
	bundle := &Bundle{b: b, keys: map[string]map[string]bool{}}
	files, err := fs.Glob(locales, "locales/*.json")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := locales.ReadFile(f)
		if err != nil {
			return nil, err
		}
		mf, err := b.ParseMessageFileBytes(data, f)
		if err != nil {
			return nil, fmt.Errorf("i18n: %s: %w", f, err)
		}
		lang := mf.Tag.String()
		if bundle.keys[lang] == nil {
			bundle.keys[lang] = map[string]bool{}
		}
		for _, m := range mf.Messages {
			bundle.keys[lang][m.ID] = true
		}
	}
	return bundle, nil
}

// MustLoad is Load for tests and start-up paths that cannot go on without catalogs.
func MustLoad() *Bundle {
	b, err := Load()
	if err != nil {
		panic(err)
	}
	return b
}

// Keys returns the message IDs of a language, sorted.
func (b *Bundle) Keys(lang string) []string {
	out := make([]string, 0, len(b.keys[lang]))
	for k := range b.keys[lang] {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// supported are the catalog languages, English first: it is the answer
// when nothing in a header matches well.
var supported = language.NewMatcher([]language.Tag{language.English, language.SimplifiedChinese})

// Match picks the catalog language for a user setting or an Accept-Language
// header. Only an exact or high-confidence match counts: a Traditional
// Chinese reader (zh-TW, zh-Hant) is offered English, which many prefer to
// Simplified Chinese.
func Match(setting, acceptLanguage string) string {
	if models.ValidLanguage(setting) {
		return setting
	}
	tags, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err != nil || len(tags) == 0 {
		return "en"
	}
	if _, i, conf := supported.Match(tags...); i == 1 && conf >= language.High {
		return "zh-CN"
	}
	return "en"
}

// Translator renders messages in one language.
type Translator struct {
	Lang string
	l    *goi18n.Localizer
}

// For returns a translator for lang ("en" or "zh-CN"); English fills gaps.
func (b *Bundle) For(lang string) *Translator {
	if !models.ValidLanguage(lang) {
		lang = "en"
	}
	return &Translator{Lang: lang, l: goi18n.NewLocalizer(b.b, lang, "en")}
}

// T translates key with name/value pairs: T("home.signed_in_as", "Name", u.Name).
// A missing key renders as the key itself, which the catalog tests forbid.
func (t *Translator) T(key string, kv ...any) string {
	return t.Msg(models.M(key, kv...))
}

// Msg translates a domain message. A "What" naming a thing ("booking",
// "user") is itself translated through the catalog's "what." keys, so that
// "The booking does not exist" reads naturally in Chinese too.
func (t *Translator) Msg(m models.Msg) string {
	data := m.Data
	if w, ok := data["What"].(string); ok {
		key := "what." + strings.ReplaceAll(strings.ToLower(w), " ", "_")
		if s, err := t.l.Localize(&goi18n.LocalizeConfig{MessageID: key}); err == nil && s != "" {
			data = make(map[string]any, len(m.Data))
			for k, v := range m.Data {
				data[k] = v
			}
			data["What"] = s
		}
	}
	cfg := &goi18n.LocalizeConfig{MessageID: m.Key, TemplateData: data}
	if c, ok := m.Data["Count"]; ok {
		cfg.PluralCount = c
	}
	s, err := t.l.Localize(cfg)
	if err != nil || s == "" {
		return m.Key
	}
	return s
}

// Err translates the user-facing part of an error: its message and, for a
// validation error, each field's problem.
func (t *Translator) Err(err error) string {
	e := models.AsError(err)
	return t.Msg(e.Msg)
}

// Fields translates the per-field problems of an EINVALID error.
func (t *Translator) Fields(err error) map[string]string {
	if err == nil {
		return nil
	}
	e := models.AsError(err)
	out := make(map[string]string, len(e.Fields))
	for k, m := range e.Fields {
		out[k] = t.Msg(m)
	}
	return out
}
