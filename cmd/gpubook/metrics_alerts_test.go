package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// eventualSeries are documented selectors whose series appear only once
// what they alert on has happened; the family and its labels must exist.
var eventualSeries = map[string]string{
	`gpubook_http_requests_total{status=~"5.."}`: "no request failed in the test's session",
}

var (
	promqlBlock = regexp.MustCompile("(?s)```promql\n(.*?)```")
	selectorRE  = regexp.MustCompile(`\b(gpubook_[a-z0-9_]+)(\{[^}]*\})?`)
	matcherRE   = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"`)
	byRE        = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
)

// checkAlertSelectors reads the alert expressions of docs/deploy.md and
// checks each series selector against a scrape: it matches a series, and
// every label it names or groups by is one the target exposes, not one
// that Prometheus itself sets on every series (job, instance).
func checkAlertSelectors(t *testing.T, f families) {
	t.Helper()
	doc, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := promqlBlock.FindAllStringSubmatch(string(doc), -1)
	if len(blocks) == 0 {
		t.Fatal("docs/deploy.md has no promql block")
	}
	n := 0
	for _, b := range blocks {
		for _, line := range strings.Split(b[1], "\n") {
			expr, _, _ := strings.Cut(line, "#")
			for _, sel := range selectorRE.FindAllStringSubmatch(expr, -1) {
				n++
				checkSelector(t, f, sel[0], sel[1], matcherRE.FindAllStringSubmatch(sel[2], -1), byRE.FindAllStringSubmatch(expr, -1))
			}
		}
	}
	if n < 5 {
		t.Errorf("found %d selectors in the documented alerts, want at least 5", n)
	}
	for name, fam := range f {
		for _, m := range fam.GetMetric() {
			for _, reserved := range []string{"job", "instance"} {
				if label(m, reserved) != "" {
					t.Errorf("%s carries a %q label, which Prometheus overwrites with the target's", name, reserved)
				}
			}
		}
	}
}

// checkDashboard checks every query of the Grafana dashboard the same
// way: each of its series selectors matches a series of the scrape.
func checkDashboard(t *testing.T, f families) {
	t.Helper()
	raw, err := os.ReadFile("../../docs/deploy/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	n := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			sels := selectorRE.FindAllStringSubmatch(tg.Expr, -1)
			if len(sels) == 0 {
				t.Errorf("panel %q: query %q names no gpubook series", p.Title, tg.Expr)
			}
			for _, sel := range sels {
				n++
				checkSelector(t, f, sel[0], sel[1], matcherRE.FindAllStringSubmatch(sel[2], -1), byRE.FindAllStringSubmatch(tg.Expr, -1))
			}
		}
	}
	if n < 10 {
		t.Errorf("found %d selectors in the dashboard, want at least 10", n)
	}
}

func checkSelector(t *testing.T, f families, sel, name string, matchers, groups [][]string) {
	t.Helper()
	fam := f[name]
	for _, suffix := range []string{"_bucket", "_sum", "_count"} { // a histogram's series
		if base := strings.TrimSuffix(name, suffix); fam == nil && base != name && f[base].GetType() == dto.MetricType_HISTOGRAM {
			fam = f[base]
		}
	}
	if fam == nil || len(fam.GetMetric()) == 0 {
		t.Errorf("selector %s: no series %s in the scrape", sel, name)
		return
	}
	has := func(l string) bool {
		for _, m := range fam.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == l {
					return true
				}
			}
		}
		return false
	}
	for _, g := range groups {
		for _, l := range strings.Split(g[1], ",") {
			if l = strings.TrimSpace(l); l != "" && l != "le" && !has(l) {
				t.Errorf("selector %s: groups by %q, which no series of %s has", sel, l, name)
			}
		}
	}
	for _, m := range matchers {
		if !has(m[1]) && !strings.HasPrefix(m[2], "!") {
			t.Errorf("selector %s: no series of %s has the label %q", sel, name, m[1])
		}
	}
	if _, ok := eventualSeries[sel]; ok {
		return
	}
	for _, s := range fam.GetMetric() {
		if matchesAll(s, matchers) {
			return
		}
	}
	t.Errorf("selector %s matches none of the %d series of %s", sel, len(fam.GetMetric()), name)
}

func matchesAll(s *dto.Metric, matchers [][]string) bool {
	for _, m := range matchers {
		v := label(s, m[1])
		re := regexp.MustCompile("^(?:" + m[3] + ")$")
		ok := map[string]bool{"=": v == m[3], "!=": v != m[3], "=~": re.MatchString(v), "!~": !re.MatchString(v)}[m[2]]
		if !ok {
			return false
		}
	}
	return true
}
