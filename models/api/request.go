package api

import "time"

// NewRequest is the body of POST /requests: a booking refused by policy
// (or in others' way) filed as a priority request, with the booking's
// fields and the justification a team lead decides on.
type NewRequest struct {
	GPUIDs   []int64   `json:"gpu_ids" minItems:"1"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
	Note     string    `json:"note,omitempty"`
	Purpose  string    `json:"purpose"`
	Urgency  string    `json:"urgency"`
	Plan     string    `json:"plan"`
	GiveBack string    `json:"give_back"`
	Preempt  bool      `json:"preempt,omitempty"`
}

// Request is a priority request and its decision.
type Request struct {
	ID        int64      `json:"id"`
	UserID    int64      `json:"user_id"`
	TeamID    *int64     `json:"team_id"`
	NodeID    int64      `json:"node_id"`
	GPUIDs    []int64    `json:"gpu_ids"`
	StartsAt  time.Time  `json:"starts_at"`
	EndsAt    time.Time  `json:"ends_at"`
	Note      string     `json:"note"`
	Purpose   string     `json:"purpose"`
	Urgency   string     `json:"urgency"`
	Plan      string     `json:"plan"`
	GiveBack  string     `json:"give_back"`
	Preempt   bool       `json:"preempt"`
	Status    string     `json:"status" enum:"pending,approved,denied,expired,withdrawn"`
	Comment   string     `json:"comment"`
	BookingID *int64     `json:"booking_id"`
	DecidedAt *time.Time `json:"decided_at"`
	CreatedAt time.Time  `json:"created_at"`
}
