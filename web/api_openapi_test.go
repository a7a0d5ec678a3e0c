package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gpubook/gpubook/handlers"
	"github.com/gpubook/gpubook/models/store/storetest"
	"github.com/gpubook/gpubook/web/webtest"
)

// openAPI is the parsed contract with its schemas compiled by a JSON Schema
// 2020-12 validator (OpenAPI 3.1's dialect). Checked subset: paths,
// methods, path parameters, declared statuses, and the request and
// response bodies' schemas; parameter schemas and headers are not validated.
type openAPI struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
}

const openAPIURL = "https://gpubook.invalid/api/v1/openapi.json"

func loadOpenAPI(t *testing.T) *openAPI {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(handlers.OpenAPIDocument()))
	if err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(openAPIURL, doc); err != nil {
		t.Fatal(err)
	}
	return &openAPI{doc: doc.(map[string]any), compiler: c}
}

// operations lists "METHOD /path" for every operation in the document.
func (o *openAPI) operations() []string {
	var out []string
	for p, item := range o.doc["paths"].(map[string]any) {
		for m := range item.(map[string]any) {
			out = append(out, strings.ToUpper(m)+" "+p)
		}
	}
	sort.Strings(out)
	return out
}

// schema compiles the schema at a JSON pointer into the document.
func (o *openAPI) schema(t *testing.T, pointer string) *jsonschema.Schema {
	t.Helper()
	s, err := o.compiler.Compile(openAPIURL + "#" + pointer)
	if err != nil {
		t.Fatalf("compile %s: %v", pointer, err)
	}
	return s
}

func pointerEscape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// checkResponse fails when the status is not declared for the operation or
// the body does not match the declared schema.
func (o *openAPI) checkResponse(t *testing.T, method, path string, status int, body []byte) {
	t.Helper()
	op, ok := o.op(method, path)
	if !ok {
		t.Fatalf("%s %s: not in the document", method, path)
	}
	code := fmt.Sprint(status)
	if _, ok := op["responses"].(map[string]any)[code]; !ok {
		t.Fatalf("%s %s answered %d, which the document does not declare: %s", method, path, status, body)
	}
	ptr := "/paths/" + pointerEscape(path) + "/" + strings.ToLower(method) + "/responses/" + code + "/content/application~1json/schema"
	o.validate(t, ptr, body, fmt.Sprintf("%s %s → %d", method, path, status))
}

// checkRequest fails when a body the server accepted does not match the
// document's request schema.
func (o *openAPI) checkRequest(t *testing.T, method, path string, body any) {
	t.Helper()
	data, _ := json.Marshal(body)
	ptr := "/paths/" + pointerEscape(path) + "/" + strings.ToLower(method) + "/requestBody/content/application~1json/schema"
	o.validate(t, ptr, data, fmt.Sprintf("request of %s %s", method, path))
}

func (o *openAPI) validate(t *testing.T, ptr string, body []byte, what string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: body is not JSON: %v: %s", what, err, body)
	}
	if err := o.schema(t, ptr).Validate(v); err != nil {
		t.Errorf("%s: body does not match the document: %v\n%s", what, err, body)
	}
}

func (o *openAPI) op(method, path string) (map[string]any, bool) {
	item, ok := o.doc["paths"].(map[string]any)[path].(map[string]any)
	if !ok {
		return nil, false
	}
	op, ok := item[strings.ToLower(method)].(map[string]any)
	return op, ok
}

var echoParam = regexp.MustCompile(`:([a-z_]+)`)

