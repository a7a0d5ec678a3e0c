package api

import "time"

// Error is the body of every refused call, with the HTTP status from its
// code (docs/api.md lists them).
type Error struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says why a call was refused, in the user's language.
type ErrorDetail struct {
	Code      string            `json:"code" enum:"invalid,policy,not_found,conflict,forbidden,unauthorized,rate_limited,internal"`
	Message   string            `json:"message"`
	Fields    map[string]string `json:"fields,omitempty" doc:"field or policy rule → what is wrong"`
	Conflicts []Conflict        `json:"conflicts,omitempty"`
	RequestID string            `json:"request_id,omitempty"`
}

// Conflict is a booking in the way of a refused one (code conflict):
// which GPU, who and when.
type Conflict struct {
	GPUID     int64     `json:"gpu_id"`
	GPUIndex  int       `json:"gpu_index"`
	GPUName   string    `json:"gpu_name" doc:"how people know the unit: \"GPU 1\", or \"GPU 7 · 1g.10gb\" for a MIG instance (whose gpu_index is 64 and up)"`
	BookingID int64     `json:"booking_id"`
	UserName  string    `json:"user_name"`
	StartsAt  time.Time `json:"starts_at"`
	EndsAt    time.Time `json:"ends_at"`
}
