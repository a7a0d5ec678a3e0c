package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// PreemptionPlan is what approving request id would do to the bookings in
// its way, computed as the approval would compute it, without writing: the
// approval page shows it and carries its fingerprint. A request that does
// not pre-empt has an empty plan.
func (db *DB) PreemptionPlan(ctx context.Context, id int64, now time.Time) ([]models.Preemption, error) {
	r, err := db.Request(ctx, id)
	if err != nil {
		return nil, err
	}
	if !r.Preempt {
		return nil, nil
	}
	plan, err := planWay(db.Gorm.WithContext(ctx), r, now, false)
	if err != nil {
		return nil, mapErr(err, "request")
	}
	return plan, ownerTeams(db.Gorm.WithContext(ctx), plan)
}

// planWay reads what the planner weighs for r (the bookings in its way,
// locked when lock is set; the node's GPUs and blocking bookings; the
// requester's team) and plans.
func planWay(tx *gorm.DB, r *models.PriorityRequest, now time.Time, lock bool) ([]models.Preemption, error) {
	cs, err := conflicts(tx, r.GPUIDs, r.StartsAt, r.EndsAt, 0)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	in := models.PreemptInput{Request: *r, Now: now}
	seen := map[int64]bool{}
	from, to := r.StartsAt, r.EndsAt
	for _, c := range cs {
		if seen[c.BookingID] {
			continue
		}
		seen[c.BookingID] = true
		b, err := bookingByID(tx, c.BookingID, lock)
		if err != nil {
			return nil, err
		}
		in.InWay = append(in.InWay, *b)
		from, to = minTime(from, b.StartsAt), maxTime(to, b.EndsAt)
	}
	if in.GPUs, err = nodeGPUs(tx, r.NodeID); err != nil {
		return nil, err
	}
	if in.Busy, err = nodeBusy(tx, r.NodeID, from, to); err != nil {
		return nil, err
	}
	if r.TeamID != nil {
		if err := tx.Table("memberships").Where("team_id = ?", *r.TeamID).Pluck("user_id", &in.Team).Error; err != nil {
			return nil, fmt.Errorf("store: request team members: %w", err)
		}
	}
	err = tx.Table("memberships m").Joins("JOIN teams t ON t.id = m.team_id").Where("t.whole_bookings").Distinct().Pluck("m.user_id", &in.Whole).Error
	if err != nil {
		return nil, fmt.Errorf("store: all-or-nothing owners: %w", err)
	}
	return models.PlanPreemption(in)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func nodeGPUs(tx *gorm.DB, nodeID int64) ([]models.GPU, error) {
	var rows []gpuRow
	if err := tx.Table("gpus g").Select("g.*").Where("g.node_id = ?", nodeID).Order("g.idx").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: node gpus: %w", err)
	}
	out := make([]models.GPU, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
}

// nodeBusy lists the blocking bookings on the node's GPUs that overlap
// [from, to), each with its GPUs: what a move must steer clear of.
func nodeBusy(tx *gorm.DB, nodeID int64, from, to time.Time) ([]models.Booking, error) {
	var rows []struct {
		BookingID int64     `gorm:"column:booking_id"`
		GPUID     int64     `gorm:"column:gpu_id"`
		StartsAt  time.Time `gorm:"column:starts_at"`
		EndsAt    time.Time `gorm:"column:ends_at"`
	}
	err := tx.Table("booking_gpus bg").Select("bg.booking_id, bg.gpu_id, bg.starts_at, bg.ends_at").
		Joins("JOIN gpus g ON g.id = bg.gpu_id").
		Where("g.node_id = ? AND bg.blocking AND bg.starts_at < ? AND bg.ends_at > ?", nodeID, utc(to), utc(from)).
		Order("bg.booking_id, bg.gpu_id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: node bookings: %w", err)
	}
	var out []models.Booking
	for _, r := range rows {
		if n := len(out); n > 0 && out[n-1].ID == r.BookingID {
			out[n-1].GPUIDs = append(out[n-1].GPUIDs, r.GPUID)
			continue
		}
		out = append(out, models.Booking{ID: r.BookingID, GPUIDs: []int64{r.GPUID}, StartsAt: r.StartsAt.UTC(), EndsAt: r.EndsAt.UTC()})
	}
	return out, nil
}

// ownerTeams fills each row's owner teams, for the approval page.
func ownerTeams(tx *gorm.DB, plan []models.Preemption) error {
	if len(plan) == 0 {
		return nil
	}
	ids := make([]int64, len(plan))
	for i, p := range plan {
		ids[i] = p.Booking.UserID
	}
	var rows []struct {
		UserID int64  `gorm:"column:user_id"`
		Name   string `gorm:"column:name"`
	}
	if err := tx.Table("memberships m").Select("m.user_id, t.name").Joins("JOIN teams t ON t.id = m.team_id").
		Where("m.user_id IN ?", ids).Order("t.name").Scan(&rows).Error; err != nil {
		return fmt.Errorf("store: owner teams: %w", err)
	}
	names := map[int64][]string{}
	for _, r := range rows {
		names[r.UserID] = append(names[r.UserID], r.Name)
	}
	for i := range plan {
		plan[i].OwnerTeams = strings.Join(names[plan[i].Booking.UserID], ", ")
	}
	return nil
}

