package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestRefusalOffersRequest: wherever a booking is refused for lack of room
// (the form's 409, "book now" on home, find-a-slot), a link offers the
// priority request filled with what was asked, and the request form shows
// the booking form's node choice and who holds each GPU until when.
func TestRefusalOffersRequest(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newPrioWeb(t, d)
			a0, a1 := f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1)
			f.book(t, f.erin, []int64{a0, a1}, 0, 4, "")
			bob := f.signedIn(f.bob)
			start := f.now.Add(time.Hour).Format("2006-01-02T15:04")
			form := url.Values{"gpu": {itoa(a0)}, "starts_at": {start}, "duration": {"2"}, "note": {"train"}, "node": {itoa(f.nodes[0].ID)}}
			res := bob.Post("/bookings", form)
			link, ok := res.Doc.Find(testid("offer-request-link")).Attr("href")
			if res.Code != http.StatusConflict || !ok {
				t.Fatalf("409 without a request offered: %d", res.Code)
			}
			page := bob.Get(link)
			if page.Code != http.StatusOK {
				t.Fatalf("request form: %d", page.Code)
			}
			checkRequestForm(t, page.Doc, a0, start, "Erin Member")
			// The node picker's choice shows that node's GPUs.
			b0 := f.gpu(t, "node-b", 0)
			if res := bob.Get("/requests/new?node=" + itoa(f.nodes[1].ID) + "&starts_at=" + start); res.Doc.Find(testid("gpu-state-"+itoa(b0))).Length() != 1 {
				t.Errorf("the request form does not offer the chosen node's GPUs")
			}

			// Book now on home: both A100s asked, none free: the request asks for them.
			res = bob.Post("/bookings/now", url.Values{"node": {itoa(f.nodes[0].ID)}, "model": {"NVIDIA A100-SXM4-80GB"}, "count": {"4"}, "hours": {"2"}})
			link, ok = res.Doc.Find(testid("offer-request-link")).Attr("href")
			if res.Code != http.StatusUnprocessableEntity || !ok {
				t.Fatalf("book now without room offers no request: %d", res.Code)
			}
			q := mustQuery(t, link)
			if got := q["gpu"]; len(got) != 4 || q.Get("node") != itoa(f.nodes[0].ID) || q.Get("duration") != "2" {
				t.Errorf("book now's request link = %s", link)
			}

			// Find a slot: 4 A100 GPUs for 2 h from now: the first option is later.
			res = bob.Get("/slots?gpus=4&hours=2&model=" + url.QueryEscape("NVIDIA A100-SXM4-80GB"))
			link, ok = res.Doc.Find(testid("offer-request-link")).Attr("href")
			if res.Code != http.StatusOK || !ok {
				t.Fatalf("find-a-slot with no room now offers no request: %d", res.Code)
			}
			if q := mustQuery(t, link); len(q["gpu"]) != 4 || q.Get("duration") != "2" {
				t.Errorf("find-a-slot's request link = %s", link)
			}
			// Room now: nothing offered.
			res = bob.Get("/slots?gpus=1&hours=1&model=" + url.QueryEscape("NVIDIA H100 80GB HBM3"))
			if res.Doc.Find(testid("offer-request")).Length() != 0 {
				t.Errorf("a request offered where there is room")
			}
		})
	}
}

// checkRequestForm checks a pre-filled request form: the GPU ticked, the
// start as asked, a node picker, and the holder shown beside the GPU.
func checkRequestForm(t *testing.T, doc *goquery.Document, gpu int64, start, holder string) {
	t.Helper()
	if doc.Find(testid("request-form")).Length() != 1 || doc.Find(testid("node-picker")).Length() != 1 {
		t.Fatalf("request form or node picker missing")
	}
	if _, ticked := doc.Find(testid("pick-gpu-" + itoa(gpu))).Attr("checked"); !ticked {
		t.Errorf("GPU %d not ticked", gpu)
	}
	if got, _ := doc.Find("#starts_at").Attr("value"); got != start {
		t.Errorf("start = %q, want %q", got, start)
	}
	if got := doc.Find(testid("gpu-state-" + itoa(gpu))).Text(); !strings.Contains(got, holder) {
		t.Errorf("GPU state = %q, want its holder %s", got, holder)
	}
}

