package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// The booking form says which GPUs are taken over the chosen range, by
// whom and until when, before anything is submitted, and the fragment
// htmx swaps when the range changes says the same for the new range.
func TestBookingFormShowsGPUStates(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newCalFixture(t, d)
			a0, a1, a2 := f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1), f.gpu(t, "node-a", 2)
			f.book(t, f.bob, []int64{a1}, 2, 4, "") // 12:12–14:12
			if err := f.env.DB.SetGPUService(t.Context(), a2, false, "fan", models.CLIActor); err != nil {
				t.Fatal(err)
			}
			c := f.signedIn(f.alice)
			res := c.Get("/bookings/new?node=" + itoa(f.nodes[0].ID) + "&start=2026-06-03T13:00Z&end=2026-06-03T15:00Z")
			if res.Code != http.StatusOK {
				t.Fatalf("status %d", res.Code)
			}
			for id, want := range map[int64]string{a0: "free", a1: "taken", a2: "out"} {
				if got, _ := res.Doc.Find(testid("gpu-state-" + itoa(id))).Attr("data-state"); got != want {
					t.Errorf("GPU %d state = %q, want %q", id, got, want)
				}
			}
			if got := res.Doc.Find(testid("gpu-state-" + itoa(a1))).Text(); !strings.Contains(got, "taken by Bob Builder until Wed 3 Jun 14:12") {
				t.Errorf("taken GPU says %q", got)
			}
			// The range moves past Bob's booking: the fragment says free.
			form := url.Values{"node": {itoa(f.nodes[0].ID)}, "gpu": {itoa(a1)}, "starts_at": {"2026-06-03T14:12"}, "duration": {"2"}}
			frag := c.Post("/bookings/gpus", form)
			if frag.Code != http.StatusOK {
				t.Fatalf("fragment status %d: %s", frag.Code, frag.Body.String())
			}
			if got, _ := frag.Doc.Find(testid("gpu-state-" + itoa(a1))).Attr("data-state"); got != "free" {
				t.Errorf("after the range moved, GPU 1 = %q, want free", got)
			}
			if _, checked := frag.Doc.Find(testid("pick-gpu-" + itoa(a1))).Attr("checked"); !checked {
				t.Error("the fragment lost the ticked box")
			}
			if strings.Contains(frag.Body.String(), "<html") {
				t.Error("the fragment is a whole page")
			}
			// And back onto it, in Chinese.
			c.Header.Set("Accept-Language", "zh-CN")
			form.Set("starts_at", "2026-06-03T11:00")
			frag = c.Post("/bookings/gpus", form)
			if got := frag.Doc.Find(testid("gpu-state-" + itoa(a1))).Text(); !strings.Contains(got, "已被 Bob Builder 占用") {
				t.Errorf("zh-CN taken GPU says %q", got)
			}
		})
	}
}
