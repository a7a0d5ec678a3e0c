package store_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/telemetry"
)

// TestMixedChangesUnderConcurrency: users book (now and ahead), extend,
// cancel and release on the same four GPUs while two leads approve
// pre-empting priority requests over them, all at once, as a busy lab's
// morning does. Every operation either happens or is refused with a
// domain error — never an internal one (a deadlock's victim, a lock
// timeout) — and afterwards no GPU is held twice at any instant.
func TestMixedChangesUnderConcurrency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPrioFixture(t, db)
		now := changeClock
		users := []*models.User{f.owner, f.other, f.admin}
		slot := func(k int) time.Time { return now.Add(time.Duration(k) * 30 * time.Minute) }
		var requests []int64
		for i := range 6 {
			idx := []int{i % 4, (i + 1) % 4}
			requests = append(requests, f.request(t, users[i%2], idx, 0.5+float64(i%3), 2.5+float64(i%3), true).ID)
		}

		var mu sync.Mutex
		owner := map[int64]*models.User{} // bookings made, and by whom
		pick := func(r *rand.Rand) (int64, *models.User) {
			mu.Lock()
			defer mu.Unlock()
			if len(owner) == 0 {
				return 0, nil
			}
			k := r.IntN(len(owner))
			for id, u := range owner {
				if k == 0 {
					return id, u
				}
				k--
			}
			return 0, nil
		}
		var wg sync.WaitGroup
		var errsMu sync.Mutex
		counts := map[string]int{}
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), 42))
				for range 25 {
					op, err := "", error(nil)
					switch r.IntN(5) {
					case 0, 1:
						op = "create"
						u := users[r.IntN(len(users))]
						g := r.IntN(4)
						gpus := []int64{f.node.GPUs[g].ID}
						if r.IntN(2) == 0 {
							gpus = append(gpus, f.node.GPUs[(g+1)%4].ID)
						}
						start := r.IntN(8) // slot 0: from now
						var b *models.Booking
						b, err = db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: gpus, StartsAt: slot(start),
							EndsAt: slot(start + 1 + r.IntN(3))}, models.DefaultBookingLimits, now, models.ActorFor(u, ""))
						if err == nil {
							mu.Lock()
							owner[b.ID] = u
							mu.Unlock()
						}
					case 2:
						op = "extend"
						if id, u := pick(r); u != nil {
							b, gerr := db.Booking(ctx, id)
							if gerr != nil {
								err = gerr
								break
							}
							_, err = db.ExtendBooking(ctx, id, u, b.EndsAt.Add(time.Duration(1+r.IntN(2))*30*time.Minute),
								models.DefaultBookingLimits, now)
						}
					case 3:
						if id, u := pick(r); u != nil {
							if r.IntN(2) == 0 {
								op = "cancel"
								_, err = db.CancelBooking(ctx, id, u, now)
							} else {
								op = "release" // a quarter of an hour later: what started now is running
								_, err = db.ReleaseBooking(ctx, id, u, now.Add(15*time.Minute))
							}
						}
					case 4:
						op = "approve"
						lead := []*models.User{f.lead, f.lead2}[r.IntN(2)]
						_, err = db.ApproveRequest(ctx, requests[r.IntN(len(requests))], lead, "", models.AnyPlan, now, nil)
					}
					code := models.ErrorCode(err)
					errsMu.Lock()
					counts[op+" "+code]++
					errsMu.Unlock()
					if code == models.EINTERNAL {
						t.Errorf("%s: %v", op, err)
					}
				}
			}()
		}
		wg.Wait()
		t.Logf("outcomes: %v", counts)

		for _, g := range f.node.GPUs {
			bs, err := db.Bookings(ctx, models.BookingFilter{GPUID: g.ID, From: now.Add(-time.Hour), To: now.Add(24 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			var held []*models.Booking
			for i := range bs {
				if bs[i].Status == models.StatusConfirmed {
					held = append(held, &bs[i])
				}
			}
			for i, a := range held {
				for _, b := range held[i+1:] {
					if a.StartsAt.Before(b.EndsAt) && b.StartsAt.Before(a.EndsAt) {
						t.Errorf("GPU %d held twice: booking %d [%s, %s) and %d [%s, %s)", g.Index, a.ID,
							a.StartsAt.Format(time.TimeOnly), a.EndsAt.Format(time.TimeOnly), b.ID, b.StartsAt.Format(time.TimeOnly), b.EndsAt.Format(time.TimeOnly))
					}
				}
			}
		}
	})
}

// TestUsageIngestBesideBookingChanges: a node's agent reports the minutes
// just past on its GPUs (three senders, overlapping, as retries do) while
// users book those GPUs from now, release and extend there: the booking
// changes restamp minutes already stored and the ingest stamps new ones,
// on the same rows at the same moments. No side fails with an internal
// error (a deadlock's victim, a lock timeout).
func TestUsageIngestBesideBookingChanges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		u, _ := fixture(t, db, 1)
		n1, _ := enrolled(t, db, "gpu11", 1, 4)
		var gpus []int64
		if err := db.Gorm.Table("gpus").Where("node_id = ?", n1).Order("idx").Pluck("id", &gpus).Error; err != nil {
			t.Fatal(err)
		}
		ret := 400 * 24 * time.Hour
		var wg sync.WaitGroup
		var mu sync.Mutex
		counts := map[string]int{}
		tally := func(op string, err error) {
			code := models.ErrorCode(err)
			mu.Lock()
			counts[op+" "+code]++
			mu.Unlock()
			if code == models.EINTERNAL {
				t.Errorf("%s: %v", op, err)
			}
		}
		// The first minutes are there before anyone books, so that the
		// first bookings from now already restamp stored minutes.
		if _, err := telemetry.New(db).IngestUsage(ctx, n1, usageBatch(1, at0, 4, 4), ret, at0.Add(4*time.Minute)); err != nil {
			t.Fatal(err)
		}
		for w := range 3 {
			wg.Add(1)
			go func() { // an agent's sender: two minutes a batch, a minute late
				defer wg.Done()
				for k := range 30 {
					_, err := telemetry.New(db).IngestUsage(ctx, n1, usageBatch(1, at0.Add(time.Duration(k+w%2)*time.Minute), 2, 4), ret,
						at0.Add(time.Duration(k+3)*time.Minute))
					tally("ingest", err)
				}
			}()
		}
		for w := range 3 {
			wg.Add(1)
			go func() { // a user: book a GPU from now, then release or extend it
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), 7))
				for k := range 20 {
					now := at0.Add(time.Duration(k)*time.Minute + 30*time.Second)
					b, err := db.CreateBooking(ctx, models.NewBooking{UserID: u.ID, GPUIDs: []int64{gpus[r.IntN(4)]}, StartsAt: now,
						EndsAt: now.Add(30 * time.Minute)}, models.DefaultBookingLimits, now, models.ActorFor(u, ""))
					tally("create", err)
					if err != nil {
						continue
					}
					if r.IntN(2) == 0 {
						_, err = db.ReleaseBooking(ctx, b.ID, u, now.Add(time.Minute))
						tally("release", err)
					} else {
						_, err = db.ExtendBooking(ctx, b.ID, u, b.EndsAt.Add(30*time.Minute), models.DefaultBookingLimits, now.Add(time.Minute))
						tally("extend", err)
					}
				}
			}()
		}
		wg.Wait()
		t.Logf("outcomes: %v", counts)
	})
}