func mustQuery(t *testing.T, link string) url.Values {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || u.Path != "/requests/new" {
		t.Fatalf("request link %q: %v", link, err)
	}
	return u.Query()
}

// TestStaleApprovalSaysWhatChanged: a booking made while the lead reads
// the preview: the approval answers the request again (409), the new plan
// and, booking by booking, what changed, and the lead can approve it.
func TestStaleApprovalSaysWhatChanged(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newPrioWeb(t, d)
			ctx := context.Background()
			for _, i := range []int{2, 3} { // nothing can move
				if err := f.env.DB.SetGPUService(ctx, f.gpu(t, "node-a", i), false, "fan", models.CLIActor); err != nil {
					t.Fatal(err)
				}
			}
			f.book(t, f.erin, []int64{f.gpu(t, "node-a", 0)}, 1, 4, "")
			r := &models.PriorityRequest{UserID: f.bob.ID, GPUIDs: []int64{f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1)},
				StartsAt: f.now.Add(2 * time.Hour), EndsAt: f.now.Add(5 * time.Hour), Purpose: "p", Urgency: "u", Plan: "p", GiveBack: "g", Preempt: true}
			if err := f.env.DB.CreateRequest(ctx, r, models.DefaultBookingLimits, *f.now, models.CLIActor, nil); err != nil {
				t.Fatal(err)
			}
			reqPath := "/requests/" + itoa(r.ID)
			carol := f.signedIn(f.carol)
			approve := approveForm(carol.Get(reqPath).Doc)
			later := f.book(t, f.erin, []int64{f.gpu(t, "node-a", 1)}, 3, 7, "")
			res := carol.Post(reqPath+"/approve", approve)
			if res.Code != http.StatusConflict || res.Doc == nil || res.Doc.Find(testid("approval-stale")).Length() != 1 {
				t.Fatalf("stale approval: %d, no notice", res.Code)
			}
			want := "Booking #" + itoa(later.ID) + " of Erin Member is now in the way: split, losing 2 GPU-hours."
			if got := strings.TrimSpace(res.Doc.Find(testid("plan-changes") + " li").Text()); got != want {
				t.Errorf("what changed = %q, want %q", got, want)
			}
			if res.Doc.Find(testid("plan-row-"+itoa(later.ID))).Length() != 1 {
				t.Errorf("the new plan is not shown")
			}
			if res := carol.Post(reqPath+"/approve", approveForm(res.Doc)); res.Code != http.StatusSeeOther {
				t.Fatalf("approve the new plan: %d", res.Code)
			}
		})
	}
}

