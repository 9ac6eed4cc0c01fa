package declarative

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// node is one object as the server holds it: its generated id (what admin
// paths take), its configuration fields and its children by list name.
type node struct {
	id  string
	obj Object
	// last4 is a provider key's or a token's: the only part of a key value
	// ever answered; with prefix, a token's display form.
	last4, prefix string
	// alertSecretSet is a tenant's: whether its budget-alert webhook has a
	// signing secret (the value is never answered).
	alertSecretSet bool
	kids           map[string][]*node
}

// child returns the child of n in list whose natural key is nk, or nil.
func (n *node) child(list string, k *kind, nk string) *node {
	if n == nil {
		return nil
	}
	for _, c := range n.kids[list] {
		if k.naturalKey(c.obj) == nk {
			return c
		}
	}
	return nil
}

// reader reads the server's configuration through the admin API.
type reader struct {
	c *Client
	// warn receives notes about objects export leaves out (names only).
	warn io.Writer
}

// tenant reads a tenant with its gateways and users.
func (r *reader) tenant(ctx context.Context, raw Object) (*node, error) {
	id := str(raw["id"])
	n := &node{id: id, obj: kTenant.fromAPI(raw), kids: map[string][]*node{}}
	if st, ok := raw["settings"].(Object); ok {
		n.alertSecretSet = st[alertSecretSetField] == true
	}
	gws, err := r.c.list(ctx, "/admin/v1/tenants/"+seg(id)+"/gateways")
	if err != nil {
		return nil, err
	}
	slugs := map[string]string{} // gateway id → slug
	for _, g := range gws {
		gn, err := r.gateway(ctx, g)
		if err != nil {
			return nil, err
		}
		slugs[gn.id] = str(gn.obj["slug"])
		n.kids["gateways"] = append(n.kids["gateways"], gn)
	}
	users, err := r.c.list(ctx, "/admin/v1/tenants/"+seg(id)+"/users")
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		un, err := r.user(ctx, u)
		if err != nil {
			return nil, err
		}
		n.kids["users"] = append(n.kids["users"], un)
	}
	return n, nil
}

// gateway reads a gateway with its keys, rules and tokens.
func (r *reader) gateway(ctx context.Context, raw Object) (*node, error) {
	n := &node{id: str(raw["id"]), obj: kGateway.fromAPI(raw), kids: map[string][]*node{}}
	base := "/admin/v1/gateways/" + seg(n.id)
	keys, err := r.c.onePage(ctx, base+"/keys")
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		n.kids["keys"] = append(n.kids["keys"], &node{id: str(k["id"]), obj: kKey.fromAPI(k), last4: str(k["last4"])})
	}
	rules, err := r.c.onePage(ctx, base+"/rules")
	if err != nil {
		return nil, err
	}
	for _, ru := range rules {
		n.kids["rules"] = append(n.kids["rules"], &node{id: str(ru["id"]), obj: kRule.fromAPI(ru)})
	}
	n.kids["tokens"], err = r.tokens(ctx, base+"/tokens")
	return n, err
}

// user reads a user with its gateway assignments and tokens.
func (r *reader) user(ctx context.Context, raw Object) (*node, error) {
	n := &node{id: str(raw["id"]), obj: kUser.fromAPI(raw), kids: map[string][]*node{}}
	base := "/admin/v1/users/" + seg(n.id)
	gws, err := r.c.onePage(ctx, base+"/gateways")
	if err != nil {
		return nil, err
	}
	for _, g := range gws {
		n.kids["gateways"] = append(n.kids["gateways"], &node{id: str(g["id"]), obj: Object{"slug": str(g["slug"])}})
	}
	n.kids["tokens"], err = r.tokens(ctx, base+"/tokens")
	return n, err
}

// tokens reads a list of tokens (metadata only: answers never hold a
// secret after creation).
func (r *reader) tokens(ctx context.Context, path string) ([]*node, error) {
	toks, err := r.c.list(ctx, path)
	if err != nil {
		return nil, err
	}
	out := make([]*node, 0, len(toks))
	for _, t := range toks {
		out = append(out, &node{id: str(t["id"]), obj: kToken.fromAPI(t), prefix: str(t["prefix"]), last4: str(t["last4"])})
	}
	return out, nil
}

