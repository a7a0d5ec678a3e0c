package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

func migUUID(node, gpu, i int) string {
	return fmt.Sprintf("MIG-%08d-%04d-4000-8000-%012d", node, gpu, i)
}

// sliced is an inventory of n A100s on node nodeNo where each GPU in split
// lists the instances its layout names (profiles, "1g.10gb" or "3g.40gb"),
// their UUIDs numbered by position: instance i of GPU g is migUUID(node, g, i).
func sliced(nodeNo, n int, split map[int][]string) wire.Inventory {
	inv := inventory(nodeNo, n)
	for g, layout := range split {
		inv.GPUs[g].MIG, inv.GPUs[g].MIGSlices = true, 7
		for i, p := range layout {
			m := wire.MIGInstance{UUID: migUUID(nodeNo, g, i), Profile: p, GPUInstance: 7 + i, ComputeInstance: 0, Slices: 1, MemoryMiB: 9856}
			if p == "3g.40gb" {
				m.Slices, m.MemoryMiB = 3, 40192
			}
			inv.GPUs[g].Instances = append(inv.GPUs[g].Instances, m)
		}
	}
	return inv
}

func sevenSlices() []string { return slices.Repeat([]string{"1g.10gb"}, 7) }

// units returns the node's GPU rows by UUID.
func units(t *testing.T, db *store.DB, nodeID int64) map[string]models.GPU {
	t.Helper()
	n, err := db.Node(ctx, nodeID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]models.GPU{}
	for _, g := range n.GPUs {
		out[g.UUID] = g
	}
	return out
}

// TestMIGInventory: an inventory with a GPU split 7 × 1g.10gb makes one
// row per instance under it, the same inventory again changes nothing, and
// MIG turned off takes the instances out and makes the GPU whole again.
func TestMIGInventory(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		id, _ := enrolled(t, db, "gpu01", 1, 2)
		if _, err := db.ApplyInventory(ctx, id, sliced(1, 2, map[int][]string{0: sevenSlices()}), at0); err != nil {
			t.Fatal(err)
		}
		us := units(t, db, id)
		if len(us) != 9 {
			t.Fatalf("%d rows, want 2 GPUs and 7 instances", len(us))
		}
		parent, whole := us[realUUID(1, 0)], us[realUUID(1, 1)]
		if !parent.MIG || parent.MIGSlices != 7 || !parent.IsMIGParent() || parent.Bookable() || parent.Weight != 1 || parent.Index != 0 {
			t.Errorf("split GPU = %+v, want MIG with 7 slices, not bookable whole", parent)
		}
		if whole.MIG || whole.MIGSlices != 0 || !whole.Bookable() {
			t.Errorf("whole GPU = %+v", whole)
		}
		for i := range 7 {
			g := us[migUUID(1, 0, i)]
			want := models.GPU{ID: g.ID, NodeID: id, NodeName: "gpu01", Index: 64 + i, UUID: migUUID(1, 0, i), Model: "NVIDIA A100-SXM4-80GB",
				MemoryMiB: 9856, MIG: true, InService: true, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt, ParentID: parent.ID,
				MIGProfile: "1g.10gb", MIGSlices: 1, MIGGI: 7 + i, MIGCI: 0, Weight: models.MIGWeight(1, 7)}
			if g != want {
				t.Errorf("instance %d = %+v\nwant %+v", i, g, want)
			}
		}

		// The same inventory again: no row changes, no index moves.
		if _, err := db.ApplyInventory(ctx, id, sliced(1, 2, map[int][]string{0: sevenSlices()}), at0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		again := units(t, db, id)
		for u, g := range us {
			h := again[u]
			if g.IsMIGInstance() && h != g || !g.IsMIGInstance() && (h.Index != g.Index || h.MIGSlices != g.MIGSlices || h.InService != g.InService) {
				t.Errorf("%s changed on the same inventory: %+v → %+v", u, g, h)
			}
		}

		// MIG off: every instance out (history and index kept), the GPU whole.
		if _, err := db.ApplyInventory(ctx, id, inventory(1, 2), at0.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		off := units(t, db, id)
		if p := off[realUUID(1, 0)]; p.MIG || p.MIGSlices != 0 || !p.Bookable() {
			t.Errorf("GPU after MIG off = %+v, want whole and bookable", p)
		}
		for i := range 7 {
			g := off[migUUID(1, 0, i)]
			if g.InService || g.OutOfServiceReason != models.MIGGoneReason || g.Index != 64+i || g.ParentID != parent.ID {
				t.Errorf("instance %d after MIG off = %+v, want out of service at its index", i, g)
			}
		}
		// And on again with the same layout: the instances come back.
		if _, err := db.ApplyInventory(ctx, id, sliced(1, 2, map[int][]string{0: sevenSlices()}), at0.Add(3*time.Minute)); err != nil {
			t.Fatal(err)
		}
		for i := range 7 {
			if g := units(t, db, id)[migUUID(1, 0, i)]; !g.InService || g.Index != 64+i {
				t.Errorf("instance %d back = %+v, want in service at %d", i, g, 64+i)
			}
		}
	})
}

