package telemetry_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
)

// TestLiveInputsScope: the status page reads the minutes of the GPUs of
// the nodes in scope only: a node not in scope gets no usage and no users,
// one in scope gets all of its own; nothing open reads none; All reads
// every GPU's. GPUs and nodes are read whole in every case.
func TestLiveInputsScope(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		n1, _ := storetest.Enrolled(t, db, "gpu41", 1, 2)
		n2, _ := storetest.Enrolled(t, db, "gpu42", 2, 2)
		st := telemetry.New(db)
		for i, n := range []int64{n1, n2} {
			b := storetest.UsageBatch(i+1, storetest.AgentAt0, 3, 2)
			b.BatchID = fmt.Sprintf("b%d", i)
			if _, err := st.IngestUsage(ctx, n, b, 400*24*time.Hour, storetest.AgentAt0.Add(3*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		gpus, err := db.GPUs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		nodeOf := map[int64]int64{}
		for _, g := range gpus {
			nodeOf[g.ID] = g.NodeID
		}
		now := storetest.AgentAt0.Add(3 * time.Minute)
		tests := []struct {
			name         string
			scope        models.LiveScope
			usage, users map[int64]int // rows per node
		}{
			{"one node open", models.LiveScope{Nodes: []int64{n1}}, map[int64]int{n1: 6}, map[int64]int{n1: 6}},
			{"the other node open", models.LiveScope{Nodes: []int64{n2, 99999}}, map[int64]int{n2: 6}, map[int64]int{n2: 6}},
			{"nothing open", models.LiveScope{}, map[int64]int{}, map[int64]int{}},
			{"all", models.LiveScope{All: true}, map[int64]int{n1: 6, n2: 6}, map[int64]int{n1: 6, n2: 6}},
		}
		for _, tt := range tests {
			in, err := st.LiveInputs(ctx, now, tt.scope)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			usage, users := map[int64]int{}, map[int64]int{}
			for _, u := range in.Usage {
				usage[nodeOf[u.GPUID]]++
			}
			for _, u := range in.Users {
				users[nodeOf[u.GPUID]]++
			}
			if !maps.Equal(usage, tt.usage) || !maps.Equal(users, tt.users) {
				t.Errorf("%s: usage rows per node %v, users %v; want %v and %v", tt.name, usage, users, tt.usage, tt.users)
			}
			if len(in.GPUs) != 4 || len(in.Nodes) != 2 {
				t.Errorf("%s: %d GPUs and %d nodes, want 4 and 2", tt.name, len(in.GPUs), len(in.Nodes))
			}
		}
	})
}

// TestLiveInputsPage: a page of a large lab's nodes reads the GPUs, nodes,
// bookings now and minutes of its own nodes only; a node open but off the
// page reads nothing.
func TestLiveInputsPage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := storetest.Fixture(t, db, 1)
		n1, _ := storetest.Enrolled(t, db, "gpu41", 1, 2)
		n2, _ := storetest.Enrolled(t, db, "gpu42", 2, 2)
		st := telemetry.New(db)
		for i, n := range []int64{n1, n2} {
			b := storetest.UsageBatch(i+1, storetest.AgentAt0, 3, 2)
			b.BatchID = fmt.Sprintf("b%d", i)
			if _, err := st.IngestUsage(ctx, n, b, 400*24*time.Hour, storetest.AgentAt0.Add(3*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		now := storetest.AgentAt0.Add(3 * time.Minute)
		gpus, err := db.GPUs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		nodeOf := map[int64]int64{}
		for _, g := range gpus {
			nodeOf[g.ID] = g.NodeID
			if g.NodeID == n1 || g.NodeID == n2 {
				_, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{g.ID}, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)},
					models.DefaultBookingLimits, now.Add(-time.Minute), models.CLIActor)
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		tests := []struct {
			name                           string
			scope                          models.LiveScope
			gpus, nodes, bookings, minutes map[int64]int // per node
		}{
			{"all of the page", models.LiveScope{All: true, Page: []int64{n2}},
				map[int64]int{n2: 2}, map[int64]int{n2: 1}, map[int64]int{n2: 2}, map[int64]int{n2: 6}},
			{"open off the page", models.LiveScope{Nodes: []int64{n1}, Page: []int64{n2}},
				map[int64]int{n2: 2}, map[int64]int{n2: 1}, map[int64]int{n2: 2}, map[int64]int{}},
			{"open on the page", models.LiveScope{Nodes: []int64{n1}, Page: []int64{n1, n2}},
				map[int64]int{n1: 2, n2: 2}, map[int64]int{n1: 1, n2: 1}, map[int64]int{n1: 2, n2: 2}, map[int64]int{n1: 6}},
		}
		for _, tt := range tests {
			in, err := st.LiveInputs(ctx, now, tt.scope)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			got := func(n int, node func(i int) int64) map[int64]int {
				m := map[int64]int{}
				for i := 0; i < n; i++ {
					m[node(i)]++
				}
				return m
			}
			gs := got(len(in.GPUs), func(i int) int64 { return in.GPUs[i].NodeID })
			ns := got(len(in.Nodes), func(i int) int64 { return in.Nodes[i].NodeID })
			bs := got(len(in.Bookings), func(i int) int64 { return in.Bookings[i].NodeID })
			ms := got(len(in.Usage), func(i int) int64 { return nodeOf[in.Usage[i].GPUID] })
			if !maps.Equal(gs, tt.gpus) || !maps.Equal(ns, tt.nodes) || !maps.Equal(bs, tt.bookings) || !maps.Equal(ms, tt.minutes) {
				t.Errorf("%s: per node GPUs %v, nodes %v, bookings %v, minutes %v; want %v, %v, %v, %v",
					tt.name, gs, ns, bs, ms, tt.gpus, tt.nodes, tt.bookings, tt.minutes)
			}
		}
	})
}
