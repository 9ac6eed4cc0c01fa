// Package declarative is Sluice's configuration as code (CONTRACT §15):
// `sluice export` reads what the caller may read through the admin API
// into a YAML file, and `sluice apply` makes a server match such a file.
//
// It talks to the admin API over HTTP only, with the caller's token, so
// roles, validation and the audit log apply exactly as for any other admin
// call; it never opens the store. Objects are matched by natural keys
// (tenant id, gateway slug, key provider + alias, rule name, user email,
// token name, price provider + model), never by generated ids. The fields
// are the REST fields of the admin API, kept as generic JSON values so the
// file follows the API without a second model to keep in step.
package declarative

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// APIVersion and Kind head every file; a file with another apiVersion is
// refused, so a later incompatible format can be told apart.
const (
	APIVersion = "sluice.dev/v1"
	Kind       = "Config"
)

// Object is one JSON object of the file or of an admin API answer.
type Object = map[string]any

// kind describes one resource of the file: its natural key, the writable
// REST fields export keeps, the lists of child objects nested in it, and
// the fields that only a PATCH may set (sent after the create).
type kind struct {
	name     string
	key      []string
	fields   []string
	children []string
	// local are fields of the file that are not REST fields of the object
	// (a key's key_ref, a user's gateway slugs): never diffed as fields.
	local []string
	// patchOnly are fields the create body does not take.
	patchOnly []string
}

var (
	kTenant = &kind{name: "tenant", key: []string{"id"},
		fields: []string{"id", "name", "status", "settings", "budget"}, children: []string{"gateways", "users"},
		patchOnly: []string{"status", "budget"}}
	kGateway = &kind{name: "gateway", key: []string{"slug"},
		fields: []string{"slug", "name", "log_bodies", "body_log_limit_bytes", "cache", "rate_limit",
			"request_timeout_ms", "retry", "routes", "circuit_breaker", "budget"},
		children: []string{"keys", "rules", "tokens"}}
	kKey = &kind{name: "key", key: []string{"provider", "alias"},
		fields: []string{"provider", "alias", "base_url", "weight", "models", "options"}, local: []string{"key_ref"}}
	kRule = &kind{name: "rule", key: []string{"name"},
		fields: []string{"name", "enabled", "direction", "kind", "patterns", "pii", "action", "case_sensitive"}}
	kToken = &kind{name: "token", key: []string{"name"},
		fields: []string{"name", "expires_at", "revoked", "rate_limit", "allowed_models", "budget"}, patchOnly: []string{"revoked"}}
	kUser = &kind{name: "user", key: []string{"email"},
		fields: []string{"email", "name", "role", "status", "budget", "rate_limit"}, children: []string{"tokens"},
		local: []string{"gateways"}, patchOnly: []string{"status"}}
	kPrice = &kind{name: "model price", key: []string{"provider", "model"}}
)

// priceReadOnly are the fields of a model price that are not written back.
var priceReadOnly = []string{"source", "updated_at"}

// budgetFields are the writable fields of a budget; the rest of a budget
// answer (spent_usd, remaining_usd, resets_at) is state, not configuration.
var budgetFields = []string{"amount_usd", "period", "hard"}

// settingsReadOnly are the fields of a tenant's settings that reads show
// and writes refuse (the webhook secret itself is write-only and never
// read: the file names it with alert_webhook_secret_ref, alerts.go).
var settingsReadOnly = []string{alertSecretSetField}

// timeFields hold RFC 3339 times, compared as instants whatever their form.
var timeFields = []string{"expires_at", "deprecated_at", "sunset_at"}

// naturalKey returns the natural key of o for k ("openai/main").
func (k *kind) naturalKey(o Object) string {
	parts := make([]string, len(k.key))
	for i, f := range k.key {
		parts[i] = str(o[f])
	}
	return strings.Join(parts, "/")
}

// own returns the fields of o that are the object's own REST fields: o less
// its children and local fields.
func (k *kind) own(o Object) Object {
	out := make(Object, len(o))
	for f, v := range o {
		if !slices.Contains(k.children, f) && !slices.Contains(k.local, f) {
			out[f] = v
		}
	}
	return out
}