// TestMIGReconfigure: a GPU re-split loses four of its seven 1g.10gb and
// gains a 3g.40gb. The bookings on the lost instances are handled as if an
// admin took them out of service: a future one moves to the free 1g.10gb
// left, the next one finds none and is cancelled, a running one ends now;
// each holder is told. The new instance takes the next free index.
func TestMIGReconfigure(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1)
		id, _ := enrolled(t, db, "gpu02", 2, 1)
		if _, err := db.ApplyInventory(ctx, id, sliced(2, 1, map[int][]string{0: sevenSlices()}), at0); err != nil {
			t.Fatal(err)
		}
		us := units(t, db, id)
		inst := func(i int) int64 { return us[migUUID(2, 0, i)].ID }
		now := at0
		book := func(gpu int64, from, to time.Time) *models.Booking {
			t.Helper()
			b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{gpu}, StartsAt: from, EndsAt: to},
				models.DefaultBookingLimits, now.Add(-time.Hour), models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		later := now.Add(3 * time.Hour)
		busy := book(inst(0), later, later.Add(time.Hour)) // instances 0 and 1 are taken then, 2 is free
		busy2 := book(inst(1), later, later.Add(time.Hour))
		moved := book(inst(3), later, later.Add(time.Hour))
		cancelled := book(inst(4), later, later.Add(time.Hour))
		running := book(inst(5), now.Add(-30*time.Minute), now.Add(time.Hour))

		inv := sliced(2, 1, map[int][]string{0: sevenSlices()[:3]})
		inv.GPUs[0].Instances = append(inv.GPUs[0].Instances, wire.MIGInstance{UUID: migUUID(2, 0, 9), Profile: "3g.40gb",
			GPUInstance: 1, ComputeInstance: 0, Slices: 3, MemoryMiB: 40192})
		if _, err := db.ApplyInventory(ctx, id, inv, now); err != nil {
			t.Fatal(err)
		}
		after := units(t, db, id)
		for i := 3; i < 7; i++ {
			if g := after[migUUID(2, 0, i)]; g.InService || g.OutOfServiceReason != models.MIGGoneReason || g.Index != 64+i {
				t.Errorf("lost instance %d = %+v", i, g)
			}
		}
		if g := after[migUUID(2, 0, 9)]; g.Index != 71 || g.MIGProfile != "3g.40gb" || g.Weight != models.MIGWeight(3, 7) || !g.Bookable() {
			t.Errorf("new 3g.40gb = %+v, want index 71, weight 3/7", g)
		}
		check := func(b *models.Booking, status string, gpu int64, end time.Time) {
			t.Helper()
			got, err := db.Booking(ctx, b.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != status || !slices.Equal(got.GPUIDs, []int64{gpu}) || !got.EndsAt.Equal(end) {
				t.Errorf("booking %d = %s on %v until %v, want %s on %d until %v", b.ID, got.Status, got.GPUIDs, got.EndsAt, status, gpu, end)
			}
		}
		check(busy, models.StatusConfirmed, inst(0), later.Add(time.Hour))
		check(busy2, models.StatusConfirmed, inst(1), later.Add(time.Hour))
		check(moved, models.StatusConfirmed, inst(2), later.Add(time.Hour))
		check(cancelled, models.StatusCancelled, inst(4), later.Add(time.Hour))
		check(running, models.StatusConfirmed, inst(5), now)
		ns, err := db.Notifications(ctx, u.ID, 20)
		if err != nil {
			t.Fatal(err)
		}
		told := map[string]string{}
		for _, n := range ns {
			if n.Kind == models.NotifyOutOfService {
				told[n.Params["Booking"]] = n.Params["Action"] + " " + n.Params["GPU"] + " → " + n.Params["NewGPU"]
			}
		}
		want := map[string]string{
			fmt.Sprint(moved.ID):     "moved gpu02 GPU 0 · 1g.10gb → gpu02 GPU 0 · 1g.10gb",
			fmt.Sprint(cancelled.ID): "cancelled gpu02 GPU 0 · 1g.10gb → ",
			fmt.Sprint(running.ID):   "cancelled gpu02 GPU 0 · 1g.10gb → ",
		}
		if fmt.Sprint(told) != fmt.Sprint(want) {
			t.Errorf("notices = %v, want %v", told, want)
		}
		// The same inventory again moves nothing more.
		if _, err := db.ApplyInventory(ctx, id, inv, now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if ns2, _ := db.Notifications(ctx, u.ID, 20); len(ns2) != len(ns) {
			t.Errorf("%d notices after the same inventory, want %d", len(ns2), len(ns))
		}
	})
}