// approveForm is the approve form's hidden values as the page has them.
func approveForm(doc *goquery.Document) url.Values {
	v := url.Values{}
	doc.Find(testid("approve-form") + ` input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("name")
		val, _ := s.Attr("value")
		if name != "_csrf" {
			v.Set(name, val)
		}
	})
	return v
}

// TestApprovalRefusesOutOfServiceGPU: a GPU taken out of service while a
// request for it waits: the admin's confirmation lists the request, and
// approving it books nothing and says why.
func TestApprovalRefusesOutOfServiceGPU(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newPrioWeb(t, d)
			ctx := context.Background()
			g := f.gpu(t, "node-a", 1)
			carol, admin := f.signedIn(f.carol), f.signedIn(f.alice)
			var ids []int64
			var forms []url.Values
			for _, preempt := range []bool{false, true} {
				r := &models.PriorityRequest{UserID: f.bob.ID, GPUIDs: []int64{g}, StartsAt: f.now.Add(2 * time.Hour), EndsAt: f.now.Add(5 * time.Hour),
					Purpose: "p", Urgency: "u", Plan: "p", GiveBack: "g", Preempt: preempt}
				if err := f.env.DB.CreateRequest(ctx, r, models.DefaultBookingLimits, *f.now, models.CLIActor, nil); err != nil {
					t.Fatal(err)
				}
				ids, forms = append(ids, r.ID), append(forms, approveForm(carol.Get("/requests/"+itoa(r.ID)).Doc))
			}
			page := admin.Post("/admin/gpus/"+itoa(g)+"/service", url.Values{"in_service": {"false"}, "reason": {"fan"}})
			if page.Code != http.StatusOK || page.Doc.Find(testid("service-requests")+" li").Length() != 2 {
				t.Fatalf("confirmation does not list the pending requests: %d", page.Code)
			}
			if res := admin.Post("/admin/gpus/"+itoa(g)+"/service", url.Values{"in_service": {"false"}, "reason": {"fan"}, "confirm": {"1"}}); res.Code != http.StatusSeeOther {
				t.Fatalf("take out of service: %d", res.Code)
			}
			for i, id := range ids {
				if got := carol.Get("/requests/" + itoa(id)).Doc.Find(testid("plan-problem")).Text(); !strings.Contains(got, "GPU 1 was taken out of service (fan)") {
					t.Errorf("the request page does not warn the lead: %q", got)
				}
				res := carol.Post("/requests/"+itoa(id)+"/approve", forms[i])
				if res.Code != http.StatusConflict {
					t.Fatalf("approve request %d on an out-of-service GPU: %d", i, res.Code)
				}
				if !strings.Contains(res.Doc.Find(testid("approval-stale")).Text(), "GPU 1 was taken out of service (fan)") {
					t.Fatalf("approve request %d on an out-of-service GPU: %d %q", i, res.Code, res.Doc.Find(testid("approval-stale")).Text())
				}
				got, _ := f.env.DB.Request(ctx, id)
				bs, _ := f.env.DB.Bookings(ctx, models.BookingFilter{NodeID: f.nodes[0].ID})
				if got.Status != models.RequestPending || len(bs) != 0 {
					t.Errorf("after the refusal: status %s, %d bookings", got.Status, len(bs))
				}
			}
		})
	}
}

// TestRequestWithoutTeamNamesAdmins: a user in no team is told, in both
// languages, that the admins decide, on the form and once it is sent.
func TestRequestWithoutTeamNamesAdmins(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f := newPrioWeb(t, d)
			ctx := context.Background()
			lone := f.env.AddUser("lone@example.org", "Lone Wolf", false)
			g := itoa(f.gpu(t, "node-a", 0))
			loneC := f.signedIn(lone)
			page := loneC.Get("/requests/new?gpu=" + g)
			if got := page.Doc.Find(testid("request-deciders")).Text(); !strings.Contains(got, "the admins will decide") {
				t.Errorf("deciders = %q", got)
			}
			if got := f.signedIn(f.bob).Get("/requests/new?gpu=" + g).Doc.Find(testid("request-deciders")).Text(); !strings.Contains(got, "leads of vision") {
				t.Errorf("deciders for a team member = %q", got)
			}
			form := url.Values{"gpu": {g}, "starts_at": {f.now.Add(2 * time.Hour).Format("2006-01-02T15:04")}, "duration": {"2"},
				"purpose": {"p"}, "urgency": {"u"}, "plan": {"p"}, "give_back": {"g"}}
			res := loneC.Post("/requests", form)
			if res.Code != http.StatusSeeOther {
				t.Fatalf("file request: %d", res.Code)
			}
			if got := loneC.Get(res.Header().Get("Location")).Body.String(); !strings.Contains(got, "Request sent to the admins") {
				t.Errorf("flash does not name the admins")
			}
			lone.Language = "zh-CN"
			if err := f.env.DB.UpdateUser(ctx, lone, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			if got := f.signedIn(lone).Get("/requests/new?gpu=" + g).Doc.Find(testid("request-deciders")).Text(); !strings.Contains(got, "由管理员审批") {
				t.Errorf("deciders in Chinese = %q", got)
			}
		})
	}
}
