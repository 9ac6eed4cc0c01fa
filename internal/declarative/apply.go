package declarative

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
)

// Change is one step of a plan: an operation on one object, named by its
// natural key path ("acme/prod/openai/main"), with the fields it sets or
// changes.
type Change struct {
	Op     string // create, update, replace or delete
	Kind   string
	Name   string
	Fields []string
}

func (c Change) String() string {
	s := c.Op + " " + c.Kind + " " + c.Name
	if len(c.Fields) > 0 {
		s += ": " + strings.Join(c.Fields, ", ")
	}
	return s
}

// Plan is what apply does, in order.
type Plan []Change

// Count returns the number of changes with operation op.
func (p Plan) Count(op string) int {
	n := 0
	for _, c := range p {
		if c.Op == op {
			n++
		}
	}
	return n
}

// Write prints the plan, one change a line, and a summary.
func (p Plan) Write(w io.Writer) {
	if len(p) == 0 {
		fmt.Fprintln(w, "No changes: the server matches the file.")
		return
	}
	for _, c := range p {
		fmt.Fprintln(w, c)
	}
	fmt.Fprintf(w, "Plan: %d to create, %d to update, %d to replace, %d to delete.\n",
		p.Count("create"), p.Count("update"), p.Count("replace"), p.Count("delete"))
}

// Options say how Apply runs.
type Options struct {
	// DryRun stops after the plan.
	DryRun bool
	// Prune deletes objects the file does not name, within the tenants it
	// names (model prices are never pruned: they are platform-wide).
	Prune bool
	// SecretsOut is the file (mode 0600) the secrets of created tokens are
	// appended to; a plan that creates a token is refused without it.
	SecretsOut string
	// Plan receives the plan before anything changes.
	Plan io.Writer
	// LookupEnv and ReadFile resolve key_refs and alert_webhook_secret_refs;
	// nil: the process's own.
	LookupEnv func(string) (string, bool)
	ReadFile  func(string) ([]byte, error)
}

// applier walks the file against the server's state. The same walk makes
// the plan (dry: no write) and then carries it out.
type applier struct {
	c     *Client
	dry   bool
	prune bool
	plan  Plan
	keys  map[string]string // key path → value, from key_ref
	// alertSecrets are the tenants' webhook signing secrets, by tenant id,
	// from alert_webhook_secret_ref.
	alertSecrets map[string]string
	secrets      io.Writer
	// selfEmail is the caller's email: prune never deletes the caller.
	selfEmail string
}

// Apply makes the server match file (a Parse result): it reads the state
// of the tenants the file names, prints the plan to opt.Plan and, unless
// opt.DryRun, carries it out through the admin API. The first refusal of
// the server stops it with the server's message.
func Apply(ctx context.Context, c *Client, file Object, opt Options) (Plan, error) {
	if opt.LookupEnv == nil {
		opt.LookupEnv = os.LookupEnv
	}
	if opt.ReadFile == nil {
		opt.ReadFile = os.ReadFile
	}
	keys, err := resolveKeys(file, opt)
	if err != nil {
		return nil, err
	}
	alertSecrets, err := resolveAlertSecrets(file, opt)
	if err != nil {
		return nil, err
	}
	st, err := readState(ctx, c, file)
	if err != nil {
		return nil, err
	}
	var self string
	if opt.Prune {
		if me, err := c.get(ctx, "/admin/v1/me"); err == nil {
			self = str(me["email"])
		}
	}
	dry := &applier{c: c, dry: true, prune: opt.Prune, keys: keys, alertSecrets: alertSecrets, selfEmail: self}
	if err := dry.walk(ctx, file, st); err != nil {
		return nil, err
	}
	if opt.Plan != nil {
		dry.plan.Write(opt.Plan)
	}
	if opt.DryRun || len(dry.plan) == 0 {
		return dry.plan, nil
	}
	wet := &applier{c: c, prune: opt.Prune, keys: keys, alertSecrets: alertSecrets, selfEmail: self}
	if slices.ContainsFunc(dry.plan, func(ch Change) bool { return ch.Op == "create" && strings.HasSuffix(ch.Kind, "token") }) {
		if opt.SecretsOut == "" {
			return dry.plan, errors.New("the plan creates tokens: name a file for their secrets with --secrets-out (nothing was changed)")
		}
		f, err := os.OpenFile(opt.SecretsOut, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return dry.plan, fmt.Errorf("open secrets file: %w", err)
		}
		defer f.Close()
		if err := f.Chmod(0o600); err != nil {
			return dry.plan, fmt.Errorf("secrets file: %w", err)
		}
		wet.secrets = f
	}
	if err := wet.walk(ctx, file, st); err != nil {
		return dry.plan, err
	}
	return dry.plan, nil
}

