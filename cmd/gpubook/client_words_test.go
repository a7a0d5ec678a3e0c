package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/views/i18n"
)

// TestClientWords: each item of the terminal client list of issue 41,
// through run against a real portal.
func TestClientWords(t *testing.T) {
	t.Parallel()
	ce := newClientEnv(t, store.SQLite)
	ctx := context.Background()
	for _, n := range []struct{ name, model string }{{"node-l", "NVIDIA L40S"}, {"node-p", "NVIDIA A100-PCIE-40GB"}} {
		gpus, err := models.NewNodeGPUs(n.name, 2, n.model, 46068)
		if err != nil {
			t.Fatal(err)
		}
		if err := ce.env.DB.CreateNode(ctx, &models.Node{Name: n.name}, gpus, models.CLIActor); err != nil {
			t.Fatal(err)
		}
	}
	ce.extra["GPUBOOK_PORTAL"], ce.extra["GPUBOOK_TOKEN"] = ce.srv.URL, ce.token

	t.Run("model by part of its name", func(t *testing.T) {
		out, errOut, err := ce.run("book", "--model", "l40s", "--for", "1h", "--short")
		if err != nil || !strings.HasPrefix(out, "GPU-") || !strings.Contains(errOut, "--model l40s: NVIDIA L40S") {
			t.Fatalf("book --model l40s: %q %q %v", out, errOut, err)
		}
		ce.refused(t, "--model a100 matches NVIDIA A100-PCIE-40GB, NVIDIA A100-SXM4-80GB; give more of the name", "free", "--model", "a100")
		if out := ce.must(t, "free", "--model", "sxm4"); !strings.Contains(out, "node-a") || strings.Contains(out, "node-p") {
			t.Errorf("free --model sxm4:\n%s", out)
		}
	})

	t.Run("short prints nothing on a refusal", func(t *testing.T) {
		// The README's safe form for scripts relies on both: nothing on
		// stdout, and a failure ("|| exit 1").
		out, _, err := ce.run("book", "--gpus", "9", "--for", "1h", "--short")
		if err == nil || out != "" {
			t.Fatalf("refused book --short: stdout %q, err %v; want nothing and a failure", out, err)
		}
		for _, f := range []string{"../../README.md", "../../docs/api.md"} {
			doc, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(doc), "v=$(gpubook book --gpus 2 --for 4h --short) || exit 1") || strings.Contains(string(doc), "CUDA_VISIBLE_DEVICES=$(gpubook") {
				t.Errorf("%s does not show the safe form for scripts", f)
			}
		}
	})

	t.Run("refusal names the node assumed", func(t *testing.T) {
		cache := filepath.Join(ce.home, "schedule-words.json")
		if err := os.WriteFile(cache, []byte(`{"node":"node-b"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		ce.extra["GPUBOOK_AGENT_CACHE_FILE"] = cache
		defer delete(ce.extra, "GPUBOOK_AGENT_CACHE_FILE")
		ce.refused(t, "(on node node-b, this machine's, from its gpubook-agent config; --any-node books on any node)", "book", "--gpus", "3", "--for", "1h")
		ce.refused(t, "--any-node books on any node", "request", "--gpus", "3", "--for", "1h", "--purpose", "p", "--urgency", "u", "--plan", "x", "--give-back", "g")
		out, _, err := ce.run("book", "--gpus", "3", "--for", "1h", "--any-node", "--short")
		if err != nil || strings.Count(out, "GPU-") != 3 {
			t.Errorf("book --any-node: %q %v", out, err)
		}
	})

	t.Run("refusals in the CLI's words and the user's zone", func(t *testing.T) {
		u, err := ce.env.DB.UserByEmail(ctx, ce.user.Email)
		if err != nil {
			t.Fatal(err)
		}
		u.TimeZone = "Asia/Tokyo"
		if err := ce.env.DB.UpdateUser(ctx, u, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		var b clientBooking
		ce.mustJSON(t, &b, "book", "--node", "node-l", "--gpus", "1", "--for", "1h")
		bob := ce.env.AddUser("bob-words@example.org", "Bob", false)
		if _, err := ce.env.DB.CreateBooking(ctx, models.NewBooking{UserID: bob.ID, GPUIDs: b.GPUIDs, StartsAt: b.EndsAt.Add(time.Hour), EndsAt: b.EndsAt.Add(3 * time.Hour)},
			models.DefaultBookingLimits, time.Now(), models.CLIActor); err != nil {
			t.Fatal(err)
		}
		_, _, err = ce.run("extend", fmt.Sprint(b.ID), "--by", "2h")
		tokyo, _ := time.LoadLocation("Asia/Tokyo")
		want := "held by Bob " + b.EndsAt.Add(time.Hour).In(tokyo).Format("Mon 2006-01-02 15:04") + " JST"
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "UTC") {
			t.Errorf("extend refusal %v, want the conflict in the user's zone (%s)", err, want)
		}
		_, _, err = ce.run("request", "--gpus", "1", "--for", "1h", "--node", "node-l", "--purpose", "", "--urgency", "u", "--plan", "x", "--give-back", "g")
		if err == nil || !strings.Contains(err.Error(), "--purpose:") {
			t.Errorf("request without a purpose: %v, want it named by its flag", err)
		}
		for _, api := range []string{"gpu_ids", "hours", "starts_at", "ends_at", "give_back"} {
			if err != nil && strings.Contains(err.Error(), api+":") {
				t.Errorf("refusal names the API field %s: %v", api, err)
			}
		}
		bundle, err := i18n.Load()
		if err != nil {
			t.Fatal(err)
		}
		if got := fieldWords(bundle.For("en"), "max_length.peak"); got != "Length of one booking (peak hours)" {
			t.Errorf("max_length.peak in words = %q", got)
		}
	})

	t.Run("json errors are JSON", func(t *testing.T) {
		for _, args := range [][]string{{"release", "999999"}, {"book", "--model", "v100", "--for", "1h"}, {"limits"}} {
			if args[0] == "limits" {
				ce.extra["GPUBOOK_TOKEN"] = "gpb_wrong"
			}
			out, _, err := ce.run(append(args, "--json")...)
			var e struct {
				Error struct{ Code, Message string }
			}
			if err == nil || json.Unmarshal([]byte(out), &e) != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Errorf("%v --json: stdout %q, err %v; want the error as JSON", args, out, err)
			}
		}
		ce.extra["GPUBOOK_TOKEN"] = ce.token
	})

	t.Run("a revoked token says to log in", func(t *testing.T) {
		tok, plain, err := ce.env.DB.CreateToken(ctx, ce.user.ID, "laptop", time.Now(), models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		if err := ce.env.DB.RevokeToken(ctx, tok.ID, time.Now(), models.CLIActor); err != nil {
			t.Fatal(err)
		}
		ce.extra["GPUBOOK_TOKEN"] = plain
		defer func() { ce.extra["GPUBOOK_TOKEN"] = ce.token }()
		ce.refused(t, "run 'gpubook login'", "ls")
	})

	t.Run("client help lists no server flags", func(t *testing.T) {
		for _, cmd := range []string{"login", "free", "book", "ls", "extend", "release", "request", "limits"} {
			out := ce.must(t, cmd, "--help")
			if strings.Contains(out, "--database-url") || !strings.Contains(out, "Usage: gpubook "+cmd) {
				t.Errorf("%s --help:\n%s", cmd, out)
			}
		}
	})
}
