package admin

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// The kinds of objects an ObjectRef names: the resource types of the audit log
// that have a name, and the gateway, user and token of a request log.
const (
	RefTenant  = "tenant"
	RefGateway = "gateway"
	RefUser    = "user"
	RefToken   = "token"
	RefKey     = "provider_key"
	RefRule    = "rule"
)

// The states of an ObjectRef.
const (
	// RefNamed: Name is the object's name (a user's email).
	RefNamed = "named"
	// RefDeleted: no object has the id any more.
	RefDeleted = "deleted"
	// RefHidden: the object is of a tenant the caller does not see, or the
	// caller's role may not read names of its kind (users' emails).
	RefHidden = "hidden"
)

// maxNamesPerQuery bounds the ids of one IN list, well under the bound
// parameters SQLite and PostgreSQL accept; a page of logs or an analysis
// asks for far fewer.
const maxNamesPerQuery = 500

// ObjectRef is an object that a request log, an analytics group or an audit
// entry refers to by id, named as the caller may see it. Name is empty
// unless State is RefNamed.
type ObjectRef struct {
	Kind  string `json:"kind"`
	ID    string `json:"id"`
	Name  string `json:"name"`
	State string `json:"state"`
}

// IsRefKind reports whether objects of kind have names an ObjectRef can carry.
func IsRefKind(kind string) bool {
	_, ok := refReaders[kind]
	return ok
}

// refRow is what naming needs of one object: its id, tenant and name.
type refRow struct{ id, tenant, name string }

// refReader reads the objects of one kind with the given ids.
type refReader func(ctx context.Context, db bun.IDB, ids []string) ([]refRow, error)

// readRefs reads the rows T with the given ids in one query; pick takes
// what naming needs of one.
func readRefs[T any](pick func(*T) refRow) refReader {
	return func(ctx context.Context, db bun.IDB, ids []string) ([]refRow, error) {
		rows, err := store.All[T](ctx, db, "id", store.In("id", ids))
		if err != nil {
			return nil, err
		}
		out := make([]refRow, len(rows))
		for i := range rows {
			out[i] = pick(&rows[i])
		}
		return out, nil
	}
}

// orElse is name, or fallback when name is empty.
func orElse(name, fallback string) string {
	if name != "" {
		return name
	}
	return fallback
}

var refReaders = map[string]refReader{
	RefTenant:  readRefs(func(t *store.Tenant) refRow { return refRow{t.ID, t.ID, orElse(t.Name, t.ID)} }),
	RefGateway: readRefs(func(g *store.Gateway) refRow { return refRow{g.ID, g.TenantID, orElse(g.Name, g.Slug)} }),
	RefUser:    readRefs(func(u *store.User) refRow { return refRow{u.ID, u.TenantID, u.Email} }),
	RefToken: readRefs(func(t *store.Token) refRow {
		return refRow{t.ID, t.TenantID, orElse(t.Name, t.Prefix+"…"+t.Last4)}
	}),
	RefKey:  readRefs(func(k *store.ProviderKey) refRow { return refRow{k.ID, k.TenantID, k.Provider + "/" + k.Alias} }),
	RefRule: readRefs(func(r *store.Rule) refRow { return refRow{r.ID, r.TenantID, r.Name} }),
}

// readsUserNames reports whether p may read users' emails: the roles that
// manage users, and those that read cost breakdowns, whose tenant spend
// already names every user (docs/decisions.md).
func readsUserNames(p *auth.Principal) bool {
	return auth.Allowed(p.Role, auth.OpUserList) || p.Role.Has(auth.ViewCost)
}

// Names names the objects ids of kind for p, in one query per
// maxNamesPerQuery ids: every id gets an ObjectRef. An object of a tenant p does
// not see is hidden, never named, and so is every user when p may not read
// users' emails (those are not read at all); an id no object has any more
// is deleted. It checks no operation: callers name only ids of records p
// was allowed to read. An unknown kind or empty ids answer an empty map.
func (s *Service) Names(ctx context.Context, p *auth.Principal, kind string, ids []string) (map[string]ObjectRef, error) {
	out := make(map[string]ObjectRef, len(ids))
	read, ok := refReaders[kind]
	if !ok || p == nil || len(ids) == 0 {
		return out, nil
	}
	if kind == RefUser && !readsUserNames(p) {
		for _, id := range ids {
			out[id] = ObjectRef{Kind: kind, ID: id, State: RefHidden}
		}
		return out, nil
	}
	for start := 0; start < len(ids); start += maxNamesPerQuery {
		chunk := ids[start:min(start+maxNamesPerQuery, len(ids))]
		rows, err := read(ctx, s.db, chunk)
		if err != nil {
			return nil, fmt.Errorf("read names of %d %ss: %w", len(chunk), kind, err)
		}
		for _, id := range chunk {
			out[id] = ObjectRef{Kind: kind, ID: id, State: RefDeleted}
		}
		for _, r := range rows {
			ref := ObjectRef{Kind: kind, ID: r.id, State: RefHidden}
			if p.SeesTenant(r.tenant) {
				ref.Name, ref.State = r.name, RefNamed
			}
			out[r.id] = ref
		}
	}
	return out, nil
}
