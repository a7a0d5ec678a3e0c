package store_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
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
