package graph

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/page"
)

// queryLimits refuses an operation that is too deep, uses too many aliases
// or costs too much (security checklist item 28), before anything runs.
// Every refusal names the limit and has extensions.code QUERY_TOO_COMPLEX;
// the transport answers it with HTTP 400.
type queryLimits struct {
	maxDepth   int
	maxAliases int
	complexity *extension.ComplexityLimit
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = (*queryLimits)(nil)

// ExtensionName implements graphql.HandlerExtension.
func (l *queryLimits) ExtensionName() string { return "QueryLimits" }

// Validate implements graphql.HandlerExtension.
func (l *queryLimits) Validate(es graphql.ExecutableSchema) error { return l.complexity.Validate(es) }

// MutateOperationContext measures the operation about to run.
func (l *queryLimits) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	m := measurer{doc: opCtx.Doc, fragments: map[string]*shape{}}
	sh := m.selections(opCtx.Operation.SelectionSet)
	if sh.depth > l.maxDepth {
		return tooComplex("query depth %d exceeds the limit of %d", sh.depth, l.maxDepth)
	}
	if sh.aliases > l.maxAliases {
		return tooComplex("query has %d aliases, which exceeds the limit of %d", sh.aliases, l.maxAliases)
	}
	if err := l.complexity.MutateOperationContext(ctx, opCtx); err != nil {
		errcode.Set(err, codeTooComplex)
		return err
	}
	return nil
}

func tooComplex(format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	errcode.Set(err, codeTooComplex)
	return err
}

// shape is what the limits look at in a selection set: its depth in
// fields, and its aliases with every fragment spread expanded.
type shape struct {
	depth   int
	aliases int
}

func (s *shape) add(o shape) {
	s.depth = max(s.depth, o.depth)
	s.aliases = satAdd(s.aliases, o.aliases)
}

// measurer walks an operation. Fragments are measured once and memoised,
// so that fragments spreading fragments cannot make the walk itself
// exponential; counts saturate instead of overflowing.
type measurer struct {
	doc       *ast.QueryDocument
	fragments map[string]*shape // nil while a fragment is being measured
}

func (m *measurer) selections(set ast.SelectionSet) shape {
	var out shape
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			// Introspection has its own depth rule in the validator, and
			// __schema is answered to the Administrator only.
			if strings.HasPrefix(sel.Name, "__") {
				continue
			}
			child := m.selections(sel.SelectionSet)
			child.depth++
			if sel.Alias != "" && sel.Alias != sel.Name {
				child.aliases = satAdd(child.aliases, 1)
			}
			out.add(child)
		case *ast.InlineFragment:
			out.add(m.selections(sel.SelectionSet))
		case *ast.FragmentSpread:
			out.add(m.fragment(sel.Name))
		}
	}
	return out
}

func (m *measurer) fragment(name string) shape {
	if sh, seen := m.fragments[name]; seen {
		if sh == nil { // a cycle; the validator refuses those already
			return shape{}
		}
		return *sh
	}
	m.fragments[name] = nil
	var sh shape
	if def := m.doc.Fragments.ForName(name); def != nil {
		sh = m.selections(def.SelectionSet)
	}
	m.fragments[name] = &sh
	return sh
}

func satAdd(a, b int) int {
	if a > math.MaxInt32-b {
		return math.MaxInt32
	}
	return a + b
}

// adminIntrospection lets only the Administrator introspect the schema
// (checklist item 28); everyone else gets a FORBIDDEN field error from
// __schema and __type. Field suggestions are off for all callers.
type adminIntrospection struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = adminIntrospection{}

// ExtensionName implements graphql.HandlerExtension.
func (adminIntrospection) ExtensionName() string { return "AdministratorIntrospection" }

// Validate implements graphql.HandlerExtension.
func (adminIntrospection) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext enables introspection for the Administrator.
func (adminIntrospection) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	p := auth.From(ctx)
	opCtx.DisableIntrospection = p == nil || p.Role != auth.Administrator
	return nil
}

// pages is the cost factor of a list field asked for limit rows: one per
// started page of the default page size (page.Pages), so that
// default-sized lists cost what gqlgen counts for their selection.
// Out-of-range limits count as one page; the domain refuses them.
func pages(limit *int) int {
	if limit == nil {
		return 1
	}
	return page.Pages(*limit)
}

// complexity is the cost model of the complexity limit: every field costs
// 1 (gqlgen's default) and a field that takes a limit costs its selection
// once per page of rows it asks for, so a long list or a list nested in a
// list cannot hide behind a short query.
func complexity() ComplexityRoot {
	var c ComplexityRoot
	list := func(child int, limit *int) int { return satAdd(1, satMul(child, pages(limit))) }
	type timeArg = *time.Time

	c.Query.MyTokens = func(child int, limit *int, _ *string) int { return list(child, limit) }
	c.Query.Tenants = func(child int, limit *int, _ *string) int { return list(child, limit) }
	c.Query.Gateways = func(child int, _ string, limit *int, _ *string) int { return list(child, limit) }
	c.Query.GatewayTokens = func(child int, _ string, limit *int, _ *string) int { return list(child, limit) }
	c.Query.Users = func(child int, _ string, limit *int, _ *string) int { return list(child, limit) }
	c.Query.UserTokens = func(child int, _ string, limit *int, _ *string) int { return list(child, limit) }
	c.Query.Logs = func(child int, _ *LogFilter, _ *LogSort, limit *int, _ *string) int { return list(child, limit) }
	c.Query.GatewayTraces = func(child int, _ string, _, _ timeArg, limit *int, _ *string) int { return list(child, limit) }
	c.Query.PlaygroundSearch = func(child int, _ *string, limit *int) int { return list(child, limit) }
	c.Query.ModelPrices = func(child int, _ *string, limit *int, _ *string) int { return list(child, limit) }
	c.Query.GuardrailEvents = func(child int, _ string, _, _ timeArg, limit *int, _ *string) int { return list(child, limit) }
	c.Query.AuditLog = func(child int, _ *admin.AuditFilter, limit *int, _ *string) int { return list(child, limit) }
	c.Query.ClientErrors = func(child int, limit *int, _ *string) int { return list(child, limit) }
	c.Tenant.Gateways = func(child int, limit *int, _ *string) int { return list(child, limit) }
	c.Tenant.Users = func(child int, limit *int, _ *string) int { return list(child, limit) }
	c.Gateway.Tokens = func(child int, limit *int, _ *string) int { return list(child, limit) }
	c.User.Tokens = func(child int, limit *int, _ *string) int { return list(child, limit) }
	return c
}

func satMul(a, b int) int {
	if b != 0 && a > math.MaxInt32/b {
		return math.MaxInt32
	}
	return a * b
}
