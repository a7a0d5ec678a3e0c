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
