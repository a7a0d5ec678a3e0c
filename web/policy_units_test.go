package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestPolicyLengthTakesAUnit: the admin types "8h" for the length of one
// booking and it is saved as 8 hours, not refused.
func TestPolicyLengthTakesAUnit(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			admin := f.signedIn(f.alice)
			admin.Get("/admin/policies")
			res := admin.Post("/admin/policies/limits", url.Values{"scope": {"global"}, "max_length": {"8h"}})
			if res.Code != http.StatusSeeOther {
				t.Fatalf("save 8h: %d %s", res.Code, res.Body.String())
			}
			lims, err := f.env.DB.PolicyLimits(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, l := range lims {
				got[l.Rule] = l.Value
			}
			if got["max_length"] != 480 {
				t.Errorf("max_length = %d minutes, want 480 (all: %v)", got["max_length"], got)
			}
		})
	}
}
