package graph

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// Group is an analytics group (type Group) with the kind of object its key
// is: admin.RefGateway or admin.RefUser, "" when the key is no object (a
// model, a status).
type Group struct {
	analytics.Group
	kind string
}

// groupsOf wraps the groups of one analysis whose keys are of kind, and
// tells the request's names that their keys will be asked for.
func groupsOf(ctx context.Context, kind string, in []analytics.Group) []Group {
	out := make([]Group, len(in))
	ids := make([]string, 0, len(in))
	for i, g := range in {
		out[i] = Group{Group: g, kind: kind}
		ids = append(ids, g.Key)
	}
	if kind != "" {
		namesFrom(ctx).expect(kind, ids...)
	}
	return out
}

// Series is one group's usage over time (type Series) with the kind of
// object its key is, as Group.
type Series struct {
	analytics.Series
	kind string
}

// seriesOf wraps the series of one GroupTimeseries whose keys are of kind,
// and tells the request's names that their keys will be asked for.
func seriesOf(ctx context.Context, kind string, in []analytics.Series) []Series {
	out := make([]Series, len(in))
	for i, s := range in {
		out[i] = Series{Series: s, kind: kind}
		namesFrom(ctx).expect(kind, s.Key)
	}
	return out
}

// groupKind is the kind of object the key of an analysis grouped by
// groupBy is.
func groupKind(groupBy string) string {
	switch groupBy {
	case "gateway":
		return admin.RefGateway
	case "user":
		return admin.RefUser
	case "token":
		return admin.RefToken
	}
	return ""
}

// names is the per-operation cache of the names of objects that records
// refer to (a dataloader without a wait): a listing resolver says which ids
// it returned (expect); the first ObjectRef field to ask for an id of a kind then
// reads every expected id of that kind in one admin.Service.Names call, and
// every other field finds its name in the cache. The lock is held during
// that read so that the concurrent field resolvers of one list wait for the
// one read rather than each doing its own.
type names struct {
	svc     *admin.Service
	mu      sync.Mutex
	pending map[string]map[string]struct{}        // kind → ids expected, not yet read
	failed  map[string]error                      // kind → why its read failed: not tried again
	known   map[string]map[string]admin.ObjectRef // kind → id → its ObjectRef
}

type namesKey struct{}

// withNames gives an operation its own names cache (an AroundOperations
// middleware of the handler), so that names are never shared between
// callers.
func withNames(svc *admin.Service) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		return next(context.WithValue(ctx, namesKey{}, &names{svc: svc}))
	}
}

// namesFrom returns the operation's names cache; nil (outside the handler)
// is a valid cache that names nothing.
func namesFrom(ctx context.Context) *names {
	n, _ := ctx.Value(namesKey{}).(*names)
	return n
}

// expect records ids of kind that ObjectRef fields may ask for.
func (n *names) expect(kind string, ids ...string) {
	if n == nil || !admin.IsRefKind(kind) {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pending == nil {
		n.pending = map[string]map[string]struct{}{}
	}
	set := n.pending[kind]
	if set == nil {
		set = map[string]struct{}{}
		n.pending[kind] = set
	}
	for _, id := range ids {
		if _, ok := n.known[kind][id]; !ok && id != "" {
			set[id] = struct{}{}
		}
	}
}

// ref names the object id of kind for the caller: nil for an empty id or a
// kind without names.
func (n *names) ref(ctx context.Context, kind, id string) (*admin.ObjectRef, error) {
	if n == nil || id == "" || !admin.IsRefKind(kind) {
		return nil, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if r, ok := n.known[kind][id]; ok {
		return &r, nil
	}
	if err := n.failed[kind]; err != nil {
		return nil, err
	}
	batch := []string{id}
	for other := range n.pending[kind] {
		if other != id {
			batch = append(batch, other)
		}
	}
	delete(n.pending, kind)
	got, err := n.svc.Names(ctx, auth.From(ctx), kind, batch)
	if err != nil {
		// Every field of the kind answers this error rather than each
		// reading again from a store that just failed.
		if n.failed == nil {
			n.failed = map[string]error{}
		}
		n.failed[kind] = err
		return nil, err
	}
	if n.known == nil {
		n.known = map[string]map[string]admin.ObjectRef{}
	}
	if n.known[kind] == nil {
		n.known[kind] = make(map[string]admin.ObjectRef, len(got))
	}
	for k, r := range got {
		n.known[kind][k] = r
	}
	r, ok := got[id]
	if !ok {
		return nil, nil
	}
	return &r, nil
}

// expectLogs records the gateways, users and tokens of logs.
func expectLogs(ctx context.Context, logs []analytics.Record) {
	n := namesFrom(ctx)
	for i := range logs {
		n.expect(admin.RefGateway, logs[i].GatewayID)
		n.expect(admin.RefUser, logs[i].UserID)
		n.expect(admin.RefToken, logs[i].TokenID)
	}
}

// expectAudit records the resources and actors of audit entries.
func expectAudit(ctx context.Context, entries []store.AuditEntry) {
	n := namesFrom(ctx)
	for i := range entries {
		n.expect(entries[i].ResourceType, entries[i].ResourceID)
		n.expect(admin.RefUser, entries[i].ActorID)
	}
}
