package api

import "time"

// Booking is one booking as every booking route answers it.
type Booking struct {
	ID       int64   `json:"id"`
	UserID   int64   `json:"user_id"`
	UserName string  `json:"user_name"`
	NodeID   int64   `json:"node_id"`
	Node     string  `json:"node"`
	GPUIDs   []int64 `json:"gpu_ids"`
	// GPUUUIDs lets a script set CUDA_VISIBLE_DEVICES from the answer: the
	// agent sets UUIDs, never indices.
	GPUUUIDs   []string   `json:"gpu_uuids" doc:"UUIDs of gpu_ids, in the same order: what CUDA_VISIBLE_DEVICES lists"`
	StartsAt   time.Time  `json:"starts_at"`
	EndsAt     time.Time  `json:"ends_at"`
	Note       string     `json:"note"`
	Kind       string     `json:"kind" enum:"standard,priority"`
	Status     string     `json:"status" enum:"confirmed,cancelled"`
	Phase      string     `json:"phase" enum:"upcoming,active,past,cancelled"`
	ReleasedAt *time.Time `json:"released_at"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

// BookingList answers GET /bookings, by start.
type BookingList struct {
	Bookings []Booking `json:"bookings"`
}

// BookingsQuery is the query of GET /bookings: the bookings that overlap
// [From, To), at most 62 days apart; cancelled ones are left out.
type BookingsQuery struct {
	From time.Time `query:"from" doc:"start of the range, RFC 3339 with a zone"`
	To   time.Time `query:"to" doc:"end of the range"`
	GPU  int64     `query:"gpu,omitempty" doc:"only this GPU"`
	Mine bool      `query:"mine,omitempty" doc:"only the token user's"`
}

// NewBooking is the body of POST /bookings. The server reads it strictly:
// unknown or repeated fields and times without a zone are refused.
type NewBooking struct {
	GPUIDs   []int64   `json:"gpu_ids" minItems:"1"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
	Note     string    `json:"note,omitempty"`
}

// Extend is the body of POST /bookings/{id}/extend: the new end.
type Extend struct {
	EndsAt time.Time `json:"ends_at"`
}

// Slot is one option of GET /slots: GPUs (or MIG instances of the profile
// asked) of one node free for the window.
type Slot struct {
	NodeID   int64     `json:"node_id"`
	Node     string    `json:"node"`
	Model    string    `json:"model"`
	GPUIDs   []int64   `json:"gpu_ids"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
}

// SlotList answers GET /slots: up to three options, earliest first.
type SlotList struct {
	Slots []Slot `json:"slots"`
}

// SlotsQuery is the query of GET /slots. Without a profile it finds whole
// GPUs only (never a MIG instance, never a GPU split into them); with one,
// MIG instances of that profile instead.
type SlotsQuery struct {
	GPUs    int       `query:"gpus" doc:"how many GPUs, or with profile how many MIG instances"`
	Hours   float64   `query:"hours" doc:"how long, decimals allowed"`
	Model   string    `query:"model,omitempty" doc:"GPU model, any case"`
	Node    string    `query:"node,omitempty" doc:"node name, any case"`
	After   time.Time `query:"after,omitempty" doc:"earliest start (default now)"`
	Profile string    `query:"profile,omitempty" doc:"MIG profile, e.g. 1g.10gb, any case: find MIG instances of it instead of whole GPUs"`
}
