package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	v1 "github.com/gpubook/gpubook/models/api"
	"github.com/gpubook/gpubook/models/store"
)

// TestClientMIG: on node-a, GPU 0 is split 7 × 1g.10gb and GPU 1 into a
// 3g.40gb and 4 × 1g.10gb. free names each instance by its GPU, profile
// and share; book --mig books instances of a profile (and refuses one the
// portal has not, listing those it has, booking nothing); ls names them
// the same way; without --mig only whole GPUs are booked; and a limit of
// 1 GPU at once holds seven 1g.10gb slices and refuses the eighth; a
// refusal for someone else's booking of a slice names the slice.
func TestClientMIG(t *testing.T) {
	t.Parallel()
	for _, d := range []string{store.SQLite, store.Postgres} {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			testClientMIG(t, d)
		})
	}
}

func testClientMIG(t *testing.T, dialect string) {
	ce := newClientEnv(t, dialect)
	ctx := context.Background()
	one := slices.Repeat([]string{"1g.10gb"}, 7)
	migs := ce.env.SplitMIG("node-a", map[int][]string{0: one, 1: append([]string{"3g.40gb"}, one[:4]...)})
	if out, _, err := ce.runIn(ctx, ce.token+"\n", "login", "--portal", ce.srv.URL); err != nil {
		t.Fatalf("login = %q, %v", out, err)
	}
	var mine struct{ Bookings []clientBooking }

	t.Run("free names instances under their GPU", func(t *testing.T) {
		var free struct {
			Free []struct {
				GPU  v1.GPU
				Name string
			}
		}
		ce.mustJSON(t, &free, "free")
		var names []string
		for _, f := range free.Free {
			names = append(names, f.GPU.Node+" "+f.Name)
		}
		want := append(append(slices.Repeat([]string{"node-a GPU 0 · 1g.10gb · 1/7"}, 7), "node-a GPU 1 · 3g.40gb · 3/7"),
			append(slices.Repeat([]string{"node-a GPU 1 · 1g.10gb · 1/7"}, 4), "node-a GPU 2", "node-a GPU 3", "node-b GPU 0", "node-b GPU 1")...)
		if !slices.Equal(names, want) {
			t.Fatalf("free lists\n%q\nwant\n%q", names, want)
		}
		g := free.Free[0].GPU
		if g.UUID != migs[0] || g.ParentID == nil || g.MIGProfile != "1g.10gb" || g.MIGSlices != 1 || g.Weight != models.MIGWeight(1, 7) || g.Split {
			t.Errorf("free --json unit = %+v, want instance %s with its MIG fields", g, migs[0])
		}
		ce.mustJSON(t, &free, "free", "--mig", "3G.40GB")
		if len(free.Free) != 1 || free.Free[0].Name != "GPU 1 · 3g.40gb · 3/7" {
			t.Errorf("free --mig 3G.40GB = %+v", free.Free)
		}
		if out := ce.must(t, "free", "--node", "node-a"); !strings.Contains(out, "GPU 0 · 1g.10gb · 1/7") || !strings.Contains(out, "GPU 1 · 3g.40gb · 3/7") {
			t.Errorf("free --node node-a:\n%s", out)
		}
	})

	t.Run("an unknown profile books nothing", func(t *testing.T) {
		ce.refused(t, "--mig 2g.20gb matches no MIG instance; the portal has 1g.10gb, 3g.40gb", "book", "--mig", "2g.20gb", "--for", "1h")
		ce.refused(t, "--mig 2g.20gb matches no MIG instance", "free", "--profile", "2g.20gb")
		if ce.mustJSON(t, &mine, "ls"); len(mine.Bookings) != 0 {
			t.Fatalf("bookings after a refused profile: %+v", mine.Bookings)
		}
	})

	t.Run("without --mig only whole GPUs, never a split one", func(t *testing.T) {
		ce.refused(t, "no slot within the booking horizon", "book", "--gpus", "3", "--node", "node-a", "--for", "1h")
		var b clientBooking
		ce.mustJSON(t, &b, "book", "--gpus", "2", "--node", "node-a", "--for", "1h")
		if len(b.GPUUUIDs) != 2 || !strings.HasPrefix(b.GPUUUIDs[0], "GPU-") || !strings.HasPrefix(b.GPUUUIDs[1], "GPU-") {
			t.Fatalf("booked %v, want GPUs 2 and 3", b.GPUUUIDs)
		}
		ce.must(t, "release", fmt.Sprint(b.ID))
	})

	t.Run("a limit of 1 GPU holds seven 1g.10gb slices, not eight", func(t *testing.T) {
		lim := []models.PolicyLimit{{Rule: models.RuleMaxGPUs, Value: 1}}
		if err := ce.env.DB.SaveScopeLimits(ctx, models.ScopeUser, ce.user.ID, lim, time.Now(), models.CLIActor); err != nil {
			t.Fatal(err)
		}
		out := ce.must(t, "book", "--mig", "1g.10gb", "--for", "2h", "--note", "notebook")
		re := regexp.MustCompile(`(?m)^Booked #(\d+): GPU 0 · 1g\.10gb · 1/7 on node-a, .* – .*\n^export CUDA_VISIBLE_DEVICES=(MIG-\S+)$`)
		m := re.FindStringSubmatch(out)
		if m == nil || m[2] != migs[0] {
			t.Fatalf("book --mig 1g.10gb printed:\n%s\nwant the first instance, %s", out, migs[0])
		}
		var six clientBooking
		ce.mustJSON(t, &six, "book", "--profile", "1g.10gb", "-n", "6", "--for", "2h")
		if !slices.Equal(six.GPUUUIDs, migs[1:7]) {
			t.Fatalf("6 × 1g.10gb booked %v, want %v", six.GPUUUIDs, migs[1:7])
		}
		ce.refused(t, "GPUs held at once:", "book", "--mig", "1g.10gb", "--for", "2h")
		ce.mustJSON(t, &mine, "ls")
		if len(mine.Bookings) != 2 {
			t.Fatalf("ls = %+v, want the two bookings of slices", mine.Bookings)
		}
		ls := ce.must(t, "ls")
		for _, want := range []string{`(?m)^` + m[1] + `\s+node-a\s+GPU 0 · 1g\.10gb · 1/7\s`, fmt.Sprintf(`(?m)^%d\s+node-a\s+6 × GPU 0 · 1g\.10gb · 1/7\s`, six.ID)} {
			if !regexp.MustCompile(want).MatchString(ls) {
				t.Errorf("ls does not match %s:\n%s", want, ls)
			}
		}
		if err := ce.env.DB.SaveScopeLimits(ctx, models.ScopeUser, ce.user.ID, nil, time.Now(), models.CLIActor); err != nil {
			t.Fatal(err)
		}
		if out := ce.must(t, "release", m[1]); !strings.HasPrefix(out, "Released #"+m[1]+": GPU 0 · 1g.10gb · 1/7 on node-a") {
			t.Errorf("release printed %q", out)
		}
	})

	t.Run("a conflict on a slice names it", func(t *testing.T) {
		var b clientBooking
		ce.mustJSON(t, &b, "book", "--mig", "1g.10gb", "--for", "1h")
		bob := ce.env.AddUser("bob-mig@example.org", "Bob", false)
		if _, err := ce.env.DB.CreateBooking(ctx, models.NewBooking{UserID: bob.ID, GPUIDs: b.GPUIDs, StartsAt: b.EndsAt.Add(time.Hour), EndsAt: b.EndsAt.Add(3 * time.Hour)},
			models.DefaultBookingLimits, time.Now(), models.CLIActor); err != nil {
			t.Fatal(err)
		}
		_, _, err := ce.run("extend", fmt.Sprint(b.ID), "--by", "2h")
		if err == nil || !strings.Contains(err.Error(), "[GPU 0 · 1g.10gb held by Bob ") || strings.Contains(err.Error(), "GPU 6") {
			t.Errorf("extend refusal %v, want the conflict on \"GPU 0 · 1g.10gb\", not on the instance's index", err)
		}
		ce.must(t, "release", fmt.Sprint(b.ID))
	})

	t.Run("book --short exports MIG UUIDs", func(t *testing.T) {
		out := ce.must(t, "book", "--mig", "1g.10gb", "-n", "2", "--for", "1h", "--short")
		if want := migs[0] + "," + migs[7+1] + "\n"; out != want {
			t.Errorf("--short printed %q, want %q", out, want)
		}
		var raw json.RawMessage
		ce.mustJSON(t, &raw, "free", "--mig", "1g.10gb")
		if !strings.Contains(string(raw), `"parent_id"`) || !strings.Contains(string(raw), `"weight"`) {
			t.Errorf("free --json lacks the MIG fields: %s", raw)
		}
	})
}
