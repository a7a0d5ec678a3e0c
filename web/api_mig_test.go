package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/api"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestAPIMIG: with GPU 0 of gpu01 split 7 × 1g.10gb, GET /gpus lists the
// split GPU and its instances under it; the split GPU is refused whole
// with the pages' message; GET /slots finds instances only with a
// profile and whole GPUs only without; an instance is booked by its id
// like a GPU, and its booking carries its MIG UUID; a conflict on an
// instance names it by its GPU and profile in gpu_name.
func TestAPIMIG(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			testAPIMIG(t, d)
		})
	}
}

func testAPIMIG(t *testing.T, dialect string) {
	f := newAPIFixture(t, dialect)
	doc := loadOpenAPI(t)
	migs := f.env.SplitMIG("gpu01", map[int][]string{0: slices.Repeat([]string{"1g.10gb"}, 7)})

	res := f.adaAPI.Get("/api/v1/gpus")
	doc.checkResponse(t, http.MethodGet, api.PathGPUs, res.Code, res.Body.Bytes())
	var list api.GPUList
	res.Decode(&list)
	byUUID := map[string]api.GPU{}
	var parent api.GPU
	for _, g := range list.GPUs {
		byUUID[g.UUID] = g
		if g.Node == "gpu01" && g.Index == 0 {
			parent = g
		}
	}
	if len(list.GPUs) != 13 {
		t.Fatalf("%d units listed, want 6 GPUs and 7 instances: %+v", len(list.GPUs), list.GPUs)
	}
	t.Run("gpus", func(t *testing.T) {
		want := api.GPU{ID: parent.ID, NodeID: parent.NodeID, Node: "gpu01", Index: 0, UUID: parent.UUID, Model: "NVIDIA A100-SXM4-80GB",
			MemoryMiB: 81920, InService: true, MIGSlices: 7, Weight: 1, Split: true}
		if parent != want {
			t.Errorf("split GPU = %+v\nwant %+v", parent, want)
		}
		for i, u := range migs {
			g := byUUID[u]
			if g.ParentID == nil || *g.ParentID != parent.ID {
				t.Fatalf("instance %d parent = %v, want %d", i, g.ParentID, parent.ID)
			}
			want := api.GPU{ID: g.ID, NodeID: parent.NodeID, Node: "gpu01", Index: 64 + i, UUID: u, Model: "NVIDIA A100-SXM4-80GB",
				MemoryMiB: 10240, InService: true, ParentID: g.ParentID, MIGProfile: "1g.10gb", MIGSlices: 1, Weight: models.MIGWeight(1, 7)}
			if g != want {
				t.Errorf("instance %d = %+v\nwant %+v", i, g, want)
			}
		}
		for _, g := range list.GPUs {
			if g.Node == "gpu02" && (g.ParentID != nil || g.Split || g.MIGProfile != "" || g.MIGSlices != 0 || g.Weight != 1) {
				t.Errorf("whole GPU = %+v", g)
			}
		}
	})

	t.Run("the split GPU is not bookable whole", func(t *testing.T) {
		res := f.adaAPI.Post("/api/v1/bookings", map[string]any{"gpu_ids": []int64{parent.ID}, "starts_at": at(1), "ends_at": at(2)})
		e := wantError(t, res, http.StatusUnprocessableEntity, models.EINVALID, "", "gpu_ids")
		if want := fmt.Sprintf("GPU %d is split into MIG instances: book one of its instances instead.", parent.ID); e.Error.Fields["gpu_ids"] != want {
			t.Errorf("gpu_ids: %q, want %q", e.Error.Fields["gpu_ids"], want)
		}
	})

	slots := func(t *testing.T, q api.SlotsQuery) api.SlotList {
		t.Helper()
		res := f.adaAPI.Get("/api/v1/slots?" + q.Values().Encode())
		doc.checkResponse(t, http.MethodGet, api.PathSlots, res.Code, res.Body.Bytes())
		if res.Code != http.StatusOK {
			t.Fatalf("slots %v: %d %s", q.Values(), res.Code, res.Body.String())
		}
		var out api.SlotList
		res.Decode(&out)
		return out
	}
	t.Run("slots without a profile are whole GPUs", func(t *testing.T) {
		got := slots(t, api.SlotsQuery{GPUs: 3, Hours: 2, Node: "gpu01"})
		if len(got.Slots) != 1 || fmt.Sprint(got.Slots[0].GPUIDs) != fmt.Sprint([]int64{f.gpus[1].ID, f.gpus[2].ID, f.gpus[3].ID}) {
			t.Errorf("3 GPUs on gpu01 = %+v, want GPUs 1–3 (never the split GPU nor its instances)", got.Slots)
		}
		if got := slots(t, api.SlotsQuery{GPUs: 4, Hours: 2, Node: "gpu01"}); len(got.Slots) != 0 {
			t.Errorf("4 GPUs on gpu01 = %+v, want none: one of them is split", got.Slots)
		}
	})
	var two []int64
	t.Run("slots with a profile are its instances", func(t *testing.T) {
		got := slots(t, api.SlotsQuery{GPUs: 2, Hours: 2, Profile: "1G.10GB"})
		if len(got.Slots) != 1 || got.Slots[0].Node != "gpu01" || got.Slots[0].StartsAt != hoursAfter(0) ||
			fmt.Sprint(got.Slots[0].GPUIDs) != fmt.Sprint([]int64{byUUID[migs[0]].ID, byUUID[migs[1]].ID}) {
			t.Fatalf("2 × 1g.10gb = %+v, want the first two instances now", got.Slots)
		}
		two = got.Slots[0].GPUIDs
		if got := slots(t, api.SlotsQuery{GPUs: 8, Hours: 2, Profile: "1g.10gb"}); len(got.Slots) != 0 {
			t.Errorf("8 × 1g.10gb = %+v, want none: there are seven", got.Slots)
		}
		res := f.adaAPI.Get("/api/v1/slots?" + api.SlotsQuery{GPUs: 1, Hours: 2, Profile: "3g.40gb"}.Values().Encode())
		e := wantError(t, res, http.StatusUnprocessableEntity, models.EINVALID, "", "profile")
		if !strings.Contains(e.Error.Fields["profile"], "No MIG slice of this profile") {
			t.Errorf("profile: %q", e.Error.Fields["profile"])
		}
	})

	t.Run("an instance is booked by its id", func(t *testing.T) {
		b := f.book(t, f.adaAPI, two, 0, 2, "notebook")
		if fmt.Sprint(b.GPUIDs) != fmt.Sprint(two) || strings.Join(b.GPUUUIDs, ",") != migs[0]+","+migs[1] || b.Phase != "active" {
			t.Errorf("booking = %+v, want instances %v with their MIG UUIDs", b, two)
		}
		got := slots(t, api.SlotsQuery{GPUs: 5, Hours: 2, Profile: "1g.10gb"})
		want := []int64{byUUID[migs[2]].ID, byUUID[migs[3]].ID, byUUID[migs[4]].ID, byUUID[migs[5]].ID, byUUID[migs[6]].ID}
		if len(got.Slots) == 0 || fmt.Sprint(got.Slots[0].GPUIDs) != fmt.Sprint(want) {
			t.Errorf("5 × 1g.10gb after booking two = %+v, want the other five", got.Slots)
		}
		q := url.Values{"from": {at(0)}, "to": {at(4)}, "gpu": {fmt.Sprint(two[0])}}
		res := f.bobAPI.Get("/api/v1/bookings?" + q.Encode())
		var bl api.BookingList
		res.Decode(&bl)
		if len(bl.Bookings) != 1 || bl.Bookings[0].ID != b.ID {
			t.Errorf("bookings of instance %d = %+v, want #%d", two[0], bl.Bookings, b.ID)
		}
	})

	t.Run("a conflict on an instance names it", func(t *testing.T) {
		res := f.bobAPI.Post("/api/v1/bookings", map[string]any{"gpu_ids": []int64{two[1]}, "starts_at": at(1), "ends_at": at(3)})
		doc.checkResponse(t, http.MethodPost, api.PathBookings, res.Code, res.Body.Bytes())
		var e api.Error
		res.Decode(&e)
		if res.Code != http.StatusConflict || len(e.Error.Conflicts) != 1 {
			t.Fatalf("booking a booked instance = %d %s, want one conflict", res.Code, res.Body.String())
		}
		if c := e.Error.Conflicts[0]; c.GPUID != two[1] || c.GPUIndex != 65 || c.GPUName != "GPU 0 · 1g.10gb" || c.UserName != "Ada" {
			t.Errorf("conflict = %+v, want instance %d named \"GPU 0 · 1g.10gb\", held by Ada", c, two[1])
		}
	})
}