// TestOpenAPIMatchesRouter: every /api/v1 route of the wired router is in
// the document and every operation of the document is a route; each path
// parameter is declared; every schema compiles and every $ref resolves.
func TestOpenAPIMatchesRouter(t *testing.T) {
	t.Parallel()
	o := loadOpenAPI(t)
	if v := o.doc["openapi"]; v != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", v)
	}
	env := webtest.New(t, "sqlite")
	var routes []string
	for _, r := range env.Server.Echo.Routes() {
		p, ok := strings.CutPrefix(r.Path, "/api/v1/")
		if !ok || strings.HasSuffix(r.Path, "*") || !isHTTPMethod(r.Method) {
			continue // the group's not-found catch-alls
		}
		routes = append(routes, r.Method+" /"+echoParam.ReplaceAllString(p, "{$1}"))
	}
	sort.Strings(routes)
	if got, want := strings.Join(o.operations(), "\n"), strings.Join(routes, "\n"); got != want {
		t.Errorf("document operations:\n%s\n\nrouter's /api/v1 routes:\n%s", got, want)
	}
	for _, op := range o.operations() {
		method, path, _ := strings.Cut(op, " ")
		def, _ := o.op(method, path)
		declared := map[string]bool{}
		params, _ := def["parameters"].([]any)
		for _, p := range params {
			if p := p.(map[string]any); p["in"] == "path" {
				declared[p["name"].(string)] = true
			}
		}
		for _, m := range regexp.MustCompile(`\{([a-z_]+)\}`).FindAllStringSubmatch(path, -1) {
			if !declared[m[1]] {
				t.Errorf("%s: path parameter %s not declared", op, m[1])
			}
		}
	}
	for name := range o.doc["components"].(map[string]any)["schemas"].(map[string]any) {
		o.schema(t, "/components/schemas/"+name)
	}
}

func isHTTPMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// TestOpenAPIServedWithoutToken: the contract is public, byte for byte the
// embedded document.
func TestOpenAPIServedWithoutToken(t *testing.T) {
	t.Parallel()
	env := webtest.New(t, "sqlite")
	c := &webtest.APIClient{}
	*c = *env.API(env.AddUser("x@example.org", "X", false))
	c.Token = ""
	res := c.Do(http.MethodGet, "/api/v1/openapi.json", nil)
	if res.Code != http.StatusOK || !bytes.Equal(res.Body.Bytes(), handlers.OpenAPIDocument()) {
		t.Fatalf("GET /api/v1/openapi.json = %d, %.80s", res.Code, res.Body.String())
	}
	if res := c.Do(http.MethodGet, "/api/v1/me", nil); res.Code != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/me without a token = %d, want 401", res.Code)
	}
}

func TestOpenAPIResponses(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			testOpenAPIResponses(t, d)
		})
	}
}

// apiCall is one call of the scenario: the route as the document names it,
// the concrete path, a body and the status the scenario expects.
type apiCall struct {
	method, route, path string
	body                any
	want                int
}

