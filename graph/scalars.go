package graph

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/99designs/gqlgen/graphql"

	"github.com/sluicehq/sluice/internal/store"
)

// The JSON scalar carries the map-valued fields of the domain. gqlgen.yml
// binds it to three Go types; these are their marshalers. Output is written
// with encoding/json, so a value marshals exactly as on the REST API.

// MarshalChanges writes audit changes (and client error context) as a JSON object.
func MarshalChanges(c store.Changes) graphql.Marshaler { return marshalJSON(map[string]any(c)) }

// UnmarshalChanges reads a JSON object.
func UnmarshalChanges(v any) (store.Changes, error) {
	m, err := UnmarshalAnyMap(v)
	return store.Changes(m), err
}

// MarshalStringMap writes a map of strings (log metadata, span attributes,
// Azure deployments) as a JSON object.
func MarshalStringMap(m map[string]string) graphql.Marshaler { return marshalJSON(m) }

// UnmarshalStringMap reads a JSON object whose values are all strings.
func UnmarshalStringMap(v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	in, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("JSON must be an object of strings, got %s", kind(v))
	}
	out := make(map[string]string, len(in))
	for k, x := range in {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("JSON value of %q must be a string, got %s", k, kind(x))
		}
		out[k] = s
	}
	return out, nil
}

// MarshalAnyMap writes a JSON object.
func MarshalAnyMap(m map[string]any) graphql.Marshaler { return marshalJSON(m) }

// UnmarshalAnyMap reads a JSON object.
func UnmarshalAnyMap(v any) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("JSON must be an object, got %s", kind(v))
	}
	return m, nil
}

// marshalJSON writes v with encoding/json; a nil map is null. The values
// come from the domain (maps of strings, numbers and nested JSON), so
// encoding cannot fail in practice; if it does, null is written and the
// client sees a missing value rather than broken JSON.
func marshalJSON[M ~map[string]V, V any](m M) graphql.Marshaler {
	if m == nil {
		return graphql.Null
	}
	b, err := json.Marshal(m)
	if err != nil {
		return graphql.Null
	}
	return graphql.WriterFunc(func(w io.Writer) { _, _ = w.Write(b) })
}

// kind names the JSON kind of a decoded GraphQL value, for error messages.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a number"
}
