package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// operation is one route of the API as the document describes it. Bodies
// and queries are given as values of their Go types, whose schemas are
// derived from the types themselves.
type operation struct {
	method, path, id, summary string
	query                     any // a query struct (its fields are the parameters)
	body                      any // the request body
	status                    int // the success status
	answer                    any // its body
	answered                  string
	refusals                  []refusal
}

// refusal is a status an operation may answer besides its success, and when.
type refusal struct {
	status int
	when   string
}

// operations are the API's routes, in the order the document lists them.
// Every one of them but the document itself also answers 401 and 429.
var operations = []operation{
	{method: http.MethodGet, path: PathMe, id: "showMe", summary: "Who the token belongs to",
		status: http.StatusOK, answer: Me{}, answered: "the user"},
	{method: http.MethodGet, path: PathGPUs, id: "listGPUs", summary: "Every GPU and MIG instance, by node and index",
		status: http.StatusOK, answer: GPUList{}, answered: "the GPUs, then each node's MIG instances"},
	{method: http.MethodGet, path: PathBookings, id: "listBookings", summary: "Bookings that overlap [from, to), cancelled ones left out",
		query: BookingsQuery{}, status: http.StatusOK, answer: BookingList{}, answered: "the bookings, by start",
		refusals: []refusal{{422, "bad or missing from/to, or more than 62 days apart"}}},
	{method: http.MethodPost, path: PathBookings, id: "createBooking", summary: "Book GPUs or MIG instances of one node",
		body: NewBooking{}, status: http.StatusCreated, answer: Booking{}, answered: "the booking",
		refusals: []refusal{{409, "the GPUs are booked; conflicts lists the bookings in the way"},
			{422, "invalid input (code invalid; a GPU split into MIG instances is not bookable whole) or outside the booking policy (code policy); fields says which"}}},
	{method: http.MethodDelete, path: PathBooking, id: "cancelBooking", summary: "Cancel a booking that has not started",
		status: http.StatusOK, answer: Booking{}, answered: "the cancelled booking",
		refusals: []refusal{{403, "someone else's booking"}, {404, "no such booking"}, {422, "the booking has started: release it instead"}}},
	{method: http.MethodPost, path: PathRelease, id: "releaseBooking", summary: "End an active booking now",
		status: http.StatusOK, answer: Booking{}, answered: "the released booking",
		refusals: []refusal{{403, "someone else's booking"}, {404, "no such booking"}, {422, "the booking has not started: cancel it instead"}}},
	{method: http.MethodPost, path: PathExtend, id: "extendBooking", summary: "Move the end of an upcoming or active booking later",
		body: Extend{}, status: http.StatusOK, answer: Booking{}, answered: "the extended booking",
		refusals: []refusal{{403, "someone else's booking"}, {404, "no such booking"}, {409, "someone else has the GPUs later"},
			{422, "invalid end, or outside the booking policy"}}},
	{method: http.MethodGet, path: PathSlots, id: "findSlots", summary: "The three earliest options for N GPUs, or N MIG instances of a profile, of one node",
		query: SlotsQuery{}, status: http.StatusOK, answer: SlotList{}, answered: "up to three options, earliest first",
		refusals: []refusal{{422, "invalid query (an unknown profile too); fields says which"}}},
	{method: http.MethodPost, path: PathRequests, id: "createRequest", summary: "File a priority request: a booking's fields plus its justification",
		body: NewRequest{}, status: http.StatusCreated, answer: Request{}, answered: "the pending request",
		refusals: []refusal{{422, "invalid input; fields says which"}}},
	{method: http.MethodGet, path: PathRequest, id: "showRequest", summary: "A priority request and its decision",
		status: http.StatusOK, answer: Request{}, answered: "the request",
		refusals: []refusal{{404, "no such request, or someone else's (not an admin)"}}},
	{method: http.MethodGet, path: PathLimits, id: "showLimits", summary: "The booking rules that apply to the token user now, and this week's GPU-minutes",
		status: http.StatusOK, answer: Limits{}, answered: "the limits"},
	{method: http.MethodGet, path: PathOpenAPI, id: "openAPI", summary: "This document (no token needed)",
		status: http.StatusOK, answered: "the OpenAPI 3.1 document"},
}