// fromAPI keeps the configuration fields of an admin API answer, normalised.
func (k *kind) fromAPI(o Object) Object {
	out := Object{}
	if k == kPrice {
		for f, v := range o {
			if !slices.Contains(priceReadOnly, f) {
				out[f] = v
			}
		}
		return normalize(out).(Object)
	}
	for _, f := range k.fields {
		v, ok := o[f]
		if !ok {
			continue
		}
		if b, isObj := v.(Object); isObj && f == "budget" {
			v = pick(b, budgetFields)
		}
		if st, isObj := v.(Object); isObj && f == "settings" {
			v = omit(st, settingsReadOnly)
		}
		out[f] = v
	}
	return normalize(out).(Object)
}

// pick returns the fields of o named in fields.
func pick(o Object, fields []string) Object {
	out := Object{}
	for _, f := range fields {
		if v, ok := o[f]; ok {
			out[f] = v
		}
	}
	return out
}

// diff returns the fields of want whose values differ from have, sorted.
// A field the file leaves out, at any depth, is not compared: the server
// keeps its value.
func diff(want, have Object) []string {
	var out []string
	for f, v := range want {
		if hv, ok := have[f]; !ok || !covers(v, hv) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// covers reports whether have holds want: equal values, except that an
// object of want need only match the fields it names, recursively. So a
// file written before the server grew a setting still matches it.
func covers(want, have any) bool {
	wo, isObj := want.(Object)
	ho, hasObj := have.(Object)
	if !isObj || !hasObj {
		return reflect.DeepEqual(want, have)
	}
	for k, v := range wo {
		if hv, ok := ho[k]; !ok || !covers(v, hv) {
			return false
		}
	}
	return true
}

// overlay returns have with want's fields laid over it, recursively for
// objects: the whole object a PATCH takes (nested objects are replaced
// whole) from a file that names part of it.
func overlay(have, want any) any {
	wo, isObj := want.(Object)
	ho, hasObj := have.(Object)
	if !isObj || !hasObj {
		return want
	}
	out := maps.Clone(ho)
	for k, v := range wo {
		out[k] = overlay(ho[k], v)
	}
	return out
}

// patchBody returns the fields of want named, each laid over its value in
// have.
func patchBody(want, have Object, fields []string) Object {
	out := make(Object, len(fields))
	for _, f := range fields {
		if v, ok := want[f]; ok {
			out[f] = overlay(have[f], v)
		}
	}
	return out
}

// normalize makes values compare and print the same whichever side they
// come from: integral numbers become int64 (so 100 prints as 100, not
// 100.0) and times become UTC RFC 3339.
func normalize(v any) any {
	switch x := v.(type) {
	case Object:
		out := make(Object, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && slices.Contains(timeFields, k) {
				if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
					e = t.UTC().Format(time.RFC3339Nano)
				}
			}
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return normalize(f)
	case int:
		return int64(x)
	case uint64:
		return int64(x)
	default:
		return v
	}
}

// str returns v as a string ("" when it is not one).
func str(v any) string {
	s, _ := v.(string)
	return s
}

// list returns the objects of the list o[field]; elements that are not
// objects are left out (Parse refuses them first).
func list(o Object, field string) []Object {
	raw, _ := o[field].([]any)
	out := make([]Object, 0, len(raw))
	for _, e := range raw {
		if obj, ok := e.(Object); ok {
			out = append(out, obj)
		}
	}
	return out
}

// Parse reads a configuration file (YAML, or JSON, which is YAML) and
// checks what apply relies on: the apiVersion and kind, every object's
// natural key present and unique among its siblings, and the forms of
// key_ref and alert_webhook_secret_ref (no secret value in the file).
// The server checks the rest, as for any admin call.
func Parse(data []byte) (Object, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	var root Object
	dec := json.NewDecoder(bytes.NewReader(js))
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("parse YAML: the file must be a mapping: %w", err)
	}
	root = normalize(root).(Object)
	if v := str(root["apiVersion"]); v != APIVersion {
		return nil, fmt.Errorf("apiVersion is %q, want %q", v, APIVersion)
	}
	if v := str(root["kind"]); v != Kind {
		return nil, fmt.Errorf("kind is %q, want %q", v, Kind)
	}
	for f := range root {
		if !slices.Contains([]string{"apiVersion", "kind", "tenants", "model_prices"}, f) {
			return nil, fmt.Errorf("unknown top-level field %q", f)
		}
	}
	if err := checkList(root, "tenants", kTenant, "tenants"); err != nil {
		return nil, err
	}
	if err := checkList(root, "model_prices", kPrice, "model_prices"); err != nil {
		return nil, err
	}
	for _, t := range list(root, "tenants") {
		at := "tenant " + str(t["id"])
		if err := checkAlertSecret(t); err != nil {
			return nil, err
		}
		if err := checkList(t, "gateways", kGateway, at+": gateways"); err != nil {
			return nil, err
		}
		if err := checkList(t, "users", kUser, at+": users"); err != nil {
			return nil, err
		}
		for _, g := range list(t, "gateways") {
			gat := at + "/" + str(g["slug"])
			for _, c := range []struct {
				field string
				k     *kind
			}{{"keys", kKey}, {"rules", kRule}, {"tokens", kToken}} {
				if err := checkList(g, c.field, c.k, gat+": "+c.field); err != nil {
					return nil, err
				}
			}
			for _, key := range list(g, "keys") {
				if ref, ok := key["key_ref"]; ok {
					if _, _, err := splitRef("key_ref", str(ref)); err != nil {
						return nil, fmt.Errorf("%s: key %s: %w", gat, kKey.naturalKey(key), err)
					}
				}
			}
		}
		for _, u := range list(t, "users") {
			u["email"] = strings.ToLower(str(u["email"]))
			if err := checkList(u, "tokens", kToken, at+": user "+str(u["email"])+": tokens"); err != nil {
				return nil, err
			}
		}
	}
	return root, nil
}

// checkList checks that o[field], when present, is a list of objects each
// with a non-empty natural key, no two alike.
func checkList(o Object, field string, k *kind, at string) error {
	v, ok := o[field]
	if !ok || v == nil {
		return nil
	}
	raw, isList := v.([]any)
	if !isList {
		return fmt.Errorf("%s: must be a list", at)
	}
	seen := map[string]bool{}
	for i, e := range raw {
		obj, isObj := e.(Object)
		if !isObj {
			return fmt.Errorf("%s[%d]: must be a mapping", at, i)
		}
		for _, f := range k.key {
			if str(obj[f]) == "" {
				return fmt.Errorf("%s[%d]: %s %q is required (it is the natural key)", at, i, k.name, f)
			}
		}
		nk := k.naturalKey(obj)
		if seen[nk] {
			return fmt.Errorf("%s: %s %q appears twice", at, k.name, nk)
		}
		seen[nk] = true
	}
	return nil
}

// Marshal writes a configuration as YAML: mapping keys sorted, lists in
// the order given (Export sorts them by natural key), so the same
// configuration always gives the same bytes.
func Marshal(root Object) ([]byte, error) {
	out, err := yaml.MarshalWithOptions(ordered(normalize(root)), yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return nil, fmt.Errorf("write YAML: %w", err)
	}
	return out, nil
}

// firstFields lead a mapping in written files, in this order (identity
// first); lastFields end it (the nested lists); the rest are sorted.
var (
	firstFields = []string{"apiVersion", "kind", "id", "slug", "email", "provider", "alias", "model", "name"}
	lastFields  = []string{"keys", "rules", "tokens", "gateways", "users", "tenants", "model_prices"}
)

// ordered turns every mapping of v into a yaml.MapSlice with the fields in
// a fixed order, for Marshal.
func ordered(v any) any {
	switch x := v.(type) {
	case Object:
		keys := sortedKeys(x)
		rank := func(k string) int {
			if i := slices.Index(firstFields, k); i >= 0 {
				return i - len(firstFields)
			}
			if i := slices.Index(lastFields, k); i >= 0 {
				return 1 + i
			}
			return 0
		}
		slices.SortStableFunc(keys, func(a, b string) int { return rank(a) - rank(b) })
		out := make(yaml.MapSlice, 0, len(keys))
		for _, k := range keys {
			out = append(out, yaml.MapItem{Key: k, Value: ordered(x[k])})
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = ordered(e)
		}
		return out
	default:
		return v
	}
}

// sortedKeys returns the keys of o, sorted.
func sortedKeys(o Object) []string { return slices.Sorted(maps.Keys(o)) }
