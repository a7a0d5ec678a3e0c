package views

import (
	"os"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models"
)

// TestInstallCommandMatchesREADME: the node's enrol page and
// agent/README.md ("Install, upgrade, uninstall") give one install
// command, with the token prefix the portal really issues.
func TestInstallCommandMatchesREADME(t *testing.T) {
	got := installCommand(AdminEnrollView{Token: models.EnrollTokenPrefix + "...", PortalURL: "https://gpubook.example.org"})
	if want := "sudo GPUBOOK_AGENT_TOKEN=" + models.EnrollTokenPrefix + "... ./install.sh https://gpubook.example.org"; got != want {
		t.Errorf("enrol page: %q, want %q", got, want)
	}
	readme, err := os.ReadFile("../agent/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "\n"+got+"\n") {
		t.Errorf("agent/README.md lacks the enrol page's command on a line of its own:\n%s", got)
	}
}