// everywhere are the refusals every operation with a token may answer.
var everywhere = []refusal{{401, "token missing, unknown or revoked"}, {429, "too many calls (Retry-After says when to retry)"}}

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// Document is the API's OpenAPI 3.1 document, indented as committed in
// handlers/openapi.json (go generate writes it; a test there fails while
// the two differ). Its schemas are derived from the types of this package,
// its operations from the table above.
func Document() ([]byte, error) {
	g := &schemas{named: map[string]object{}, types: map[string]reflect.Type{}}
	paths := object{}
	for _, op := range operations {
		item := g.operation(op)
		i := slices.IndexFunc(paths, func(m member) bool { return m.key == op.path })
		if i < 0 {
			paths = append(paths, member{op.path, object{}})
			i = len(paths) - 1
		}
		paths[i].value = append(paths[i].value.(object), member{strings.ToLower(op.method), item})
	}
	names := make([]string, 0, len(g.named))
	for n := range g.named {
		names = append(names, n)
	}
	sort.Strings(names)
	components := object{}
	for _, n := range names {
		components = append(components, member{n, g.named[n]})
	}
	if g.err != nil {
		return nil, g.err
	}
	doc := object{
		{"openapi", "3.1.0"},
		{"info", object{{"title", "gpubook JSON API"}, {"version", "1"}, {"description", "Book shared GPUs from scripts and the terminal " +
			"with a personal token. Prose, examples and the booking policy: docs/api.md. Times are RFC 3339; answers give them in UTC. " +
			"Every error has the Error shape."}}},
		{"jsonSchemaDialect", "https://json-schema.org/draft/2020-12/schema"},
		{"servers", []any{object{{"url", Prefix}}}},
		{"security", []any{object{{"token", []string{}}}}},
		{"paths", paths},
		{"components", object{{"schemas", components}, {"securitySchemes", object{{"token", object{{"type", "http"}, {"scheme", "bearer"},
			{"description", "a personal token (gpb_…) from the profile page or `gpubook token create`"}}}}}}},
	}
	b, err := marshal(doc)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", " "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// operation is one operation object: parameters from the path and the
// query type, the body's and the answers' schemas.
func (g *schemas) operation(op operation) object {
	o := object{{"operationId", op.id}, {"summary", op.summary}}
	if op.path == PathOpenAPI {
		o = append(o, member{"security", []any{}})
	}
	var params []any
	for _, m := range pathParam.FindAllStringSubmatch(op.path, -1) {
		params = append(params, object{{"name", m[1]}, {"in", "path"}, {"required", true}, {"schema", object{{"type", "integer"}}}})
	}
	if op.query != nil {
		params = append(params, g.parameters(op.query)...)
	}
	if len(params) > 0 {
		o = append(o, member{"parameters", params})
	}
	if op.body != nil {
		o = append(o, member{"requestBody", object{{"required", true}, {"content", jsonContent(g.of(reflect.TypeOf(op.body)))}}})
	}
	ok := object{{"type", "object"}}
	if op.answer != nil {
		ok = g.of(reflect.TypeOf(op.answer))
	}
	answers := []refusal{{op.status, op.answered}}
	if op.path != PathOpenAPI {
		answers = append(answers, everywhere...)
	}
	answers = append(answers, op.refusals...)
	sort.SliceStable(answers, func(i, j int) bool { return answers[i].status < answers[j].status })
	responses := object{}
	for _, a := range answers {
		schema := ok
		if a.status != op.status {
			schema = g.of(reflect.TypeFor[Error]())
		}
		responses = append(responses, member{strconv.Itoa(a.status), object{{"description", a.when}, {"content", jsonContent(schema)}}})
	}
	return append(o, member{"responses", responses})
}

func jsonContent(schema object) object {
	return object{{"application/json", object{{"schema", schema}}}}
}
