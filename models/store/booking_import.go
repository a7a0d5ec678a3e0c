package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// errImportRejected rolls back an all-or-nothing import that has rejects.
var errImportRejected = errors.New("store: import has rejected rows")

// importBatch is how many rows one INSERT carries.
const importBatch = 500

// ImportBookings writes the parsed rows of an import file in one
// transaction: it resolves users, nodes and GPUs and checks every overlap
// (with existing bookings and within the file) on what the transaction
// reads, then inserts in batches, restamps the usage already stored in the
// imported ranges, and writes one audit event with the counts. With
// rejects (parse-time ones included) and skipBad false it writes nothing.
// The database's overlap guard stays the last word: a booking made during
// the import fails the whole transaction.
func (db *DB) ImportBookings(ctx context.Context, rows []models.ImportRow, rejects []models.ImportReject, skipBad bool, now time.Time, by models.Actor) (models.ImportResult, error) {
	res := models.ImportResult{Rows: len(rows) + len(rejects)}
	err := db.inTxRetrying(ctx, func(tx *gorm.DB) error {
		t, err := importTargets(tx, rows)
		if err != nil {
			return err
		}
		ok, bad := models.CheckImport(rows, t)
		res.Rejects = mergeRejects(rejects, bad)
		if len(res.Rejects) > 0 && !skipBad {
			return errImportRejected
		}
		if err := lockGPUs(tx, importedGPUs(ok)); err != nil { // locks.go
			return err
		}
		first, last, err := insertImported(tx, ok, now)
		if err != nil {
			return err
		}
		res.Imported = len(ok)
		return audit(tx, by, models.AuditBookingImport, "booking", 0, map[string]any{
			"rows": res.Rows, "imported": res.Imported, "rejected": len(res.Rejects), "skip_bad": skipBad,
			"first_booking_id": first, "last_booking_id": last})
	})
	if errors.Is(err, errImportRejected) {
		return res, nil
	}
	if err != nil {
		res.Imported = 0
		if isOverlap(err) {
			return res, models.NewError(models.ECONFLICT, models.M("err.import_raced"))
		}
		return res, fmt.Errorf("store: import bookings: %w", err)
	}
	res.Written = true
	return res, nil
}

func mergeRejects(a, b []models.ImportReject) []models.ImportReject {
	out := append(append([]models.ImportReject{}, a...), b...)
	for i := 1; i < len(out); i++ { // insertion sort: both halves are sorted
		for j := i; j > 0 && out[j].Line < out[j-1].Line; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// importTargets reads the users, nodes, GPUs and the blocking bookings in
// the file's time range.
func importTargets(tx *gorm.DB, rows []models.ImportRow) (models.ImportTargets, error) {
	t := models.ImportTargets{Users: map[string]int64{}, Nodes: map[string]int64{}, GPUs: map[int64]map[int]int64{}, Existing: map[int64][]models.Span{}}
	var users []struct {
		ID    int64
		Email string
	}
	if err := tx.Table("users").Select("id, email").Scan(&users).Error; err != nil {
		return t, err
	}
	for _, u := range users {
		t.Users[u.Email] = u.ID
	}
	var gpus []struct {
		ID, NodeID int64
		Idx        int    `gorm:"column:idx"`
		Name       string `gorm:"column:name"`
	}
	if err := tx.Raw(`SELECT g.id, g.node_id, g.idx, n.name FROM gpus g JOIN nodes n ON n.id = g.node_id`).Scan(&gpus).Error; err != nil {
		return t, err
	}
	for _, g := range gpus {
		t.Nodes[g.Name] = g.NodeID
		if t.GPUs[g.NodeID] == nil {
			t.GPUs[g.NodeID] = map[int]int64{}
		}
		t.GPUs[g.NodeID][g.Idx] = g.ID
	}
	if len(rows) == 0 {
		return t, nil
	}
	lo, hi := rows[0].Start, rows[0].End
	for _, r := range rows {
		lo, hi = minT(lo, r.Start), maxT(hi, r.End)
	}
	var taken []bookingGPURow
	if err := tx.Where("blocking AND starts_at < ? AND ends_at > ?", utc(hi), utc(lo)).Find(&taken).Error; err != nil {
		return t, err
	}
	for _, b := range taken {
		t.Existing[b.GPUID] = append(t.Existing[b.GPUID], models.Span{Start: b.StartsAt.UTC(), End: b.EndsAt.UTC()})
	}
	return t, nil
}

func minT(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxT(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// insertImported inserts the bookings and their GPUs in batches and
// restamps the usage minutes of the past ones; it returns the first and
// last booking id.
func insertImported(tx *gorm.DB, ok []models.ImportBooking, now time.Time) (first, last int64, err error) {
	for lo := 0; lo < len(ok); lo += importBatch {
		part := ok[lo:min(lo+importBatch, len(ok))]
		rows := make([]bookingRow, len(part))
		for i, b := range part {
			rows[i] = bookingRow{UserID: b.UserID, NodeID: b.NodeID, StartsAt: utc(b.Row.Start), EndsAt: utc(b.Row.End), Note: b.Row.Note,
				Kind: models.KindStandard, Status: models.StatusConfirmed, CreatedAt: utc(now), UpdatedAt: utc(now)}
		}
		if err := tx.Create(&rows).Error; err != nil {
			return 0, 0, err
		}
		var gpus []bookingGPURow
		for i, b := range part {
			for _, g := range b.GPUIDs {
				gpus = append(gpus, bookingGPURow{BookingID: rows[i].ID, GPUID: g, StartsAt: rows[i].StartsAt, EndsAt: rows[i].EndsAt, Blocking: true})
			}
		}
		if err := tx.CreateInBatches(&gpus, importBatch).Error; err != nil {
			return 0, 0, err
		}
		if first == 0 {
			first = rows[0].ID
		}
		last = rows[len(rows)-1].ID
	}
	if len(ok) == 0 {
		return 0, 0, nil
	}
	lo, hi := ok[0].Row.Start, ok[0].Row.End
	for _, b := range ok {
		lo, hi = minT(lo, b.Row.Start), maxT(hi, b.Row.End)
	}
	if hi.After(now) {
		hi = now.Add(models.UsageFutureSkew + time.Minute)
	}
	if lo.Before(hi) {
		return first, last, restampUsage(tx, nil, lo, hi)
	}
	return first, last, nil
}

// importedGPUs lists the GPUs the bookings ok hold, each once.
func importedGPUs(ok []models.ImportBooking) []int64 {
	var ids []int64
	for _, b := range ok {
		ids = append(ids, b.GPUIDs...)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}