// state is the server's side of what a file names.
type state struct {
	tenants map[string]*node // nil: no such tenant
	prices  map[string]Object
}

// readState reads the tenants the file names and, when the file has
// model prices, the prices.
func readState(ctx context.Context, c *Client, file Object) (*state, error) {
	r := &reader{c: c}
	st := &state{tenants: map[string]*node{}}
	for _, t := range list(file, "tenants") {
		id := str(t["id"])
		raw, err := c.get(ctx, "/admin/v1/tenants/"+seg(id))
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if st.tenants[id], err = r.tenant(ctx, raw); err != nil {
			return nil, err
		}
	}
	if _, ok := file["model_prices"]; ok {
		prices, err := c.list(ctx, "/admin/v1/model-prices")
		if err != nil {
			return nil, err
		}
		st.prices = map[string]Object{}
		for _, p := range prices {
			o := kPrice.fromAPI(p)
			st.prices[kPrice.naturalKey(o)] = o
		}
	}
	return st, nil
}

// walk visits every object of the file in the order the admin API needs.
func (a *applier) walk(ctx context.Context, file Object, st *state) error {
	for _, t := range list(file, "tenants") {
		if err := a.tenant(ctx, t, st.tenants[str(t["id"])]); err != nil {
			return err
		}
	}
	if _, ok := file["model_prices"]; ok {
		return a.prices(ctx, list(file, "model_prices"), st.prices)
	}
	return nil
}

func (a *applier) record(op, kind, name string, fields []string) {
	a.plan = append(a.plan, Change{Op: op, Kind: kind, Name: name, Fields: fields})
}

// spec says where an object is created and changed.
type spec struct {
	k      *kind
	name   string
	create string
	patch  func(id string) (path string, extra Object)
	// later are fields patched by the caller once the children exist (a
	// gateway's routes name its keys).
	later []string
}

// upsert creates the object or patches its changed fields. It returns the
// object's id (empty in a dry run of a create), the changed fields of
// s.later for the caller to patch, and the answer to a create.
func (a *applier) upsert(ctx context.Context, s spec, want Object, cur *node) (string, Object, Object, error) {
	own := s.k.own(want)
	if cur == nil {
		a.record("create", s.k.name, s.name, sortedKeys(own))
		if a.dry {
			return "", nil, nil, nil
		}
		var created Object
		body := omit(own, append(slices.Clone(s.k.patchOnly), s.later...))
		if err := a.c.do(ctx, http.MethodPost, s.create, body, &created); err != nil {
			return "", nil, nil, err
		}
		id := str(created["id"])
		if rest := diff(omit(withoutSecret(own), s.later), s.k.fromAPI(created)); len(rest) > 0 {
			if err := a.patch(ctx, s, id, patchBody(own, s.k.fromAPI(created), rest)); err != nil {
				return "", nil, nil, err
			}
		}
		return id, pick(own, s.later), created, nil
	}
	changed := diff(own, cur.obj)
	if len(changed) == 0 {
		return cur.id, nil, nil, nil
	}
	a.record("update", s.k.name, s.name, changed)
	if a.dry {
		return cur.id, nil, nil, nil
	}
	now := slices.DeleteFunc(slices.Clone(changed), func(f string) bool { return slices.Contains(s.later, f) })
	if len(now) > 0 {
		if err := a.patch(ctx, s, cur.id, patchBody(own, cur.obj, now)); err != nil {
			return "", nil, nil, err
		}
	}
	later := slices.DeleteFunc(slices.Clone(changed), func(f string) bool { return !slices.Contains(s.later, f) })
	return cur.id, patchBody(own, cur.obj, later), nil, nil
}

