package handlers

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/models/wire"
)

// agentBody is a request body of the agent API: it says what is wrong with
// itself after decoding.
type agentBody interface{ Validate() error }

// agentDepth bounds how deep an agent body nests: the deepest real one,
// a usage batch, is five levels (batch, records, record, users, user).
const agentDepth = 8

// agentOtherLists bounds lists the protocol does not name (a newer agent's
// fields, which are skipped without being stored).
const agentOtherLists = 64

// agentKeys bounds the keys of one object of an agent body: the largest,
// a heartbeat, has 16 fields; the rest is room for a newer agent's. A
// 1 MiB heartbeat of 93,000 unknown keys cost 7 times its size in key
// records and hash entries before the bound; now it is refused at its
// 65th key.
const agentKeys = 64

// The shapes of the agent API's bodies: every list with its bound.
var (
	usageShape = jsonShape{maxDepth: agentDepth, otherLists: agentOtherLists, maxKeys: agentKeys, lists: map[string]int{
		"records": wire.MaxRecordsPerBatch, "records.users": wire.MaxUsersPerRecord}}
	violationShape = jsonShape{maxDepth: agentDepth, otherLists: agentOtherLists, maxKeys: agentKeys, lists: map[string]int{
		"violations": wire.MaxViolationsPerBatch}}
	idleShape = jsonShape{maxDepth: agentDepth, otherLists: agentOtherLists, maxKeys: agentKeys, lists: map[string]int{
		"reports": wire.MaxIdlePerBatch, "reports.gpu_uuids": wire.MaxGPUs},
		totals: map[string]int{"reports.gpu_uuids": wire.MaxIdleGPUsPerBatch}}
	inventoryShape = jsonShape{maxDepth: agentDepth, otherLists: agentOtherLists, maxKeys: agentKeys, lists: map[string]int{
		"gpus": wire.MaxGPUs}}
	flatShape = jsonShape{maxDepth: agentDepth, otherLists: agentOtherLists, maxKeys: agentKeys}
)

// decodeAgent reads one agent body strictly and validates it. It reads at
// most limit bytes, walks them once (checkJSON: one object, no repeated
// key, no trailing data, bounded nesting and lists) and only then decodes,
// so that the memory a request costs is bounded by its size whatever it
// holds. Every refusal is one EINVALID error naming the first problem: the
// agent treats it as permanent and sets the body aside.
func decodeAgent(c echo.Context, v agentBody, shape jsonShape, limit int64) error {
	return decodeAgentSized(c, v, shape, limit, "", nil)
}

// decodeAgentSized is decodeAgent that lets size make v's long list, the
// body's list at path, at its length once the body is checked and before
// it is decoded: json grows a list by doubling, about twice the list in
// garbage. The check counts the list as it walks the body (checkJSONCount).
func decodeAgentSized(c echo.Context, v agentBody, shape jsonShape, limit int64, path string, size func(n int)) error {
	body, err := readAgentBody(c, limit)
	if err != nil {
		return err
	}
	n, p := checkJSONCount(body, shape, path)
	if p != nil {
		return agentJSONProblem(p)
	}
	if size != nil {
		size(n)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return agentDecodeError("", err)
	}
	return models.AgentError(v.Validate())
}

// readAgentBody reads at most limit bytes of the request body into a
// buffer of the announced length, so that reading a body costs its size
// once (io.ReadAll grows its buffer step by step, about twice the body in
// all); a body of unknown length grows its buffer by doubling. More than
// limit bytes is an error.
func readAgentBody(c echo.Context, limit int64) ([]byte, error) {
	r := c.Request()
	size := int64(64 << 10)
	if r.ContentLength >= 0 {
		size = r.ContentLength + 1 // room to see the end without growing
	}
	buf := make([]byte, 0, min(size, limit+1))
	body := io.LimitReader(r.Body, limit+1)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(int64(cap(buf)), limit+1-int64(cap(buf)))))
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF || int64(len(buf)) > limit {
			break
		}
		if err != nil {
			var tooBig *echo.HTTPError
			if errors.As(err, &tooBig) {
				return nil, err // the body limit middleware's own answer
			}
			return nil, models.AgentInvalid("body", "could not be read")
		}
	}
	if int64(len(buf)) > limit {
		return nil, models.NewError(models.EINVALID, models.M("err.body_too_large"))
	}
	return buf, nil
}

// agentDecodeError is the agent's error for what json refused in a value
// at place (a prefix of the fields it names; "" for the body).
func agentDecodeError(place string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		switch {
		case place != "" && field != "":
			field = place + "." + field
		case place != "":
			field = place
		}
		return models.AgentInvalid(truncateRunes(field, 128), "wrong JSON type or out of range, want "+te.Type.String())
	}
	return models.AgentInvalid("body", "not valid JSON: "+truncateRunes(err.Error(), 128))
}

// agentJSONProblem turns a fault of checkJSON into the agent's error.
func agentJSONProblem(p *jsonProblem) error {
	switch p.fault {
	case faultNotObject:
		return models.AgentInvalid("body", "must be a JSON object")
	case faultTrailing:
		return models.AgentInvalid("body", "more data after the JSON object")
	case faultDuplicate:
		return models.AgentInvalid(p.field, "field given twice")
	case faultDepth:
		return models.AgentInvalid("body", fmt.Sprintf("nested deeper than %d levels", p.max))
	case faultList:
		return models.AgentInvalid(p.field, fmt.Sprintf("at most %d allowed", p.max))
	case faultTotal:
		return models.AgentInvalid(p.field, fmt.Sprintf("at most %d allowed in all lists of this name in one batch", p.max))
	case faultKeys:
		return models.AgentInvalid(cmp.Or(p.field, "body"), fmt.Sprintf("more than %d fields in one object", p.max))
	}
	return models.AgentInvalid("body", "not valid JSON")
}
