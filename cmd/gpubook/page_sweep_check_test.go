package main

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

var (
	// longDecimal is a number with more than two decimals; dotted
	// quads (addresses) are taken out first.
	longDecimal = regexp.MustCompile(`\d\.\d{3,}`)
	dottedQuad  = regexp.MustCompile(`\d+(\.\d+){2,}`)
	// fraction is a number with a decimal part, which must carry its unit
	// unless a table's header names it.
	fraction = regexp.MustCompile(`\d+\.\d+`)
	unitNext = regexp.MustCompile(`^\s*(GPU-hours?|GPU 小时|GPU-h|h\b|hours?\b|小时|%|GiB|MiB|GB|TB|min\b|分钟|×|x\b|/|(free )?GPUs?\b|块|of them\b|times\b|倍)`)
	// factorBefore: a ratio is its own unit ("fair-share factor 0.5",
	// and the scale that explains it: "0.5 exactly your share").
	factorBefore = regexp.MustCompile(`factor|因子|系数|weight|权重`)
	// clock is a time of day; dayBefore is what must come before one
	// that is not today's: a date, a weekday's date, or today/tomorrow/
	// yesterday, or the earlier end of a same-day range ("09:00–17:00").
	clock      = regexp.MustCompile(`\b([01]?\d|2[0-3]):[0-5]\d\b`)
	dayBefore  = regexp.MustCompile(`(\d{4}-\d{2}-\d{2}|\b\d{1,2}-\d{1,2}|\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)( \d{4})?|\d{1,2}月\d{1,2}日( 周.)?|today|tomorrow|yesterday|今天|明天|昨天|\d:\d\d\s*[–-]\s*|(Mon|Tue|Wed|Thu|Fri|Sat|Sun)(day|sday|nesday|rsday|urday)?( at)?|周.|星期.|(如|e\.g\.|for example,?))\s*$`)
	rangeStart = regexp.MustCompile(`(\d\d:\d\d)\s*[–-]\s*$`)
	// zoneOffset is a clock that is a zone's offset ("UTC+08:00").
	zoneOffset = regexp.MustCompile(`[+−-]$`)
	// English on a Chinese page: words in Latin letters beyond the
	// allowed (product, units, codes) and the demo's own data.
	latinWord   = regexp.MustCompile(`[A-Za-z][A-Za-z]+`)
	latinWhole  = regexp.MustCompile(`[\w.+-]+@[\w.-]+|[A-Z]\d{2,3}[\w-]*|HBM\d|SXM\d[\w-]*|\d+GB|\dg\.\d+gb|gpubook \w+( \w+)?|[A-Z][a-z]+/[A-Z][a-z_]+`)
	latinAllow  = map[string]bool{}
	latinTokens = "gpubook GPU GPUs ID UUID UTC CST CET CEST API CSV JSON SSO OIDC ssh Unix GiB MiB NVIDIA NVML English IP root CUDA_VISIBLE_DEVICES CUDA VISIBLE DEVICES PDF HTTPS URL iCal ICS MIG Asia Shanghai Europe Berlin Etc GMT"
)

func init() {
	for _, w := range strings.Fields(latinTokens) {
		latinAllow[w] = true
	}
}

// where a text node sits, which some checks take into account.
type where struct {
	cell    bool // in a table cell, whose header names the unit
	doc     bool // in a document (.prose): formulas and example times
	foreign bool // in an element marked in another language (lang="en")
}

