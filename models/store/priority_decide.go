package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gpubook/gpubook/models"
)

// ApproveRequest turns a pending request into a priority booking. In one
// transaction it checks that actor may decide, sets the status with a
// compare-and-set on 'pending' (of two deciders only one changes the row),
// re-checks the slot, pre-empts the standard bookings in the way when the
// request asks for it, inserts the booking, queues the emails and writes the
// audit events. Any failure leaves everything as it was: the request stays
// pending and no booking is touched. plan is the fingerprint of the plan
// the decider was shown (PreemptionPlan), or AnyPlan; any other plan is
// refused with ECONFLICT rather than applied unseen.
func (db *DB) ApproveRequest(ctx context.Context, id int64, actor *models.User, comment, plan string, now time.Time, mail models.Mailer) (*models.PriorityRequest, error) {
	err := db.inTxRetrying(ctx, func(tx *gorm.DB) error {
		r, err := db.decide(tx, id, actor, models.RequestApproved, comment, now)
		if err != nil {
			return err
		}
		preempted, err := db.clearWay(tx, r, actor, plan, now, mail)
		if err != nil {
			return err
		}
		if err := requireInService(tx, r.GPUIDs); err != nil { // the GPUs are locked by now
			return err
		}
		bid, err := insertBooking(tx, r.Booking(), r.NodeID, models.KindPriority, now)
		if err != nil {
			return err
		}
		if err := tx.Model(&requestRow{}).Where("id = ?", id).Update("booking_id", bid).Error; err != nil {
			return fmt.Errorf("store: link request booking: %w", err)
		}
		r.BookingID = &bid
		if err := notifyRequester(tx, mail, r, now); err != nil {
			return err
		}
		return audit(tx, models.ActorFor(actor, ""), models.AuditRequestApprove, "request", id, map[string]any{
			"booking_id": bid, "comment": comment, "user_id": r.UserID, "preempt": r.Preempt, "preempted": preempted})
	})
	if isOverlap(err) {
		return nil, &models.Error{Code: models.ECONFLICT, Msg: models.M("request.err.taken"), Err: err}
	}
	if err != nil {
		return nil, mapErr(err, "request")
	}
	return db.Request(ctx, id)
}

// DenyRequest closes a pending request with the decider's comment.
func (db *DB) DenyRequest(ctx context.Context, id int64, actor *models.User, comment string, now time.Time, mail models.Mailer) (*models.PriorityRequest, error) {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r, err := db.decide(tx, id, actor, models.RequestDenied, comment, now)
		if err != nil {
			return err
		}
		if err := notifyRequester(tx, mail, r, now); err != nil {
			return err
		}
		return audit(tx, models.ActorFor(actor, ""), models.AuditRequestDeny, "request", id, map[string]any{
			"comment": comment, "user_id": r.UserID})
	})
	if err != nil {
		return nil, mapErr(err, "request")
	}
	return db.Request(ctx, id)
}

// decide checks the decider and moves the request from pending to status.
// The UPDATE … WHERE status = 'pending' is the guard against a second
// decider: whoever comes second changes no row and gets ECONFLICT.
func (db *DB) decide(tx *gorm.DB, id int64, actor *models.User, status, comment string, now time.Time) (*models.PriorityRequest, error) {
	var row requestRow
	if err := requestQuery(tx).Where("r.id = ?", id).Take(&row).Error; err != nil {
		return nil, mapErr(err, "request")
	}
	r := row.model()
	lead, err := leadTeams(tx, actor.ID)
	if err != nil {
		return nil, err
	}
	if err := models.CanDecide(actor, &r, lead); err != nil {
		return nil, err
	}
	if err := models.CheckPending(&r, now); err != nil {
		return nil, err
	}
	res := tx.Model(&requestRow{}).Where("id = ? AND status = ?", id, models.RequestPending).Updates(map[string]any{
		"status": status, "decided_by": actor.ID, "decided_at": utc(now), "comment": comment, "updated_at": utc(now)})
	if res.Error != nil {
		return nil, fmt.Errorf("store: decide request: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, models.NewError(models.ECONFLICT, models.M("request.err.decided", "Status", "?"))
	}
	r.Status, r.DecidedBy, r.Comment = status, &actor.ID, comment
	return &r, nil
}

// clearWay makes room for an approved request: without pre-emption the
// slot must be free; with it, the bookings in the way (locked first) give
// way as the planner says, each audited and its owner told. A plan whose
// fingerprint is not want (unless want is AnyPlan) is refused: the decider
// saw another, or none. It returns what it did to each booking, for the request's audit
// event.
func (db *DB) clearWay(tx *gorm.DB, r *models.PriorityRequest, actor *models.User, want string, now time.Time, mail models.Mailer) ([]map[string]any, error) {
	// The GPUs first (locks.go), before any booking in the way: the
	// request's own, or, when it pre-empts, every GPU of the node, since a
	// booking in the way may be moved to any of them.
	var err error
	if r.Preempt {
		err = lockNodeGPUs(tx, r.NodeID)
	} else {
		err = lockGPUs(tx, r.GPUIDs)
	}
	if err != nil {
		return nil, err
	}
	if !r.Preempt {
		cs, err := conflicts(tx, r.GPUIDs, r.StartsAt, r.EndsAt, 0)
		if err != nil || len(cs) == 0 {
			return nil, err
		}
		return nil, models.ConflictError(cs)
	}
	plan, err := planWay(tx, r, now, true)
	if err != nil {
		return nil, err
	}
	if want != models.AnyPlan && models.PlanFingerprint(r.ID, plan) != want {
		return nil, models.NewError(models.ECONFLICT, models.M("request.err.plan_changed"))
	}
	done := make([]map[string]any, 0, len(plan))
	for _, p := range plan {
		d, err := applyPreemption(tx, r, p, actor, now, mail)
		if err != nil {
			return nil, err
		}
		done = append(done, d)
	}
	return done, nil
}

func notifyRequester(tx *gorm.DB, mail models.Mailer, r *models.PriorityRequest, now time.Time) error {
	u, err := userInTx(tx, r.UserID)
	if err != nil {
		return err
	}
	return notify(tx, mail, models.Notice{Kind: models.NoticeDecision, Request: *r}, []*models.User{u}, now)
}

// WithdrawRequest lets the requester take back a pending request: a
// compare-and-set on 'pending' like a decision, so that a withdrawal and an
// approval at the same moment never both happen.
func (db *DB) WithdrawRequest(ctx context.Context, id int64, actor *models.User, now time.Time) (*models.PriorityRequest, error) {
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row requestRow
		if err := requestQuery(tx).Where("r.id = ?", id).Take(&row).Error; err != nil {
			return mapErr(err, "request")
		}
		r := row.model()
		if err := models.CanWithdraw(actor, &r); err != nil {
			return err
		}
		res := tx.Model(&requestRow{}).Where("id = ? AND status = ?", id, models.RequestPending).
			Updates(map[string]any{"status": models.RequestWithdrawn, "updated_at": utc(now)})
		if res.Error != nil {
			return fmt.Errorf("store: withdraw request: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return models.NewError(models.ECONFLICT, models.M("request.err.decided", "Status", "?"))
		}
		return audit(tx, models.ActorFor(actor, ""), models.AuditRequestWithdraw, "request", id, map[string]any{"user_id": r.UserID})
	})
	if err != nil {
		return nil, mapErr(err, "request")
	}
	return db.Request(ctx, id)
}
