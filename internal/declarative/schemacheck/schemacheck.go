// Package schemacheck validates configuration files against the JSON
// Schema in docs/sluice-config.schema.json, for tests: the example file and
// every export must be what editors are told the file is.
package schemacheck

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaPath is the schema's path, found from this source file so tests of
// any package can use it.
func SchemaPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "sluice-config.schema.json")
}

var compiled struct {
	once   sync.Once
	schema *jsonschema.Schema
	err    error
}

// Check validates a configuration file (YAML) against the schema.
func Check(data []byte) error {
	c := &compiled
	c.once.Do(func() {
		comp := jsonschema.NewCompiler()
		comp.AssertFormat()
		c.schema, c.err = comp.Compile(SchemaPath())
	})
	if c.err != nil {
		return fmt.Errorf("compile schema: %w", c.err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fmt.Errorf("parse YAML: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return fmt.Errorf("parse JSON: %w", err)
	}
	if err := c.schema.Validate(doc); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	return nil
}
