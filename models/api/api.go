// Package api is the JSON API v1 (/api/v1) on the wire: the bodies, the
// queries and the paths, declared once. The portal's handlers answer with
// these types, the terminal client (cmd/gpubook) decodes them, and the
// OpenAPI document (handlers/openapi.json) is generated from them
// (Document), so the three cannot disagree.
//
// It imports only the standard library, as models/wire does for the agent:
// a Go client links it without the domain. Names are snake_case, times
// RFC 3339 in UTC; a change here is a change of the public API, so the
// types are kept apart from the domain types they are filled from.
//
// A field's struct tags say what the document says of it: json (its name;
// omitempty makes it optional), doc (a description), enum (its values,
// comma-separated; a leading comma allows ""), minItems. To add a field, add
// it here with its tags and run go generate ./handlers.
package api

import (
	"strconv"
	"strings"
)

// Prefix is where the API is served; the paths below are relative to it,
// as the document's servers entry says.
const Prefix = "/api/v1"

// Paths of the API, in the document's {param} form (Path fills one in).
const (
	PathMe       = "/me"
	PathGPUs     = "/gpus"
	PathBookings = "/bookings"
	PathBooking  = "/bookings/{id}"
	PathRelease  = "/bookings/{id}/release"
	PathExtend   = "/bookings/{id}/extend"
	PathSlots    = "/slots"
	PathRequests = "/requests"
	PathRequest  = "/requests/{id}"
	PathLimits   = "/limits"
	PathOpenAPI  = "/openapi.json"
)

// Path is p with its {id} filled in: Path(PathExtend, 7) is "/bookings/7/extend".
func Path(p string, id int64) string {
	return strings.Replace(p, "{id}", strconv.FormatInt(id, 10), 1)
}
