package models_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestModelsImportNothingAbove pins the dependency direction of
// ARCHITECTURE.md: no package under models, nor its in-package tests,
// imports views, handlers, web or cmd, directly or through another
// package. Mail is rendered through interfaces the domain declares
// (reports.Mail, notify.Mail) and cmd wires views.Mail into them; external
// test packages (package x_test) may wire views the same way, as cmd does.
func TestModelsImportNothingAbove(t *testing.T) {
	const module = "github.com/gpubook/gpubook/"
	above := []string{"views", "handlers", "web", "cmd"}
	isAbove := func(path string) bool {
		for _, a := range above {
			if path == module+a || strings.HasPrefix(path, module+a+"/") {
				return true
			}
		}
		return false
	}
	// Run from this package's folder, so ./... is models/... .
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}}`, "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := 0
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		parts := strings.Split(strings.TrimSpace(line), "|")
		if len(parts) != 3 || !strings.HasPrefix(parts[0], module) {
			continue
		}
		pkg := parts[0]
		if isAbove(pkg) {
			t.Errorf("models depend on %s", pkg)
			continue
		}
		seen++
		for _, imp := range strings.Fields(parts[1] + " " + parts[2]) {
			if isAbove(imp) {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
	if seen < 5 {
		t.Fatalf("go list found %d gpubook packages under models; want the whole tree:\n%s", seen, out)
	}
}
