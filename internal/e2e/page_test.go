package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// gqlErrors runs a GraphQL operation as user and returns the HTTP status,
// the data and the extensions of its errors.
func (e *scopeEnv) gqlErrors(user, query string) (int, map[string]any, []map[string]any) {
	e.t.Helper()
	body, _ := json.Marshal(map[string]string{"query": query})
	status, out := e.do(user, "POST", "/admin/graphql", string(body))
	var exts []map[string]any
	if errs, ok := out["errors"].([]any); ok {
		for _, x := range errs {
			ext, _ := x.(map[string]any)["extensions"].(map[string]any)
			exts = append(exts, ext)
		}
	}
	data, _ := out["data"].(map[string]any)
	return status, data, exts
}

// outcome is what a listing request answered, in terms both transports
// share: the ids of the page and whether there is a next one, or the
// status, error code and parameter of a refusal.
type outcome struct {
	IDs       []string
	More      bool
	Status    int
	ErrorCode string
	Param     string
}

// TestPaginationAndRangeParity holds the one pagination and time-range
// policy (internal/page) to both transports: the same ?limit= / ?cursor= /
// ?from= / ?to= over REST and the same arguments over GraphQL give the
// same page or the same refusal (400 invalid_request naming the
// parameter), and following the next cursor gives the same next page.
func TestPaginationAndRangeParity(t *testing.T) {
	e := newScopeEnv(t)
	for i := range 3 {
		e.must("admin", "POST", "/admin/v1/tenants", fmt.Sprintf(`{"id":"pg%d","name":"Page %d"}`, i, i))
	}
	viaREST := func(query string) outcome {
		t.Helper()
		status, out := e.do("admin", "GET", "/admin/v1/tenants?"+query, "")
		if status != 200 {
			er, _ := out["error"].(map[string]any)
			param, _ := er["param"].(string)
			code, _ := er["code"].(string)
			return outcome{Status: status, ErrorCode: code, Param: param}
		}
		o := outcome{Status: status, More: out["next_cursor"] != nil}
		for _, x := range out["data"].([]any) {
			o.IDs = append(o.IDs, x.(map[string]any)["id"].(string))
		}
		return o
	}
	viaGraphQL := func(args string) outcome {
		t.Helper()
		status, data, exts := e.gqlErrors("admin", "{ tenants"+args+" { data { id } nextCursor } }")
		if len(exts) > 0 {
			st, _ := exts[0]["status"].(float64)
			code, _ := exts[0]["errorCode"].(string)
			param, _ := exts[0]["param"].(string)
			return outcome{Status: int(st), ErrorCode: code, Param: param}
		}
		conn := data["tenants"].(map[string]any)
		o := outcome{Status: status, More: conn["nextCursor"] != nil}
		for _, x := range conn["data"].([]any) {
			o.IDs = append(o.IDs, x.(map[string]any)["id"].(string))
		}
		return o
	}
	// The first page of one row and its cursor, to follow.
	_, first := e.do("admin", "GET", "/admin/v1/tenants?limit=1", "")
	next, _ := first["next_cursor"].(string)
	if next == "" {
		t.Fatalf("GET /admin/v1/tenants?limit=1: no next cursor: %v", first)
	}
	tests := []struct {
		name       string
		rest, gql  string
		wantStatus int
		wantParam  string
	}{
		{"default size", "", "", 200, ""},
		{"one row", "limit=1", "(limit: 1)", 200, ""},
		{"two rows", "limit=2", "(limit: 2)", 200, ""},
		{"the largest size", "limit=1000", "(limit: 1000)", 200, ""},
		{"the next page", "limit=2&cursor=" + url.QueryEscape(next), fmt.Sprintf("(limit: 2, cursor: %q)", next), 200, ""},
		{"over the largest size", "limit=1001", "(limit: 1001)", 400, "limit"},
		{"negative", "limit=-1", "(limit: -1)", 400, "limit"},
		{"malformed cursor", "cursor=" + url.QueryEscape("not a cursor!"), `(cursor: "not a cursor!")`, 400, "cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, g := viaREST(tt.rest), viaGraphQL(tt.gql)
			if r.Status != tt.wantStatus || r.Param != tt.wantParam {
				t.Errorf("REST ?%s: %+v, want status %d naming %q", tt.rest, r, tt.wantStatus, tt.wantParam)
			}
			if tt.wantStatus == 400 && r.ErrorCode != "invalid_request" {
				t.Errorf("REST ?%s: code %q, want invalid_request", tt.rest, r.ErrorCode)
			}
			if diff := cmp.Diff(r, g); diff != "" {
				t.Errorf("REST ?%s and GraphQL tenants%s disagree (-REST +GraphQL):\n%s", tt.rest, tt.gql, diff)
			}
		})
	}

	// An explicit limit of 0 is where the transports differ, by design of
	// their inputs: REST can tell ?limit=0 from no ?limit= and refuses it
	// (CONTRACT §2: 1 to 1000), while GraphQL's limit: 0 reaches the domain
	// as "no limit given", the default page.
	if r := viaREST("limit=0"); r.Status != 400 || r.Param != "limit" {
		t.Errorf("REST ?limit=0: %+v, want 400 naming limit", r)
	}
	if g, d := viaGraphQL("(limit: 0)"), viaREST(""); !cmp.Equal(g, d) {
		t.Errorf("GraphQL tenants(limit: 0) = %+v, want the default page %+v", g, d)
	}

	// The time range: from must be before to, over both transports.
	status, out := e.do("admin", "GET", "/admin/v1/logs?from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z", "")
	if er, _ := out["error"].(map[string]any); status != 400 || er["param"] != "from" {
		t.Errorf("REST logs with from after to: %d %v, want 400 naming from", status, out)
	}
	_, _, exts := e.gqlErrors("admin", `{ logs(filter: {from: "2025-01-02T00:00:00Z", to: "2025-01-01T00:00:00Z"}) { data { id } } }`)
	if len(exts) != 1 || exts[0]["status"] != float64(400) || exts[0]["param"] != "from" {
		t.Errorf("GraphQL logs with from after to: %v, want 400 naming from", exts)
	}
}