// Export reads what the caller may read — every tenant it can list, or
// only tenantID when set — and returns it as a configuration. Model prices
// are left out when the caller's role may not read them. Tokens without a
// name, or whose name another token of the same owner has, cannot be
// matched by name and are left out with a note on warn.
func Export(ctx context.Context, c *Client, tenantID string, warn io.Writer) (Object, error) {
	r := &reader{c: c, warn: warn}
	var raws []Object
	if tenantID != "" {
		t, err := c.get(ctx, "/admin/v1/tenants/"+seg(tenantID))
		if err != nil {
			return nil, err
		}
		raws = []Object{t}
	} else {
		var err error
		if raws, err = c.list(ctx, "/admin/v1/tenants"); err != nil {
			return nil, err
		}
	}
	tenants := make([]any, 0, len(raws))
	for _, raw := range raws {
		n, err := r.tenant(ctx, raw)
		if err != nil {
			return nil, err
		}
		tenants = append(tenants, r.tenantObject(n))
	}
	sortByKey(tenants, kTenant)
	root := Object{"apiVersion": APIVersion, "kind": Kind, "tenants": tenants}
	prices, err := c.list(ctx, "/admin/v1/model-prices")
	switch {
	case isForbidden(err):
	case err != nil:
		return nil, err
	default:
		out := make([]any, 0, len(prices))
		for _, p := range prices {
			out = append(out, kPrice.fromAPI(p))
		}
		sortByKey(out, kPrice)
		root["model_prices"] = out
	}
	return root, nil
}

// tenantObject turns a tenant read from the server into its file form.
func (r *reader) tenantObject(t *node) Object {
	o := maps.Clone(t.obj)
	if t.alertSecretSet {
		st := maps.Clone(settingsOf(o))
		if st == nil {
			st = Object{}
		}
		st[alertSecretRefField] = "env:" + AlertSecretEnvName(t.id)
		o["settings"] = st
	}
	gws := make([]any, 0, len(t.kids["gateways"]))
	for _, g := range t.kids["gateways"] {
		at := t.id + "/" + str(g.obj["slug"])
		gobj := maps.Clone(g.obj)
		keys := make([]any, 0, len(g.kids["keys"]))
		for _, k := range g.kids["keys"] {
			kobj := maps.Clone(k.obj)
			if k.last4 != "" { // an empty key (Ollama) has no value to refer to
				kobj["key_ref"] = "env:" + KeyEnvName(t.id, str(g.obj["slug"]), str(k.obj["provider"]), str(k.obj["alias"]))
			}
			keys = append(keys, kobj)
		}
		sortByKey(keys, kKey)
		gobj["keys"] = keys
		gobj["rules"] = objects(g.kids["rules"], kRule)
		gobj["tokens"] = r.tokenObjects(g.kids["tokens"], "gateway "+at)
		gws = append(gws, gobj)
	}
	sortByKey(gws, kGateway)
	o["gateways"] = gws
	users := make([]any, 0, len(t.kids["users"]))
	for _, u := range t.kids["users"] {
		uobj := maps.Clone(u.obj)
		slugs := make([]string, 0, len(u.kids["gateways"]))
		for _, g := range u.kids["gateways"] {
			slugs = append(slugs, str(g.obj["slug"]))
		}
		slices.Sort(slugs)
		uobj["gateways"] = anys(slugs)
		uobj["tokens"] = r.tokenObjects(u.kids["tokens"], "user "+str(u.obj["email"]))
		users = append(users, uobj)
	}
	sortByKey(users, kUser)
	o["users"] = users
	return o
}

// tokenObjects returns the tokens that have a name of their own, noting
// the others on r.warn.
func (r *reader) tokenObjects(toks []*node, owner string) []any {
	count := map[string]int{}
	for _, t := range toks {
		count[str(t.obj["name"])]++
	}
	out := make([]any, 0, len(toks))
	for _, t := range toks {
		name := str(t.obj["name"])
		if name == "" || count[name] > 1 {
			if r.warn != nil {
				fmt.Fprintf(r.warn, "note: a token of %s is left out: its name %q does not identify it\n", owner, name)
			}
			continue
		}
		out = append(out, maps.Clone(t.obj))
	}
	sortByKey(out, kToken)
	return out
}

// objects returns the file form of nodes of kind k, sorted by natural key.
func objects(ns []*node, k *kind) []any {
	out := make([]any, 0, len(ns))
	for _, n := range ns {
		out = append(out, maps.Clone(n.obj))
	}
	sortByKey(out, k)
	return out
}

// sortByKey sorts a list of objects by their natural key of kind k.
func sortByKey(objs []any, k *kind) {
	slices.SortFunc(objs, func(a, b any) int {
		return cmp.Compare(k.naturalKey(a.(Object)), k.naturalKey(b.(Object)))
	})
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

var notEnvChar = regexp.MustCompile(`[^A-Z0-9]+`)

// KeyEnvName is the environment variable export names in a key's key_ref:
// SLUICE_KEY_ + tenant, gateway, provider and alias in upper case, each
// run of other characters made one "_" (acme, prod, openai, main →
// SLUICE_KEY_ACME_PROD_OPENAI_MAIN).
func KeyEnvName(tenant, gateway, provider, alias string) string {
	return envName("SLUICE_KEY", tenant, gateway, provider, alias)
}

// envName joins prefix and the parts, each in upper case with every run of
// characters other than A-Z and 0-9 made one "_", with "_".
func envName(prefix string, parts ...string) string {
	out := []string{prefix}
	for _, p := range parts {
		out = append(out, strings.Trim(notEnvChar.ReplaceAllString(strings.ToUpper(p), "_"), "_"))
	}
	return strings.Join(out, "_")
}
