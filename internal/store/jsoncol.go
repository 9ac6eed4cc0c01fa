package store

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// StrictUnmarshal decodes data into v, refusing unknown fields and trailing
// data. Nested config types use it in their UnmarshalJSON, so that a typo
// deep in a PATCH body is an error and not a silent no-op.
func StrictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("unexpected data after JSON value")
	}
	return nil
}

// jsonValue stores v as JSON text.
func jsonValue(v any) (driver.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// jsonScan reads JSON text (string or bytes) into v.
func jsonScan(src any, v any) error {
	switch s := src.(type) {
	case nil:
		return nil
	case string:
		return json.Unmarshal([]byte(s), v)
	case []byte:
		return json.Unmarshal(s, v)
	}
	return fmt.Errorf("cannot scan %T as JSON", src)
}
