package web_test

// A MIG slice booked end to end: the portal and a real gpubook-agent process
// on simulated GPUs with GPU 1 split 7 × 1g.10gb (sim_mig). The inventory
// brings the instances, a user books one through the pages (calendar cell,
// pre-filled form, form post), `gpubook-agent env` gives her exactly its
// MIG UUID, and her simulated process on it shows on that instance's row.

import (
	"context"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpubook/gpubook/agent/agenttest/agentbin"
	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web/webtest"
)

func TestMIGSliceBookedEndToEnd(t *testing.T) {
	t.Parallel()
	bin := agentbin.Build(t, filepath.Join(t.TempDir(), "gpubook-agent"))
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			migSliceEndToEnd(t, d, bin)
		})
	}
}

func migSliceEndToEnd(t *testing.T, dialect, bin string) {
	ctx := context.Background()
	var dir string
	x := startSimAgentOf(t, dialect, bin, "mig1", 2, "NVIDIA A100-SXM4-80GB", 81920,
		"sim_mig = 1:7x1g.10gb\nsim_script = @DIR@/load\nheartbeat_interval = 2s\n",
		func(env *webtest.Env, n *models.Node, d string) {
			dir = d
			env.AddUser("ada@example.org", "Ada", false)
			writeFile(t, filepath.Join(d, "load"), "")
		})
	env, a := x.env, x.agent

	var node *models.Node
	var parent models.GPU
	waitFor(t, a, "inventory: GPU 1 split into seven 1g.10gb instances", func() bool {
		node, _ = env.DB.Node(ctx, x.node.ID)
		slices := 0
		for _, g := range node.GPUs {
			if g.Index == 1 && g.IsMIGParent() {
				parent = g
			}
			if g.IsMIGInstance() && g.MIGProfile == "1g.10gb" && g.InService {
				slices++
			}
		}
		return parent.ID != 0 && slices == 7
	})

	ada := env.Client()
	ada.SignIn("ada@example.org", "Ada")
	cal := ada.Get("/calendar?view=day&node=" + itoa(node.ID))
	if cal.Code != http.StatusOK {
		t.Fatalf("calendar: %d", cal.Code)
	}
	prow := cal.Doc.Find(testid("cal-row-" + itoa(parent.ID)))
	if prow.Find(testid("cal-split")).Length() != 1 || prow.Find("a.f").Length() != 0 {
		t.Errorf("GPU 1's row: split note %d, free links %d; want the note and none", prow.Find(testid("cal-split")).Length(), prow.Find("a.f").Length())
	}
	// Click 1: the first slice row's free cell (now), as a user without JavaScript.
	var inst models.GPU
	var href string
	cal.Doc.Find(".gr.r-mig").EachWithBreak(func(_ int, row *goquery.Selection) bool {
		id, _ := strconv.ParseInt(row.AttrOr("data-gpu", ""), 10, 64)
		link, ok := row.Find("a.f").First().Attr("href")
		if !ok {
			return true
		}
		for _, g := range node.GPUs {
			if g.ID == id {
				inst = g
			}
		}
		href = link
		if got := row.Find(testid("cal-label")).Text(); got != "GPU 1 · 1g.10gb" {
			t.Errorf("slice row label = %q, want GPU 1 · 1g.10gb", got)
		}
		return false
	})
	if inst.ID == 0 || inst.ParentID != parent.ID {
		t.Fatalf("no bookable slice row under GPU 1 (%+v)", inst)
	}
	form := ada.Get(href)
	if _, ok := form.Doc.Find(testid("pick-gpu-" + itoa(inst.ID))).Attr("checked"); !ok {
		t.Fatalf("the form from %s does not tick slice %d", href, inst.ID)
	}
	// Click 2: submit the form as it is.
	vals := url.Values{}
	form.Doc.Find(`[data-testid="booking-form"] input, [data-testid="booking-form"] textarea`).Each(func(_ int, in *goquery.Selection) {
		name := in.AttrOr("name", "")
		if name == "" || name == "_csrf" || (in.AttrOr("type", "") == "checkbox" && in.AttrOr("checked", "-") == "-") {
			return
		}
		vals.Add(name, in.AttrOr("value", in.Text()))
	})
	if res := ada.Post("/bookings", vals); res.Code != http.StatusSeeOther {
		t.Fatalf("booking the slice: %d\n%s", res.Code, res.Body.String())
	}
	u, _ := env.DB.UserByEmail(ctx, "ada@example.org")
	mine, err := env.DB.Bookings(ctx, models.BookingFilter{UserID: u.ID})
	if err != nil || len(mine) != 1 || len(mine[0].GPUIDs) != 1 || mine[0].GPUIDs[0] != inst.ID {
		t.Fatalf("ada's bookings = %+v (%v), want one of slice %d", mine, err, inst.ID)
	}

	waitFor(t, a, "ada's login gets exactly the slice's MIG UUID", func() bool {
		out, _ := exec.Command(bin, "env", "--config", x.conf, "--user", "ada", "--quiet").Output()
		return strings.Contains(string(out), "CUDA_VISIBLE_DEVICES="+inst.UUID) || strings.Contains(string(out), "CUDA_VISIBLE_DEVICES='"+inst.UUID+"'")
	})
	if !strings.HasPrefix(inst.UUID, "MIG-") {
		t.Errorf("slice UUID %q, want MIG-…", inst.UUID)
	}

	// Ada's job on her slice: the sim's Nth instance of GPU 1, N from 0 by GPU instance.
	writeFile(t, filepath.Join(dir, "load"), "1/"+strconv.Itoa(inst.MIGGI-1)+" ada 70 4000\n")
	row := testid("status-gpu-" + itoa(inst.ID))
	waitFor(t, a, "ada's use arrives on the slice's row and its usage minutes", func() bool {
		var minutes, parentMinutes int64
		env.DB.Gorm.Table("gpu_user_usage_minutes").Where("gpu_id = ? AND user_name = ?", inst.ID, "ada").Count(&minutes)
		env.DB.Gorm.Table("gpu_usage_minutes").Where("gpu_id = ?", parent.ID).Count(&parentMinutes)
		if parentMinutes > 0 {
			t.Fatalf("usage recorded on the split GPU %d itself", parent.ID)
		}
		doc := ada.Get("/status").Doc
		return minutes > 0 && strings.Contains(doc.Find(row+` [data-testid="used-by"]`).Text(), "ada") &&
			strings.Contains(doc.Find(row+` [data-testid="booked-by"]`).Text(), "Ada") &&
			strings.TrimSpace(doc.Find(row+` [data-testid="unit"]`).Text()) == "1 · 1g.10gb"
	})
}
