package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/graph/rest"
)

// Routes and GraphQL fields without a row of the endpoint × role table, and
// why. Anything else must have a row: TestEndpointRoleTable calls each row
// as each of the seven roles over both transports.
var (
	exemptRoutes = map[rest.Route]string{
		{Method: "POST", Pattern: "/admin/v1/session"}:   "sign-in: the one path without a credential; its limits have their own tests",
		{Method: "DELETE", Pattern: "/admin/v1/session"}: "sign-out of the caller's own session: every signed-in principal may",
		{Method: "POST", Pattern: "/admin/graphql"}:      "the GraphQL transport: each of its fields has a row (checked below)",
	}
	exemptFields = map[string]string{
		"Mutation.signOut": "sign-out of the caller's own session, as DELETE /admin/v1/session",
	}
)

var placeholderRE = regexp.MustCompile(`\{[a-z]+\}`)

// TestPermissionMatrixCoversEveryEndpoint is security checklist item 23:
// the endpoint × role table that TestEndpointRoleTable runs (7 roles ×
// every operation × REST and GraphQL) is generated from the routes the
// admin handler registers and the fields the GraphQL schema declares: a
// route or field without a row fails here, so a new endpoint cannot ship
// untested. (Its operation is denied to every role until the policy lists
// it — auth.Allowed — and the admin package checks that every entry point
// of the domain begins with the check of its operation:
// TestEveryEntryPointNamesItsOperation.)
func TestPermissionMatrixCoversEveryEndpoint(t *testing.T) {
	covered := map[rest.Route]string{}
	for _, r := range table {
		path, _, _ := strings.Cut(placeholderRE.ReplaceAllString(r.path, "x"), "?")
		pattern, ok := rest.MatchRoute(r.method, path)
		if !ok {
			t.Errorf("row %q: %s %s is no route of the admin API", r.name, r.method, r.path)
			continue
		}
		covered[rest.Route{Method: r.method, Pattern: pattern}] = r.name
	}
	routes := rest.Routes()
	if len(routes) < 60 {
		t.Fatalf("rest.Routes() lists %d routes; the listing is broken", len(routes))
	}
	for _, rt := range routes {
		_, row := covered[rt]
		_, exempt := exemptRoutes[rt]
		switch {
		case !row && !exempt:
			t.Errorf("route %s %s has no row in the endpoint × role table (roles_test.go): add one", rt.Method, rt.Pattern)
		case row && exempt:
			t.Errorf("route %s %s is both exempt and in the table", rt.Method, rt.Pattern)
		}
	}

	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{}}).Schema()
	fields := map[string]string{}
	for _, r := range table {
		doc, errs := gqlparser.LoadQuery(schema, placeholderRE.ReplaceAllString(r.gql, "x"))
		if len(errs) > 0 {
			t.Errorf("row %q: GraphQL %s: %v", r.name, r.gql, errs)
			continue
		}
		op := doc.Operations[0]
		typ := "Query"
		if op.Operation == ast.Mutation {
			typ = "Mutation"
		}
		for _, sel := range op.SelectionSet {
			if f, ok := sel.(*ast.Field); ok {
				fields[typ+"."+f.Name] = r.name
			}
		}
	}
	for _, def := range []*ast.Definition{schema.Query, schema.Mutation} {
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			name := def.Name + "." + f.Name
			_, row := fields[name]
			_, exempt := exemptFields[name]
			if !row && !exempt {
				t.Errorf("GraphQL field %s has no row in the endpoint × role table (roles_test.go): add one", name)
			}
		}
	}
}
