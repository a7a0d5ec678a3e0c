package views

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gpubook/gpubook/models"
)

// MoveText writes the GPUs of a move for people: "GPU 1 → GPU 3", or
// "GPU 7 · 1g.10gb → GPU 6 · 1g.10gb" for MIG instances.
func MoveText(moves []models.GPUMove) string {
	parts := make([]string, len(moves))
	for i, m := range moves {
		from, to := m.FromName, m.ToName
		if from == "" || to == "" { // a move built without names: whole GPUs
			from, to = "GPU "+strconv.Itoa(m.FromIndex), "GPU "+strconv.Itoa(m.ToIndex)
		}
		parts[i] = from + " → " + to
	}
	return strings.Join(parts, ", ")
}

// PlanWhat says what approving does to one booking, in the viewer's
// language and zone: moved to GPU n, split keeping A–B and C–D, cancelled.
func (p *Page) PlanWhat(pr models.Preemption) string {
	switch pr.Action {
	case models.GiveWayMove:
		return p.Tr("preempt.moved", "GPUs", MoveText(pr.Moves))
	case models.GiveWaySplit:
		parts := make([]string, len(pr.Keep))
		for i, s := range pr.Keep {
			parts[i] = partText(p.Tr, pr, s, p.cellRange(s.Start, s.End))
		}
		out := p.Tr("preempt.split", "Parts", strings.Join(parts, p.Tr("preempt.and")))
		if pr.Whole {
			out += " " + p.Tr("preempt.whole", "Of", len(pr.Booking.GPUIDs))
		}
		return out
	}
	return p.Tr("preempt.cancelled")
}

// partText names a kept part, adding how many of the booking's GPUs it
// keeps when the request takes only some of them over that part.
func partText(tr func(string, ...any) string, pr models.Preemption, part models.Part, when string) string {
	if n, of := len(part.GPUIDs), len(pr.Booking.GPUIDs); n < of {
		return tr("preempt.part_gpus", "When", when, "Count", n, "Of", of)
	}
	return when
}

// PlanLoss is the GPU-hours a plan row or a whole plan takes, for people.
func (p *Page) PlanLoss(seconds int64) string {
	return p.Tr("preempt.loss", "Hours", models.FormatGPUHours(seconds))
}

// requestDetails is what the request's audit events carry that their
// sentences tell.
type requestDetails struct {
	Comment   string `json:"comment"`
	Preempted []struct {
		Action string `json:"action"`
		Lost   int64  `json:"lost_gpu_seconds"`
	} `json:"preempted"`
}

// HistoryLine tells one event of request r as a sentence, naming people
// rather than ids: the requester and the decider are known by name.
func (p *Page) HistoryLine(e models.AuditEvent, r models.PriorityRequest) string {
	name := e.ActorLabel
	switch {
	case e.ActorID != nil && *e.ActorID == r.UserID:
		name = r.UserName
	case e.ActorID != nil && r.DecidedBy != nil && *e.ActorID == *r.DecidedBy:
		name = r.DeciderName
	}
	var d requestDetails
	_ = json.Unmarshal([]byte(e.Details), &d) // an event without details tells its action alone
	var out string
	switch e.Action {
	case models.AuditRequestCreate:
		return p.Tr("request.history.create", "Name", name)
	case models.AuditRequestWithdraw:
		return p.Tr("request.history.withdraw", "Name", name)
	case models.AuditRequestExpire:
		return p.Tr("request.history.expire")
	case models.AuditRequestDeny:
		out = p.Tr("request.history.deny", "Name", name)
	case models.AuditRequestApprove:
		out = p.Tr("request.history.approve", "Name", name)
		if n := len(d.Preempted); n > 0 {
			var lost int64
			for _, x := range d.Preempted {
				lost += x.Lost
			}
			out += " " + p.Tr("request.history.preempted", "N", n, "Hours", models.FormatGPUHours(lost))
		}
	default:
		return e.Action
	}
	if d.Comment != "" {
		out += " " + p.Tr("request.history.comment", "Comment", d.Comment)
	}
	return out
}
