package declarative

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// splitRef splits a reference to a secret (a key's key_ref, a tenant's
// alert_webhook_secret_ref), named field in errors, into its scheme (env
// or file) and name.
func splitRef(field, ref string) (scheme, name string, err error) {
	scheme, name, ok := strings.Cut(ref, ":")
	if !ok || (scheme != "env" && scheme != "file") || name == "" {
		return "", "", fmt.Errorf("%s %q: want env:NAME or file:PATH", field, ref)
	}
	return scheme, name, nil
}

// readRef reads the value a reference names: an environment variable or a
// file (a relative path is relative to the working directory), trimmed as
// the server trims key values. Errors name the reference, never a value.
func readRef(field, ref string, opt Options) (string, error) {
	scheme, name, err := splitRef(field, ref)
	if err != nil {
		return "", err
	}
	if scheme == "env" {
		val, set := opt.LookupEnv(name)
		if !set {
			return "", fmt.Errorf("%s env:%s: the variable is not set", field, name)
		}
		return strings.TrimSpace(val), nil
	}
	raw, err := opt.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	return strings.TrimSpace(string(raw)), nil
}

// resolveKeys reads the value of every key_ref of the file, by key path
// (tenant/gateway/provider/alias).
func resolveKeys(file Object, opt Options) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range list(file, "tenants") {
		for _, g := range list(t, "gateways") {
			for _, k := range list(g, "keys") {
				ref, ok := k["key_ref"]
				if !ok {
					continue
				}
				at := str(t["id"]) + "/" + str(g["slug"]) + "/" + kKey.naturalKey(k)
				v, err := readRef("key_ref", str(ref), opt)
				if err != nil {
					return nil, fmt.Errorf("key %s: %w", at, err)
				}
				out[at] = v
			}
		}
	}
	return out, nil
}

// last4 is the server's display suffix of a key value: its last 4
// characters.
func last4(key string) string {
	r := []rune(key)
	return string(r[max(len(r)-4, 0):])
}

// gateway creates or changes a gateway and its keys, routes, rules and
// tokens, and returns its id.
//
// Keys have no PATCH: a key whose fields or value changed is replaced
// (deleted, then added again). The value is never read back, so a change
// of value is seen by its last 4 characters, the only part the API shows.
func (a *applier) gateway(ctx context.Context, tenant string, want Object, cur *node) (string, error) {
	at := tenant + "/" + str(want["slug"])
	gid, later, _, err := a.upsert(ctx, spec{k: kGateway, name: at, create: "/admin/v1/tenants/" + seg(tenant) + "/gateways",
		patch: func(id string) (string, Object) { return "/admin/v1/gateways/" + seg(id), nil }, later: []string{"routes"}},
		want, cur)
	if err != nil {
		return "", err
	}
	base := "/admin/v1/gateways/" + seg(gid)
	keys := list(want, "keys")
	var replace []Object
	for _, k := range keys {
		kat := at + "/" + kKey.naturalKey(k)
		value, hasValue := a.keys[kat]
		ck := cur.child("keys", kKey, kKey.naturalKey(k))
		if ck == nil {
			if err := a.createKey(ctx, base, kat, k, value, hasValue); err != nil {
				return "", err
			}
			continue
		}
		fields := diff(kKey.own(k), ck.obj)
		if hasValue && last4(value) != ck.last4 {
			fields = append(fields, "key")
		}
		if len(fields) > 0 {
			a.record("replace", kKey.name, kat, fields)
			replace = append(replace, k)
		}
	}
	if len(later) > 0 && !a.dry {
		if err := a.c.do(ctx, http.MethodPatch, base, later, nil); err != nil {
			return "", err
		}
	}
	if len(replace) > 0 && !a.dry {
		routes := want["routes"]
		if _, ok := want["routes"]; !ok {
			routes = cur.obj["routes"]
		}
		if err := a.replaceKeys(ctx, base, at, replace, routes); err != nil {
			return "", err
		}
	}
	rules := list(want, "rules")
	for _, ru := range rules {
		if _, _, _, err := a.upsert(ctx, spec{k: kRule, name: at + "/" + str(ru["name"]), create: base + "/rules",
			patch: func(id string) (string, Object) { return base + "/rules", Object{"id": id} }},
			ru, cur.child("rules", kRule, str(ru["name"]))); err != nil {
			return "", err
		}
	}
	if err := a.tokens(ctx, "gateway", at, base, list(want, "tokens"), cur); err != nil {
		return "", err
	}
	if !a.prune {
		return gid, nil
	}
	for _, ru := range unnamed(cur, "rules", kRule, rules) {
		if err := a.del(ctx, kRule.name, at+"/"+str(ru.obj["name"]), base+"/rules?id="+seg(ru.id)); err != nil {
			return "", err
		}
	}
	for _, k := range unnamed(cur, "keys", kKey, keys) {
		if err := a.del(ctx, kKey.name, at+"/"+kKey.naturalKey(k.obj),
			base+"/keys/"+seg(str(k.obj["provider"]))+"/"+seg(str(k.obj["alias"]))); err != nil {
			return "", err
		}
	}
	return gid, nil
}

// createKey records and, unless dry, adds one provider key with its value.
func (a *applier) createKey(ctx context.Context, base, at string, k Object, value string, hasValue bool) error {
	own := kKey.own(k)
	a.record("create", kKey.name, at, sortedKeys(own))
	if a.dry {
		return nil
	}
	if hasValue {
		own["key"] = value
	}
	return a.c.do(ctx, http.MethodPost, base+"/keys", own, nil)
}

// replaceKeys deletes and adds again each key of keys. A route naming a
// key by alias keeps the server from deleting it, so while the keys are
// replaced the gateway's routes name none of them, then routes are set
// back.
func (a *applier) replaceKeys(ctx context.Context, base, at string, keys []Object, routes any) error {
	freed, touched := unrefRoutes(routes, keys)
	if touched {
		if err := a.c.do(ctx, http.MethodPatch, base, Object{"routes": freed}, nil); err != nil {
			return err
		}
	}
	for _, k := range keys {
		kat := at + "/" + kKey.naturalKey(k)
		path := base + "/keys/" + seg(str(k["provider"])) + "/" + seg(str(k["alias"]))
		if err := a.c.do(ctx, http.MethodDelete, path, nil, nil); err != nil {
			return err
		}
		value, hasValue := a.keys[kat]
		own := kKey.own(k)
		if hasValue {
			own["key"] = value
		}
		if err := a.c.do(ctx, http.MethodPost, base+"/keys", own, nil); err != nil {
			return err
		}
	}
	if touched {
		return a.c.do(ctx, http.MethodPatch, base, Object{"routes": routes}, nil)
	}
	return nil
}

// unrefRoutes returns routes with every target's key_alias that names one
// of keys set to null, and whether any was.
func unrefRoutes(routes any, keys []Object) (any, bool) {
	rs, _ := normalize(routes).([]any)
	touched := false
	for _, r := range rs {
		ro, _ := r.(Object)
		targets, _ := ro["targets"].([]any)
		for _, t := range targets {
			to, _ := t.(Object)
			for _, k := range keys {
				if to != nil && to["key_alias"] != nil && str(to["key_alias"]) == str(k["alias"]) &&
					str(to["provider"]) == str(k["provider"]) {
					to["key_alias"] = nil
					touched = true
				}
			}
		}
	}
	return rs, touched
}