// applyPreemption does what p says to its booking (locked by planWay),
// audits it and tells the owner. It returns the line of the request's
// audit event.
func applyPreemption(tx *gorm.DB, r *models.PriorityRequest, p models.Preemption, actor *models.User, now time.Time, mail models.Mailer) (map[string]any, error) {
	b := p.Booking
	details := map[string]any{"request_id": r.ID, "action": p.Action, "lost_gpu_seconds": p.LostGPUSeconds}
	var err error
	switch p.Action {
	case models.GiveWayMove:
		err = moveBooking(tx, &b, p.Moves, now)
		details["new_gpu_ids"] = p.GPUIDs
	case models.GiveWaySplit:
		var parts []int64
		parts, err = splitBooking(tx, &b, p.Keep, now)
		details["parts"], details["new_booking_ids"], details["taken_gpu_ids"] = p.Keep, parts, p.Taken
	default:
		err = cancelHold(tx, &b, now)
	}
	if err != nil {
		return nil, fmt.Errorf("store: pre-empt booking %d (%s): %w", b.ID, p.Action, err)
	}
	if err := auditBooking(tx, actor, models.AuditBookingPreempt, &b, details); err != nil {
		return nil, err
	}
	owner, err := userInTx(tx, b.UserID)
	if err != nil {
		return nil, err
	}
	if err := notify(tx, mail, models.Notice{Kind: models.NoticePreempted, Request: *r, Booking: &b, Preemption: &p}, []*models.User{owner}, now); err != nil {
		return nil, err
	}
	return map[string]any{"booking_id": b.ID, "user_id": b.UserID, "action": p.Action, "lost_gpu_seconds": p.LostGPUSeconds}, nil
}

// moveBooking puts b on other GPUs for its whole span.
func moveBooking(tx *gorm.DB, b *models.Booking, moves []models.GPUMove, now time.Time) error {
	var from, to []int64
	for _, m := range moves {
		res := tx.Model(&bookingGPURow{}).Where("booking_id = ? AND gpu_id = ?", b.ID, m.From).Update("gpu_id", m.To)
		if res.Error != nil {
			return res.Error
		}
		from, to = append(from, m.From), append(to, m.To)
	}
	if err := tx.Model(&bookingRow{}).Where("id = ?", b.ID).Update("updated_at", utc(now)).Error; err != nil {
		return err
	}
	if err := restampBooking(tx, append(from, to...), b.StartsAt, b.EndsAt, now); err != nil {
		return err
	}
	return nil
}

// splitBooking keeps the parts of b in keep: the first stays b (its start
// or end moved, the GPUs it gives up dropped), each later one becomes a
// new standard booking of the same owner and note on the part's GPUs. It
// returns the new bookings' ids.
func splitBooking(tx *gorm.DB, b *models.Booking, keep []models.Part, now time.Time) ([]int64, error) {
	if len(keep) == 0 {
		return nil, fmt.Errorf("split without parts")
	}
	first, cur := keep[0], *b
	if drop := slices.DeleteFunc(slices.Clone(b.GPUIDs), func(g int64) bool { return slices.Contains(first.GPUIDs, g) }); len(drop) > 0 {
		if err := tx.Where("booking_id = ? AND gpu_id IN ?", b.ID, drop).Delete(&bookingGPURow{}).Error; err != nil {
			return nil, err
		}
		if err := restampBooking(tx, drop, b.StartsAt, b.EndsAt, now); err != nil {
			return nil, err
		}
		cur.GPUIDs = slices.Clone(first.GPUIDs)
	}
	if !first.End.Equal(cur.EndsAt) {
		if err := setBookingEnd(tx, &cur, first.End, nil, now); err != nil {
			return nil, err
		}
	}
	if !first.Start.Equal(cur.StartsAt) {
		if err := setBookingStart(tx, &cur, first.Start, now); err != nil {
			return nil, err
		}
	}
	var ids []int64
	for _, part := range keep[1:] {
		id, err := insertBooking(tx, models.NewBooking{UserID: b.UserID, GPUIDs: slices.Clone(part.GPUIDs), StartsAt: part.Start, EndsAt: part.End,
			Note: b.Note}, b.NodeID, models.KindStandard, now)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// setBookingStart moves the start of a booking that has not begun.
func setBookingStart(tx *gorm.DB, b *models.Booking, start, now time.Time) error {
	if err := tx.Model(&bookingRow{}).Where("id = ?", b.ID).Updates(map[string]any{"starts_at": utc(start), "updated_at": utc(now)}).Error; err != nil {
		return err
	}
	if err := tx.Model(&bookingGPURow{}).Where("booking_id = ?", b.ID).Update("starts_at", utc(start)).Error; err != nil {
		return err
	}
	return restampBooking(tx, b.GPUIDs, b.StartsAt, start, now)
}