// textProblems checks one text node.
func textProblems(text string, at where, lang string, data []string) []string {
	var out []string
	flat := strings.Join(strings.Fields(text), " ")
	nums := dottedQuad.ReplaceAllString(flat, " ")
	if m := longDecimal.FindString(nums); m != "" {
		out = append(out, "a number with more than two decimals: "+quote(flat))
	}
	if !at.cell && !at.doc {
		for _, ix := range fraction.FindAllStringIndex(nums, -1) {
			if !unitNext.MatchString(nums[ix[1]:]) && !factorBefore.MatchString(nums[:ix[0]]) {
				out = append(out, "a number without its unit: "+quote(flat))
				break
			}
		}
	}
	for _, ix := range clock.FindAllStringIndex(flat, -1) {
		if at.doc {
			break
		}
		before := flat[:ix[0]]
		if ix[1] < len(flat) && flat[ix[1]] == ':' || zoneOffset.MatchString(before) {
			continue // a time with seconds is a log's; an offset is a zone
		}
		if !dayBefore.MatchString(before) {
			out = append(out, "a time without its day: "+quote(flat))
			break
		}
		// "00:00–00:00", "22:00–06:00": a range that crosses midnight
		// without its second date.
		if m := rangeStart.FindStringSubmatch(before); m != nil && m[1] >= pad(flat[ix[0]:ix[1]]) {
			out = append(out, "a range across midnight without its second date: "+quote(flat))
			break
		}
	}
	if lang == "zh-CN" && !at.foreign {
		if w := englishWords(flat, data); len(w) > 0 {
			out = append(out, "English on a Chinese page "+strings.Join(w, " ")+": "+quote(flat))
		}
	}
	return out
}

// englishWords are the Latin words of text that are neither allowed nor
// part of the demo's data.
func englishWords(text string, data []string) []string {
	data = slices.Clone(data) // the longest first: "LLM 微调" before the initials "LM"
	slices.SortFunc(data, func(a, b string) int { return len(b) - len(a) })
	for _, d := range data {
		if d != "" {
			text = strings.ReplaceAll(text, d, " ")
		}
	}
	text = latinWhole.ReplaceAllString(text, " ")
	seen := map[string]bool{}
	for _, w := range latinWord.FindAllString(text, -1) {
		if !latinAllow[w] {
			seen[w] = true
		}
	}
	words := make([]string, 0, len(seen))
	for w := range seen {
		words = append(words, w)
	}
	sort.Strings(words)
	return words
}

func pad(clock string) string {
	if len(clock) == 4 {
		return "0" + clock
	}
	return clock
}

func quote(s string) string {
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return "«" + s + "»"
}

// The sweep's checks catch what issue 41 found and pass what it asks for.
func TestSweepChecks(t *testing.T) {
	tests := []struct {
		name, text string
		inCell     bool
		lang       string
		bad        bool
	}{
		{"issue: raw float, no unit", "36.016666666666666 left this week.", false, "en", true},
		{"issue: raw float with unit", "Used 52.733333333333334 GPU-hours in the last 7 days.", false, "en", true},
		{"issue: zh raw float", "过去 7 天使用了 0.7166666666666667 GPU 小时。", false, "zh-CN", true},
		{"fraction without unit", "36.02 left this week.", false, "en", true},
		{"formatted", "36.02 GPU-hours left this week.", false, "en", false},
		{"zh formatted", "本周剩余 36.02 GPU 小时。", false, "zh-CN", false},
		{"table cell under a unit header", "36.0", true, "en", false},
		{"percent", "efficiency 37.5%", false, "en", false},
		{"factor", "Your fair-share factor is 0.50", false, "en", false},
		{"address", "from 192.168.10.125", false, "en", false},
		{"issue: time without date", "Marco Rossi until 17:00", false, "en", true},
		{"today", "Marco Rossi until today 17:00", false, "en", false},
		{"another day", "until Tue 8 Dec 17:00", false, "en", false},
		{"zh another day", "至 12月8日 周二 17:00", false, "zh-CN", false},
		{"same-day range", "Mon 7 Dec 09:00–17:00", false, "en", false},
		{"issue: midnight range", "Mon 7 Dec 00:00–00:00", false, "en", true},
		{"overnight range", "Mon 7 Dec 22:00–06:00", false, "en", true},
		{"both dates", "Mon 7 Dec 00:00–Tue 8 Dec 00:00", false, "en", false},
		{"date and time", "2026-12-07 17:00 CST", false, "en", false},
		{"English on zh", "预订 Cancel", false, "zh-CN", true},
		{"weekday in a week's chart", "周五 16:00 0%", false, "zh-CN", false},
		{"an example", "开始（24 小时制，如 09:00）", false, "zh-CN", false},
		{"data on zh", "Marco Rossi 的预订", false, "zh-CN", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := textProblems(tt.text, where{cell: tt.inCell}, tt.lang, []string{"Marco Rossi"})
			if (len(got) > 0) != tt.bad {
				t.Errorf("textProblems(%q) = %v, want bad %v", tt.text, got, tt.bad)
			}
		})
	}
}
