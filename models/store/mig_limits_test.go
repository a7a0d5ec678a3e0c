package store_test

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
)

// TestMIGBookingLimits: a 1-GPU limit holds seven 1g.10gb slices at once;
// an eighth slice (on another GPU) and a whole GPU are refused, and so is
// the split GPU booked whole, whatever the limit.
func TestMIGBookingLimits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1)
		id, _ := enrolled(t, db, "gpu03", 3, 3)
		if _, err := db.ApplyInventory(ctx, id, sliced(3, 3, map[int][]string{0: sevenSlices(), 1: sevenSlices()}), at0); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveScopeLimits(ctx, models.ScopeGlobal, 0, []models.PolicyLimit{{Rule: models.RuleMaxGPUs, Value: 1}}, at0, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		us := units(t, db, id)
		from, to := at0.Add(2*time.Hour), at0.Add(4*time.Hour)
		book := func(gpus ...int64) error {
			_, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: gpus, StartsAt: from, EndsAt: to},
				models.DefaultBookingLimits, at0, models.CLIActor)
			return err
		}
		if err := book(us[migUUID(3, 0, 0)].ID, us[migUUID(3, 0, 1)].ID); err != nil { // two in one booking
			t.Fatalf("slices 1-2: %v", err)
		}
		for i := 2; i < 7; i++ {
			if err := book(us[migUUID(3, 0, i)].ID); err != nil {
				t.Fatalf("slice %d of 7 under a 1-GPU limit: %v", i+1, err)
			}
		}
		for name, gpu := range map[string]int64{"an eighth slice": us[migUUID(3, 1, 0)].ID, "a whole GPU": us[realUUID(3, 2)].ID} {
			err := book(gpu)
			if e := models.AsError(err); e.Code != models.EPOLICY || e.Fields["max_gpus"].Key != "policy.breach.max_gpus" || e.Fields["max_gpus"].Data["Actual"] == nil {
				t.Errorf("%s: got %v, want a max_gpus refusal", name, err)
			}
		}
		if e := models.AsError(book(us[realUUID(3, 1)].ID)); e.Code != models.EINVALID || e.Fields["gpu_ids"].Key != "err.gpu_mig_parent" {
			t.Errorf("split GPU whole: got %v, want err.gpu_mig_parent", e)
		}
		if e := models.AsError(book(us[realUUID(3, 2)].ID)); e.Fields["max_gpus"].Data["Actual"] != "2" {
			t.Errorf("whole GPU beside seven slices reads %v GPUs, want 2", e.Fields["max_gpus"].Data["Actual"])
		}
		if e := models.AsError(book(us[migUUID(3, 1, 0)].ID)); e.Fields["max_gpus"].Data["Actual"] != "1.14" {
			t.Errorf("eighth slice reads %v GPUs, want 1.14", e.Fields["max_gpus"].Data["Actual"])
		}
	})
}

// TestMIGQuota: a weekly quota of 1 GPU-hour holds a slice for seven hours
// (1/7 GPU-hour per hour) and not a quarter of an hour more.
func TestMIGQuota(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1)
		id, _ := enrolled(t, db, "gpu04", 4, 1)
		if _, err := db.ApplyInventory(ctx, id, sliced(4, 1, map[int][]string{0: sevenSlices()}), at0); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveScopeLimits(ctx, models.ScopeGlobal, 0, []models.PolicyLimit{{Rule: models.RuleMaxGPUHours, Value: 60}}, at0, models.CLIActor); err != nil {
			t.Fatal(err)
		}
		us := units(t, db, id)
		from := at0.Add(2 * time.Hour)
		if _, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{us[migUUID(4, 0, 0)].ID}, StartsAt: from, EndsAt: from.Add(7 * time.Hour)},
			models.DefaultBookingLimits, at0, models.CLIActor); err != nil {
			t.Fatalf("7 slice-hours under a 1 GPU-hour week: %v", err)
		}
		_, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{us[migUUID(4, 0, 1)].ID}, StartsAt: from, EndsAt: from.Add(30 * time.Minute)},
			models.DefaultBookingLimits, at0, models.CLIActor)
		if e := models.AsError(err); e.Code != models.EPOLICY || e.Fields["max_gpu_hours_week"].Key == "" {
			t.Errorf("half an hour more: got %v, want a weekly quota refusal", err)
		}
		in, err := db.PolicyInputFor(ctx, u.ID, from, from.Add(time.Hour), models.DefaultBookingLimits)
		if err != nil {
			t.Fatal(err)
		}
		if got := models.UsedGPUMinutes(in.Held, models.WeekStart(from, time.UTC), models.NextWeek(models.WeekStart(from, time.UTC))); got != 60 {
			t.Errorf("used %d GPU-minutes, want 60 (7 hours of a seventh)", got)
		}
	})
}
