package loginenv_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gpubook/gpubook/agent/cache"
	"github.com/gpubook/gpubook/agent/loginenv"
	"github.com/gpubook/gpubook/models/wire"
)

var (
	now  = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	gpus = []string{"GPU-00000000-0000-0000-0000-000000000000", "GPU-11111111-1111-1111-1111-111111111111",
		"GPU-22222222-2222-2222-2222-222222222222", "GPU-33333333-3333-3333-3333-333333333333",
		"GPU-44444444-4444-4444-4444-444444444444", "GPU-55555555-5555-5555-5555-555555555555"}
)

func file(bookings ...wire.Booking) cache.File {
	f := cache.File{Version: cache.Version, FetchedAt: now.Add(-time.Minute),
		Schedule: wire.Schedule{PortalURL: "https://gpubook.example.org", Bookings: bookings}}
	for i, u := range gpus {
		f.GPUs = append(f.GPUs, wire.GPU{UUID: u, Index: i})
	}
	return f
}

func bk(id int64, user string, from, to time.Duration, idx ...int) wire.Booking {
	b := wire.Booking{ID: id, User: user, StartsAt: now.Add(from), EndsAt: now.Add(to)}
	for _, i := range idx {
		b.GPUUUIDs = append(b.GPUUUIDs, gpus[i])
	}
	return b
}

func TestCompute(t *testing.T) {
	tests := []struct {
		name      string
		f         cache.File
		user      string
		wantShell string
		wantHint  string
	}{
		{"two GPUs booked now, listed by index", file(bk(1, "alice", -time.Hour, 4*time.Hour, 5, 2)), "alice",
			"export CUDA_VISIBLE_DEVICES=" + gpus[2] + "," + gpus[5] + "; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n",
			"gpubook: GPUs 2,5 booked until 14:00"},
		{"overlapping bookings name each end", file(bk(1, "alice", -time.Hour, time.Hour, 2), bk(2, "alice", -time.Hour, 4*time.Hour, 5, 3)), "alice",
			"export CUDA_VISIBLE_DEVICES=" + gpus[2] + "," + gpus[3] + "," + gpus[5] + "; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n",
			"gpubook: GPU 2 booked until 11:00, GPUs 3,5 until 14:00"},
		{"another user's booking", file(bk(1, "alice", -time.Hour, time.Hour, 2)), "bob",
			"export CUDA_VISIBLE_DEVICES=; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n",
			"gpubook: no GPU booked now; book at https://gpubook.example.org"},
		{"next booking later today", file(bk(1, "bob", 4*time.Hour, 5*time.Hour, 3)), "bob",
			"export CUDA_VISIBLE_DEVICES=; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n",
			"gpubook: no GPU booked now — next: GPU 3 at 14:00; book at https://gpubook.example.org"},
		{"next booking tomorrow", file(bk(1, "bob", 20*time.Hour, 21*time.Hour, 3)), "bob",
			"export CUDA_VISIBLE_DEVICES=; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n",
			"gpubook: no GPU booked now — next: GPU 3 at Tue 06:00; book at https://gpubook.example.org"},
		{"booking just ended", file(bk(1, "alice", -time.Hour, 0, 1)), "alice",
			"export CUDA_VISIBLE_DEVICES=; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n",
			"gpubook: no GPU booked now; book at https://gpubook.example.org"},
		{"malformed UUID never reaches the shell", file(wire.Booking{ID: 1, User: "eve", StartsAt: now.Add(-time.Hour), EndsAt: now.Add(time.Hour),
			GPUUUIDs: []string{"GPU-1; rm -rf ~", gpus[0]}}), "eve",
			"export CUDA_VISIBLE_DEVICES=" + gpus[0] + "; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n", "gpubook: GPU 0 booked until 11:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := loginenv.Compute(tt.f, tt.user, now, time.UTC)
			if got := r.Shell(); got != tt.wantShell {
				t.Errorf("shell = %q, want %q", got, tt.wantShell)
			}
			if got := r.Hint; got != tt.wantHint {
				t.Errorf("hint = %q, want %q", got, tt.wantHint)
			}
		})
	}
}