// TestMIGScheduleAndUsage: the schedule sent to the node names a booked
// instance by its MIG UUID, and a usage record naming that UUID is stored
// against the instance's row, within the booking.
func TestMIGScheduleAndUsage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1)
		if err := db.SetUnixLogin(ctx, u.ID, models.UnixIdentity{Name: "ada", Source: models.UnixSourceAdmin}, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		id, _ := enrolled(t, db, "gpu05", 5, 2)
		if _, err := db.ApplyInventory(ctx, id, sliced(5, 2, map[int][]string{0: sevenSlices()}), at0); err != nil {
			t.Fatal(err)
		}
		us := units(t, db, id)
		slice, whole := us[migUUID(5, 0, 3)], us[realUUID(5, 1)]
		b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{slice.ID, whole.ID}, StartsAt: at0, EndsAt: at0.Add(time.Hour)},
			models.DefaultBookingLimits, at0, models.CLIActor)
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := db.AgentSchedule(ctx, id, at0)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Bookings) != 1 || s.Bookings[0].ID != b.ID || !slices.Equal(s.Bookings[0].GPUUUIDs, []string{realUUID(5, 1), migUUID(5, 0, 3)}) &&
			!slices.Equal(s.Bookings[0].GPUUUIDs, []string{migUUID(5, 0, 3), realUUID(5, 1)}) {
			t.Fatalf("schedule = %+v, want booking %d on the MIG UUID and the whole GPU", s.Bookings, b.ID)
		}
		avg := 50.0
		batch := wire.UsageBatch{Node: "x", BatchID: "mig", Records: []wire.UsageRecord{{GPUUUID: migUUID(5, 0, 3), Minute: at0.Add(time.Minute),
			UtilAvgPct: &avg, UtilMaxPct: &avg, MemUsedMiB: 1000, MemTotalMiB: 9856, Samples: 6,
			Users: []wire.UserUsage{{User: "ada", UID: 1001, MemoryMiB: 1000, Processes: 1, Busy: true}}}}}
		if _, err := telemetry.New(db).IngestUsage(ctx, id, batch, 400*24*time.Hour, at0.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		var rows []struct {
			GPUID     int64  `gorm:"column:gpu_id"`
			BookingID *int64 `gorm:"column:booking_id"`
		}
		if err := db.Gorm.Table("gpu_usage_minutes").Select("gpu_id, booking_id").Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].GPUID != slice.ID || rows[0].BookingID == nil || *rows[0].BookingID != b.ID {
			t.Errorf("usage rows = %+v, want one on instance %d in booking %d", rows, slice.ID, b.ID)
		}
	})
}

// TestMIGSplitMovesWholeBookings: a GPU listed split for the first time
// cannot be used whole: a future booking on it moves to a free whole GPU
// of its model, one that finds none is cancelled, and the split GPU's
// instances are never the target.
func TestMIGSplitMovesWholeBookings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1)
		id, _ := enrolled(t, db, "gpu06", 6, 2)
		us := units(t, db, id)
		g0, g1 := us[realUUID(6, 0)].ID, us[realUUID(6, 1)].ID
		book := func(gpu int64, h int) *models.Booking {
			t.Helper()
			b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{gpu}, StartsAt: at0.Add(time.Duration(h) * time.Hour),
				EndsAt: at0.Add(time.Duration(h+1) * time.Hour)}, models.DefaultBookingLimits, at0, models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		moved, stuck, other := book(g0, 2), book(g0, 5), book(g1, 5)
		if _, err := db.ApplyInventory(ctx, id, sliced(6, 2, map[int][]string{0: sevenSlices()}), at0); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			b      *models.Booking
			status string
			gpu    int64
		}{{moved, models.StatusConfirmed, g1}, {stuck, models.StatusCancelled, g0}, {other, models.StatusConfirmed, g1}} {
			got, err := db.Booking(ctx, c.b.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != c.status || !slices.Equal(got.GPUIDs, []int64{c.gpu}) {
				t.Errorf("booking %d = %s on %v, want %s on %d", c.b.ID, got.Status, got.GPUIDs, c.status, c.gpu)
			}
		}
		// The same inventory again finds nothing newly split.
		before, _ := db.Notifications(ctx, u.ID, 20)
		if _, err := db.ApplyInventory(ctx, id, sliced(6, 2, map[int][]string{0: sevenSlices()}), at0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if after, _ := db.Notifications(ctx, u.ID, 20); len(after) != len(before) || len(before) != 2 {
			t.Errorf("notices %d then %d, want 2 and no more", len(before), len(after))
		}
	})
}
