package web_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestMIGSliceNames: a booked MIG slice is named like its calendar row,
// "GPU 7 · 1g.10gb", never by its own index (64 and up): on My bookings,
// in a conflict line (in Chinese too), on the admin's out-of-service page,
// in the notice its holder receives when it moves, in the audit log and
// in the admin's list of the node's units.
func TestMIGSliceNames(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			testMIGSliceNames(t, d)
		})
	}
}

func testMIGSliceNames(t *testing.T, dialect string) {
	f := newPrioWeb(t, dialect)
	ctx := context.Background()
	f.addNode(t, "node-c", 8, "NVIDIA A100-SXM4-80GB", 81920)
	f.env.SplitMIG("node-c", map[int][]string{7: slices.Repeat([]string{"1g.10gb"}, 7)})
	nodes, err := f.env.DB.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var inst []models.GPU
	for _, n := range nodes {
		for _, g := range n.GPUs {
			if n.Name == "node-c" && g.IsMIGInstance() {
				inst = append(inst, g)
			}
		}
	}
	slices.SortFunc(inst, func(a, b models.GPU) int { return a.MIGGI - b.MIGGI })
	if len(inst) != 7 || inst[0].Index < 64 {
		t.Fatalf("instances = %+v, want 7 with indexes from 64", inst)
	}
	const name = "GPU 7 · 1g.10gb"
	b := f.book(t, f.bob, []int64{inst[0].ID}, 1, 3, "notebook")

	row := f.signedIn(f.bob).Get("/bookings").Doc.Find(testid("booking-" + itoa(b.ID)))
	if txt := row.Text(); !strings.Contains(txt, name) || strings.Contains(txt, "GPU 6") {
		t.Errorf("My bookings row = %q, want it to name %q", strings.Join(strings.Fields(txt), " "), name)
	}

	erin := f.signedIn(f.erin) // reads Chinese
	erin.Get("/bookings/new")
	res := erin.Post("/bookings", url.Values{"gpu": {itoa(inst[0].ID)}, "starts_at": {"2026-06-03T13:00"}, "ends_at": {"2026-06-03T14:00"}})
	if res.Code != http.StatusConflict {
		t.Fatalf("conflicting booking: %d, want 409", res.Code)
	}
	if got := res.Doc.Find(testid("conflicts")).Text(); !strings.Contains(got, name+" 已被 Bob Builder 预订") {
		t.Errorf("conflict: %d %q, want the slice named %q", res.Code, got, name)
	}

	alice := f.signedIn(f.alice)
	if got := alice.Get("/admin/nodes").Doc.Find(testid("gpu-row-"+itoa(inst[0].ID)) + " td").First().Text(); got != "7 · 1g.10gb" {
		t.Errorf("admin nodes # of the slice = %q, want 7 · 1g.10gb", got)
	}
	path := "/admin/gpus/" + itoa(inst[0].ID) + "/service"
	form := url.Values{"in_service": {"false"}, "reason": {"ECC errors"}}
	page := alice.Post(path, form)
	if got := page.Doc.Find(testid("service-row-" + itoa(b.ID))).Text(); !strings.Contains(got, "Move to "+name) {
		t.Errorf("service page row = %q, want a move to %q", got, name)
	}
	if got := page.Doc.Find("h1").Text(); got != "Take node-c "+name+" out of service" {
		t.Errorf("service page title = %q", got)
	}
	form.Set("confirm", "1")
	form.Set("action_"+itoa(b.ID), models.ServiceMove)
	if res := alice.Post(path, form); res.Code != http.StatusSeeOther {
		t.Fatalf("confirm: %d %s", res.Code, res.Body.String())
	}
	if moved, _ := f.env.DB.Booking(ctx, b.ID); !slices.Equal(moved.GPUIDs, []int64{inst[1].ID}) {
		t.Fatalf("booking GPUs = %v, want moved to the next slice %d", moved.GPUIDs, inst[1].ID)
	}
	want := "node-c " + name + " was taken out of service (ECC errors): your booking #" + itoa(b.ID) + " was moved to node-c " + name + "."
	if got := strings.TrimSpace(f.signedIn(f.bob).Get("/notifications").Doc.Find(testid("notice-text")).Text()); got != want {
		t.Errorf("notice = %q\nwant %q", got, want)
	}
	m, err := f.env.DB.OutboxMessageByKey(ctx, "service:booking:"+itoa(b.ID)+":"+itoa(f.now.Unix()))
	if err != nil || !strings.Contains(m.Subject, name) || strings.Contains(m.TextBody, "GPU 6") {
		t.Errorf("email: %v subject %q body %q", err, m.Subject, m.TextBody)
	}
	sentences, _, _ := auditRows(alice.Get("/admin/audit").Doc)
	if !slices.ContainsFunc(sentences, func(s string) bool { return strings.Contains(s, "took node-c "+name+" out of service: ECC errors") }) {
		t.Errorf("audit sentences lack the slice's name:\n%s", strings.Join(sentences, "\n"))
	}
}