func TestStaleCacheHint(t *testing.T) {
	const fresh = "gpubook: no GPU booked now; book at https://gpubook.example.org"
	tests := []struct {
		name string
		age  time.Duration
		want string
	}{
		{"three hours old", 3 * time.Hour, fresh + " (schedule last synced 3h0m0s ago)"},
		{"exactly StaleAfter is not stale", loginenv.StaleAfter, fresh},
		{"a second past StaleAfter", loginenv.StaleAfter + time.Second, fresh + " (schedule last synced 1h0m0s ago)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := file()
			f.FetchedAt = now.Add(-tt.age)
			if got := loginenv.Compute(f, "bob", now, time.UTC).Hint; got != tt.want {
				t.Errorf("hint = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestResultEnv(t *testing.T) {
	in := []string{"HOME=/home/alice", "CUDA_VISIBLE_DEVICES=0,1,2", "CUDA_DEVICE_ORDER=FASTEST_FIRST"}
	tests := []struct {
		name string
		r    loginenv.Result
		want []string
	}{
		{"booked", loginenv.Result{Visible: []string{gpus[1]}}, []string{"HOME=/home/alice", "CUDA_VISIBLE_DEVICES=" + gpus[1], "CUDA_DEVICE_ORDER=PCI_BUS_ID"}},
		{"none", loginenv.Result{}, []string{"HOME=/home/alice", "CUDA_VISIBLE_DEVICES=", "CUDA_DEVICE_ORDER=PCI_BUS_ID"}},
		{"exempt", loginenv.Result{Unchanged: true}, in},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Env(in); !slices.Equal(got, tt.want) {
				t.Errorf("Env = %q, want %q", got, tt.want)
			}
		})
	}
	if got := (loginenv.Result{Unchanged: true}).Shell(); got != "" {
		t.Errorf("exempt shell = %q, want empty", got)
	}
}

// TestComputeMIG: a booked MIG instance is exposed by its MIG UUID (CUDA
// takes "MIG-…" in CUDA_VISIBLE_DEVICES) and named by its GPU's index and
// profile; units come in GPU order, a GPU's instances in NVML's order.
func TestComputeMIG(t *testing.T) {
	const migA, migB = "MIG-aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa", "MIG-bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb"
	withMIG := func(bookings ...wire.Booking) cache.File {
		f := file(bookings...)
		f.GPUs[3].MIG, f.GPUs[3].MIGSlices = true, 7
		f.GPUs[3].Instances = []wire.MIGInstance{{UUID: migA, Profile: "1g.10gb", GPUInstance: 7, Slices: 1, MemoryMiB: 9856},
			{UUID: migB, Profile: "3g.40gb", GPUInstance: 1, Slices: 3, MemoryMiB: 40192}}
		return f
	}
	mig := func(id int64, user string, from, to time.Duration, uuids ...string) wire.Booking {
		return wire.Booking{ID: id, User: user, StartsAt: now.Add(from), EndsAt: now.Add(to), GPUUUIDs: uuids}
	}
	tests := []struct {
		name      string
		f         cache.File
		wantShell string
		wantHint  string
	}{
		{"one instance", withMIG(mig(1, "alice", -time.Hour, time.Hour, migA)),
			"export CUDA_VISIBLE_DEVICES=" + migA + "; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n", "gpubook: GPU 3 1g.10gb booked until 11:00"},
		{"instances and a GPU in unit order", withMIG(mig(1, "alice", -time.Hour, time.Hour, migB, gpus[5], migA, gpus[2])),
			"export CUDA_VISIBLE_DEVICES=" + gpus[2] + "," + migA + "," + migB + "," + gpus[5] + "; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n",
			"gpubook: GPU 2, GPU 3 1g.10gb, GPU 3 3g.40gb, GPU 5 booked until 11:00"},
		{"next booking of an instance", withMIG(mig(1, "alice", time.Hour, 2*time.Hour, migB)),
			"export CUDA_VISIBLE_DEVICES=; export CUDA_DEVICE_ORDER=PCI_BUS_ID\n",
			"gpubook: no GPU booked now — next: GPU 3 3g.40gb at 11:00; book at https://gpubook.example.org"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := loginenv.Compute(tt.f, "alice", now, time.UTC)
			if got := r.Shell(); got != tt.wantShell {
				t.Errorf("shell = %q, want %q", got, tt.wantShell)
			}
			if got := r.Hint; got != tt.wantHint {
				t.Errorf("hint = %q, want %q", got, tt.wantHint)
			}
		})
	}
}
