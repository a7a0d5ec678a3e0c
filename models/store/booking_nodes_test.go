package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestBookingsOfNodes: a filter by a list of nodes reads the bookings of
// those nodes only, in the order of start and ID, with their GPUs; an
// empty list reads none and nil every node's; a long list (2,501 IDs,
// mostly of no node: one parameter, whatever its length) gives the same
// answer.
func TestBookingsOfNodes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, n1 := fixture(t, db, 2)
		var nodes []*models.Node
		for _, name := range []string{"gpu02", "gpu03"} {
			gpus, err := models.NewNodeGPUs(name, 2, "NVIDIA A100-SXM4-80GB", 81920)
			if err != nil {
				t.Fatal(err)
			}
			n := &models.Node{Name: name}
			if err := db.CreateNode(ctx, n, gpus, models.CLIActor); err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, n)
		}
		all, err := db.Nodes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		made := map[int64]int64{} // node → booking
		for i, n := range all {
			start := at0.Add(time.Duration(3-i) * time.Hour) // the last node's booking starts first
			b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{n.GPUs[0].ID, n.GPUs[1].ID}, StartsAt: start, EndsAt: start.Add(time.Hour)},
				models.DefaultBookingLimits, at0, models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			made[n.ID] = b.ID
		}
		long := []int64{n1.ID}
		for id := int64(1_000_000); len(long) < 2500; id++ {
			long = append(long, id)
		}
		long = append(long, nodes[1].ID) // in the third query
		tests := []struct {
			name  string
			nodes []int64
			want  []int64 // bookings, in order
		}{
			{"one node", []int64{nodes[0].ID}, []int64{made[nodes[0].ID]}},
			{"two nodes", []int64{n1.ID, nodes[1].ID}, []int64{made[nodes[1].ID], made[n1.ID]}},
			{"none", []int64{}, nil},
			{"every node", nil, []int64{made[nodes[1].ID], made[nodes[0].ID], made[n1.ID]}},
			{"over a query's worth", long, []int64{made[nodes[1].ID], made[n1.ID]}},
		}
		for _, tt := range tests {
			got, err := db.Bookings(ctx, models.BookingFilter{From: at0, To: at0.Add(24 * time.Hour), NodeIDs: tt.nodes})
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			var ids []int64
			for _, b := range got {
				ids = append(ids, b.ID)
				if len(b.GPUIDs) != 2 || (tt.nodes != nil && !slices.Contains(tt.nodes, b.NodeID)) {
					t.Errorf("%s: booking %d on node %d with GPUs %v", tt.name, b.ID, b.NodeID, b.GPUIDs)
				}
			}
			if !slices.Equal(ids, tt.want) {
				t.Errorf("%s: bookings %v, want %v", tt.name, ids, tt.want)
			}
		}
	})
}
