package store_test

import (
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
	"github.com/gpubook/gpubook/models/wire"
)

// stamps draws the stamps of the stored minutes: per GPU, one character
// per minute from at0 ("h" held by a booking whose booker's processes held
// memory, "e" held with the booker holding none, "-" not held), and per
// user name the minutes where that user was the booker ("b").
func stamps(t *testing.T, db *store.DB) map[string]string {
	t.Helper()
	var mins []struct {
		GPUIdx    int       `gorm:"column:idx"`
		Minute    time.Time `gorm:"column:minute"`
		BookingID *int64    `gorm:"column:booking_id"`
		BookerMem int64     `gorm:"column:booker_mem_mib"`
	}
	err := db.Gorm.Raw(`SELECT g.idx, m.minute, m.booking_id, m.booker_mem_mib FROM gpu_usage_minutes m
		JOIN gpus g ON g.id = m.gpu_id ORDER BY g.idx, m.minute`).Scan(&mins).Error
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range mins {
		c := "-"
		if m.BookingID != nil {
			c = "e"
			if m.BookerMem > 0 {
				c = "h"
			}
		}
		out["g"+string(rune('0'+m.GPUIdx))] += c
	}
	var users []struct {
		Name   string `gorm:"column:user_name"`
		Booked bool   `gorm:"column:booked"`
	}
	if err := db.Gorm.Raw(`SELECT user_name, booked FROM gpu_user_usage_minutes ORDER BY user_name, gpu_id, minute`).Scan(&users).Error; err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		c := "-"
		if u.Booked {
			c = "b"
		}
		out[u.Name] += c
	}
	return out
}

// checkStamps compares the stamps with want, then recomputes them all from
// scratch (RestampUsage) and expects no difference: what IngestUsage and
// the booking changes keep is what the full rule gives.
func checkStamps(t *testing.T, db *store.DB, step string, want map[string]string) {
	t.Helper()
	got := stamps(t, db)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s = %q, want %q", step, k, got[k], w)
		}
	}
	if err := db.RestampUsage(ctx, at0.Add(-time.Hour), at0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	again := stamps(t, db)
	for k, v := range got {
		if again[k] != v {
			t.Errorf("%s: %s kept %q but the full restamp gives %q", step, k, v, again[k])
		}
	}
}

// TestUsageStampsFollowBookings: ada books GPU 0 from at0 for 30 minutes;
// the agent, its clock a little ahead (within the allowed skew), delivers
// minutes 27–33 of both GPUs at 28; then she books GPU 1 from 30 (over
// minutes already stored), extends the first booking, releases it at 29 and
// cancels the second. After each step every stored minute names the
// booking that held it, and a full restamp agrees.
func TestUsageStampsFollowBookings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1) // ada, whose processes hold 1000 MiB on GPU 0; "ghost" maps to nobody
		n1, _ := enrolled(t, db, "gpu21", 1, 2)
		node, err := db.Node(ctx, n1)
		if err != nil {
			t.Fatal(err)
		}
		min := func(n int) time.Time { return at0.Add(time.Duration(n) * time.Minute) }
		book := func(gpu int, from, to, now time.Time) *models.Booking {
			t.Helper()
			b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{node.GPUs[gpu].ID}, StartsAt: from, EndsAt: to},
				models.DefaultBookingLimits, now, models.CLIActor)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		a := book(0, at0, min(30), at0)
		if _, err := telemetry.New(db).IngestUsage(ctx, n1, usageBatch(1, min(27), 7, 2), 0, min(28)); err != nil {
			t.Fatal(err)
		}
		checkStamps(t, db, "ingested", map[string]string{"g0": "hhh----", "g1": "-------", "ada": "bbb----", "ghost": "-------"})

		c := book(1, min(30), min(60), min(28))
		checkStamps(t, db, "booked over stored minutes", map[string]string{"g0": "hhh----", "g1": "---eeee"})

		if _, err := db.ExtendBooking(ctx, a.ID, u, min(60), models.DefaultBookingLimits, min(28)); err != nil {
			t.Fatal(err)
		}
		checkStamps(t, db, "extended", map[string]string{"g0": "hhhhhhh", "ada": "bbbbbbb", "ghost": "-------"})

		if _, err := db.ReleaseBooking(ctx, a.ID, u, min(29)); err != nil {
			t.Fatal(err)
		}
		checkStamps(t, db, "released", map[string]string{"g0": "hh-----", "ada": "bb-----"})

		if _, err := db.CancelBooking(ctx, c.ID, u, min(29)); err != nil {
			t.Fatal(err)
		}
		checkStamps(t, db, "cancelled", map[string]string{"g0": "hh-----", "g1": "-------", "ada": "bb-----"})
	})
}

// TestUsageStampsResendWithMoreUsers: a resend of stored minutes that
// brings a process row the first delivery lacked restamps those minutes.
func TestUsageStampsResendWithMoreUsers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fixture(t, db, 1)
		n1, _ := enrolled(t, db, "gpu22", 1, 1)
		first := usageBatch(1, at0, 3, 1)
		if _, err := telemetry.New(db).IngestUsage(ctx, n1, first, 0, at0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		again := usageBatch(1, at0, 3, 1)
		for i := range again.Records {
			again.Records[i].Users = append(again.Records[i].Users, wire.UserUsage{User: "eve", UID: 1003, MemoryMiB: 5000, Processes: 1})
		}
		res, err := telemetry.New(db).IngestUsage(ctx, n1, again, 0, at0.Add(time.Hour))
		if err != nil || res.Duplicates != 3 {
			t.Fatalf("resend = %+v, %v", res, err)
		}
		var top []int64
		if err := db.Gorm.Raw("SELECT top_mem_mib FROM gpu_usage_minutes ORDER BY minute").Scan(&top).Error; err != nil {
			t.Fatal(err)
		}
		if len(top) != 3 || top[0] != 5000 || top[2] != 5000 {
			t.Errorf("top memory per minute = %v, want 5000 each (eve's rows came with the resend)", top)
		}
	})
}