func (a *applier) patch(ctx context.Context, s spec, id string, body Object) error {
	path, extra := s.patch(id)
	for k, v := range extra {
		body[k] = v
	}
	return a.c.do(ctx, http.MethodPatch, path, body, nil)
}

// del records a deletion and, unless dry, sends it.
func (a *applier) del(ctx context.Context, kind, name, path string) error {
	a.record("delete", kind, name, nil)
	if a.dry {
		return nil
	}
	return a.c.do(ctx, http.MethodDelete, path, nil, nil)
}

// unnamed returns the children of cur in list that want does not name.
func unnamed(cur *node, list string, k *kind, want []Object) []*node {
	if cur == nil {
		return nil
	}
	named := map[string]bool{}
	for _, w := range want {
		named[k.naturalKey(w)] = true
	}
	var out []*node
	for _, c := range cur.kids[list] {
		if !named[k.naturalKey(c.obj)] {
			out = append(out, c)
		}
	}
	return out
}

func (a *applier) tenant(ctx context.Context, want Object, cur *node) error {
	id := str(want["id"])
	secret, hasSecret := a.alertSecrets[id]
	want = withAlertSecret(want, cur, secret, hasSecret)
	if _, _, _, err := a.upsert(ctx, spec{k: kTenant, name: id, create: "/admin/v1/tenants",
		patch: func(id string) (string, Object) { return "/admin/v1/tenants/" + seg(id), nil }}, want, cur); err != nil {
		return err
	}
	gwIDs := map[string]string{} // slug → id, for assignments
	if cur != nil {
		for _, g := range cur.kids["gateways"] {
			gwIDs[str(g.obj["slug"])] = g.id
		}
	}
	gws := list(want, "gateways")
	for _, g := range gws {
		gid, err := a.gateway(ctx, id, g, cur.child("gateways", kGateway, str(g["slug"])))
		if err != nil {
			return err
		}
		gwIDs[str(g["slug"])] = gid
	}
	users := list(want, "users")
	for _, u := range users {
		if err := a.user(ctx, id, u, cur.child("users", kUser, str(u["email"])), gwIDs); err != nil {
			return err
		}
	}
	if !a.prune {
		return nil
	}
	for _, u := range unnamed(cur, "users", kUser, users) {
		if a.selfEmail != "" && str(u.obj["email"]) == a.selfEmail {
			continue // the server refuses to delete the caller
		}
		if err := a.del(ctx, "user", id+"/"+str(u.obj["email"]), "/admin/v1/users/"+seg(u.id)); err != nil {
			return err
		}
	}
	for _, g := range unnamed(cur, "gateways", kGateway, gws) {
		if err := a.del(ctx, "gateway", id+"/"+str(g.obj["slug"]), "/admin/v1/gateways/"+seg(g.id)); err != nil {
			return err
		}
	}
	return nil
}

// tokens creates and changes the tokens of one owner (under base) and,
// with prune, deletes those the file does not name.
func (a *applier) tokens(ctx context.Context, owner, at, base string, want []Object, cur *node) error {
	for _, t := range want {
		name := str(t["name"])
		var ct *node
		if cur != nil {
			var n int
			for _, c := range cur.kids["tokens"] {
				if str(c.obj["name"]) == name {
					ct, n = c, n+1
				}
			}
			if n > 1 {
				return fmt.Errorf("%s %s: %d tokens are named %q: rename or delete all but one", owner, at, n, name)
			}
		}
		_, _, created, err := a.upsert(ctx, spec{k: kToken, name: at + "/" + name, create: base + "/tokens",
			patch: func(id string) (string, Object) { return base + "/tokens/" + seg(id), nil }}, t, ct)
		if err != nil {
			return err
		}
		if created != nil {
			if err := a.writeSecret(owner+" "+at, name, str(created["secret"])); err != nil {
				return err
			}
		}
	}
	if !a.prune {
		return nil
	}
	for _, t := range unnamed(cur, "tokens", kToken, want) {
		if a.c.isOwnToken(t.prefix, t.last4) {
			continue // deleting the token apply runs with would stop it half-way
		}
		if err := a.del(ctx, owner+" token", at+"/"+str(t.obj["name"]), base+"/tokens/"+seg(t.id)); err != nil {
			return err
		}
	}
	return nil
}