// testOpenAPIResponses drives every operation through the wired router
// into its success and its refusals, and validates each answer against
// the document; each operation's success status must be seen once.
func testOpenAPIResponses(t *testing.T, dialect string) {
	f := newCalFixture(t, dialect)
	o := loadOpenAPI(t)
	bob, alice := f.env.API(f.bob), f.env.API(f.alice)
	a0, a1, b0 := f.gpu(t, "node-a", 0), f.gpu(t, "node-a", 1), f.gpu(t, "node-b", 0)
	at := func(h float64) string { return f.now.Add(time.Duration(h * float64(time.Hour))).Format(time.RFC3339) }
	mineOld := f.book(t, f.alice, []int64{b0}, 5, 6, "alice's")
	active := f.book(t, f.bob, []int64{b0}, -1, 2, "running")
	var created struct{ ID int64 }
	seen := map[string]bool{}
	do := func(c *webtest.APIClient, call apiCall) []byte {
		t.Helper()
		if call.body != nil && call.want < 300 {
			o.checkRequest(t, call.method, call.route, call.body)
		}
		res := c.Do(call.method, "/api/v1"+call.path, call.body)
		if res.Code != call.want {
			t.Fatalf("%s %s = %d, want %d: %s", call.method, call.path, res.Code, call.want, res.Body)
		}
		o.checkResponse(t, call.method, call.route, res.Code, res.Body.Bytes())
		seen[fmt.Sprintf("%s %s %d", call.method, call.route, res.Code)] = true
		return res.Body.Bytes()
	}
	newBooking := map[string]any{"gpu_ids": []int64{a0, a1}, "starts_at": at(1), "ends_at": at(3), "note": "train"}
	if err := json.Unmarshal(do(bob, apiCall{"POST", "/bookings", "/bookings", newBooking, 201}), &created); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprint(created.ID)
	request := map[string]any{"gpu_ids": []int64{a0}, "starts_at": at(24), "ends_at": at(26), "purpose": "p", "urgency": "u", "plan": "pl", "give_back": "g"}
	var req struct{ ID int64 }
	if err := json.Unmarshal(do(bob, apiCall{"POST", "/requests", "/requests", request, 201}), &req); err != nil {
		t.Fatal(err)
	}
	calls := []apiCall{
		{"GET", "/me", "/me", nil, 200},
		{"GET", "/gpus", "/gpus", nil, 200},
		{"GET", "/limits", "/limits", nil, 200},
		{"GET", "/slots", "/slots?gpus=2&hours=2", nil, 200},
		{"GET", "/slots", "/slots?gpus=1&hours=1&node=NODE-B", nil, 200},
		{"GET", "/slots", "/slots?gpus=0&hours=2&node=nowhere", nil, 422},
		{"GET", "/bookings", "/bookings?from=" + at(-2) + "&to=" + at(10), nil, 200},
		{"GET", "/bookings", "/bookings?from=" + at(-2), nil, 422},
		{"POST", "/bookings", "/bookings", newBooking, 409},
		{"POST", "/bookings", "/bookings", map[string]any{"gpu_ids": []int64{}, "starts_at": "tomorrow"}, 422},
		{"POST", "/bookings/{id}/extend", "/bookings/" + id + "/extend", map[string]any{"ends_at": at(4)}, 200},
		{"POST", "/bookings/{id}/extend", "/bookings/999999/extend", map[string]any{"ends_at": at(4)}, 404},
		{"POST", "/bookings/{id}/extend", fmt.Sprintf("/bookings/%d/extend", mineOld.ID), map[string]any{"ends_at": at(7)}, 403},
		{"POST", "/bookings/{id}/extend", fmt.Sprintf("/bookings/%d/extend", active.ID), map[string]any{"ends_at": at(5.5)}, 409},
		{"POST", "/bookings/{id}/extend", "/bookings/" + id + "/extend", map[string]any{"ends_at": "soon"}, 422},
		{"POST", "/bookings/{id}/release", "/bookings/" + id + "/release", nil, 422},
		{"POST", "/bookings/{id}/release", fmt.Sprintf("/bookings/%d/release", active.ID), nil, 200},
		{"POST", "/bookings/{id}/release", "/bookings/999999/release", nil, 404},
		{"POST", "/bookings/{id}/release", fmt.Sprintf("/bookings/%d/release", mineOld.ID), nil, 403},
		{"DELETE", "/bookings/{id}", fmt.Sprintf("/bookings/%d", mineOld.ID), nil, 403},
		{"DELETE", "/bookings/{id}", "/bookings/" + id, nil, 200},
		{"DELETE", "/bookings/{id}", "/bookings/999999", nil, 404},
		{"DELETE", "/bookings/{id}", fmt.Sprintf("/bookings/%d", active.ID), nil, 422},
		{"POST", "/requests", "/requests", map[string]any{"gpu_ids": []int64{a0}}, 422},
		{"GET", "/requests/{id}", fmt.Sprintf("/requests/%d", req.ID), nil, 200},
		{"GET", "/requests/{id}", "/requests/999999", nil, 404},
	}
	for _, call := range calls {
		do(bob, call)
	}
	// Someone else's request does not exist for a non-admin.
	var mine struct{ ID int64 }
	if err := json.Unmarshal(do(alice, apiCall{"POST", "/requests", "/requests", request, 201}), &mine); err != nil {
		t.Fatal(err)
	}
	do(bob, apiCall{"GET", "/requests/{id}", fmt.Sprintf("/requests/%d", mine.ID), nil, 404})
	anon := *bob
	anon.Token = "gpb_not_a_token"
	for _, op := range o.operations() {
		method, route, _ := strings.Cut(op, " ")
		if route == "/openapi.json" {
			continue
		}
		do(&anon, apiCall{method, route, strings.ReplaceAll(route, "{id}", id), nil, 401})
		def, _ := o.op(method, route)
		for code := range def["responses"].(map[string]any) {
			if code[0] == '2' && !seen[op+" "+code] {
				t.Errorf("%s %s: the scenario never saw this success", op, code)
			}
		}
	}
}
