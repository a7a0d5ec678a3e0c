package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/store"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/models/store/storetest/fairweek"
)

// TestReportLateCancels: beside the fixture's late cancellation (dan's
// Saturday 10–14 cancelled at 09:00, 1 h charged), a two-GPU booking of
// cat's Sunday 16–18 cancelled by her at 15:30 charges 16:00–17:30 on both
// GPUs (3 h); ben's Sunday 10–12, cancelled at 09:30 by an admin, charges
// nothing, not being his doing. A lead of 30 min charges none of them
// (every cancel was 30 min or more ahead); a negative lead turns it off.
func TestReportLateCancels(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		w := fairweek.Weeks[1].Parse()
		id := fairweek.Build(t, db, w)
		at := func(day, hh, mm int) time.Time {
			d := w.Start.AddDate(0, 0, day)
			return time.Date(d.Year(), d.Month(), d.Day(), hh, mm, 0, 0, fairweek.Berlin)
		}
		root := &models.User{Email: "root@example.org", Name: "root", IsAdmin: true}
		must(t, db.CreateUser(ctx, root, models.CLIActor))
		csv := fmt.Sprintf("email,node,gpus,start,end,note\ncat@example.org,n1,4;5,%s,%s,x\nben@example.org,n1,5,%s,%s,x\n",
			at(6, 16, 0).Format(time.RFC3339), at(6, 18, 0).Format(time.RFC3339), at(6, 10, 0).Format(time.RFC3339), at(6, 12, 0).Format(time.RFC3339))
		parsed, bad, err := models.ParseImportCSV(strings.NewReader(csv), fairweek.Berlin)
		must(t, err)
		if res, err := db.ImportBookings(ctx, parsed, bad, false, w.End.AddDate(0, 0, 7), models.CLIActor); err != nil || res.Imported != 2 {
			t.Fatalf("import: %+v, %v", res, err)
		}
		cancel := func(user int64, from time.Time, by *models.User, now time.Time) {
			t.Helper()
			var bid int64
			must(t, db.Gorm.WithContext(ctx).Raw("SELECT id FROM bookings WHERE user_id = ? AND starts_at = ?", user, from.UTC()).Scan(&bid).Error)
			if _, err := db.CancelBooking(ctx, bid, by, now); err != nil {
				t.Fatal(err)
			}
		}
		cat, err := db.User(ctx, id.Cat)
		must(t, err)
		cancel(id.Cat, at(6, 16, 0), cat, at(6, 15, 30))
		cancel(id.Ben, at(6, 10, 0), root, at(6, 9, 30))

		for _, tt := range []struct {
			name     string
			lead     time.Duration
			dan, cat [2]int64 // late cancels, GPU-seconds
		}{
			{"default 2 h", 0, [2]int64{1, 3600}, [2]int64{1, 2 * 5400}},
			{"30 min", 30 * time.Minute, [2]int64{0, 0}, [2]int64{0, 0}},
			{"off", -1, [2]int64{0, 0}, [2]int64{0, 0}},
		} {
			rules := models.DefaultReportRules
			rules.LateCancel = tt.lead
			d, err := db.ReportWeek(ctx, w, w.End, rules)
			must(t, err)
			for _, c := range []struct {
				name string
				uid  int64
				want [2]int64
			}{{"dan", id.Dan, tt.dan}, {"cat", id.Cat, tt.cat}, {"ben", id.Ben, [2]int64{}}} {
				f := d.WeekFigures(c.uid)
				if got := [2]int64{f.LateCancels, f.LateCancelSec}; got != c.want {
					t.Errorf("%s: %s cancelled late %v, want %v", tt.name, c.name, got, c.want)
				}
			}
			// The charge lies on the day the booking was to start: Sunday.
			if sun := d.DaysOf(id.Cat)[6].Figures; sun.LateCancelSec != tt.cat[1] {
				t.Errorf("%s: cat's Sunday %d s, want %d", tt.name, sun.LateCancelSec, tt.cat[1])
			}
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