// writeSecret appends a created token's secret to the secrets file, the
// only place it is ever written.
func (a *applier) writeSecret(owner, name, secret string) error {
	if a.secrets == nil {
		return errors.New("a token was created without a secrets file")
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	_, err := fmt.Fprintf(a.secrets, "- owner: %s\n  name: %s\n  secret: %s\n", q(owner), q(name), q(secret))
	if err != nil {
		return fmt.Errorf("write secrets file: %w", err)
	}
	return nil
}

func (a *applier) user(ctx context.Context, tenant string, want Object, cur *node, gwIDs map[string]string) error {
	at := tenant + "/" + str(want["email"])
	uid, _, _, err := a.upsert(ctx, spec{k: kUser, name: at, create: "/admin/v1/tenants/" + seg(tenant) + "/users",
		patch: func(id string) (string, Object) { return "/admin/v1/users/" + seg(id), nil }}, want, cur)
	if err != nil {
		return err
	}
	base := "/admin/v1/users/" + seg(uid)
	if raw, ok := want["gateways"].([]any); ok {
		// The list is the whole set of the user's gateways, like routes.
		have := map[string]string{}
		if cur != nil {
			for _, g := range cur.kids["gateways"] {
				have[str(g.obj["slug"])] = g.id
			}
		}
		wanted := map[string]bool{}
		for _, e := range raw {
			slug := str(e)
			wanted[slug] = true
			if _, ok := have[slug]; ok {
				continue
			}
			a.record("create", "assignment", at+" → "+slug, nil)
			if a.dry {
				continue
			}
			gid, ok := gwIDs[slug]
			if !ok {
				return fmt.Errorf("user %s: gateway %q is not a gateway of tenant %s", at, slug, tenant)
			}
			if err := a.c.do(ctx, http.MethodPost, base+"/gateways/"+seg(gid), nil, nil); err != nil {
				return err
			}
		}
		for _, slug := range slices.Sorted(maps.Keys(have)) {
			if !wanted[slug] {
				if err := a.del(ctx, "assignment", at+" → "+slug, base+"/gateways/"+seg(have[slug])); err != nil {
					return err
				}
			}
		}
	}
	return a.tokens(ctx, "user", at, base, list(want, "tokens"), cur)
}

// prices upserts the model prices that differ, in one PUT per 1000.
func (a *applier) prices(ctx context.Context, want []Object, have map[string]Object) error {
	var body []any
	for _, p := range want {
		nk := kPrice.naturalKey(p)
		cur, ok := have[nk]
		if !ok {
			a.record("create", kPrice.name, nk, sortedKeys(p))
			body = append(body, p)
			continue
		}
		if changed := diff(p, cur); len(changed) > 0 {
			a.record("update", kPrice.name, nk, changed)
			merged := maps.Clone(cur)
			for k, v := range p {
				merged[k] = v
			}
			body = append(body, merged)
		}
	}
	if a.dry {
		return nil
	}
	for len(body) > 0 {
		n := min(len(body), 1000)
		if err := a.c.do(ctx, http.MethodPut, "/admin/v1/model-prices", body[:n], nil); err != nil {
			return err
		}
		body = body[n:]
	}
	return nil
}

// omit returns o less the fields named.
func omit(o Object, fields []string) Object {
	out := make(Object, len(o))
	for k, v := range o {
		if !slices.Contains(fields, k) {
			out[k] = v
		}
	}
	return out
}
