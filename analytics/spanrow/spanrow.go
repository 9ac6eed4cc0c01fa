// Package spanrow is the compact encoding of a request's spans stored on
// its row, shared by the analytics backends (ClickHouse since its
// migration 0004, the embedded store since its schema version 6): a JSON
// array in the row's spans column, plus the root's start and duration and
// the span count as plain columns for the trace listing. A span's trace is
// its request's.
//
// The spans column holds one array per span, positional to keep the row
// small (as objects with named fields, the spans were more than half of a
// row's bytes, and the server's insert and merge work grows with them):
//
//	[id, parent, name, start_us, duration_us, status, [attrs]]
//
// in which:
//
//   - parent is the index of the parent span in the same array when it is
//     there, else the parent's id as a string ("" for none);
//   - start_us is in microseconds from the row's root_start_us (the root
//     span's start; 0, so since the epoch, for a row without a root);
//   - attrs is a flat array of keys and values, [k1, v1, k2, v2, …], left
//     out when empty; a key the proxy sets on its spans is written as its
//     index in spanKeys (these first, in index order), any other as a string
//     (after them, in key order). A value written as the number 0 is the
//     row's own: its id for request_id, its status for status, its route
//     for route, its provider and model for provider and model (the
//     proxy's root span repeats the first three, and its attempt spans
//     the last two unless a fallback took another target).
//
// ClickHouse rows written before this format (builds from its migration
// 0004 to the positional format) hold an array of objects, spanJSON;
// Decode reads both.
package spanrow

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/jsonstr"
)

// spanJSON is a span as stored by earlier builds: times in whole
// microseconds.
type spanJSON struct {
	ID         string            `json:"id"`
	Parent     string            `json:"parent,omitempty"`
	Name       string            `json:"name"`
	StartUS    int64             `json:"start_us"`
	DurationUS uint64            `json:"duration_us"`
	Status     string            `json:"status,omitempty"`
	Attrs      map[string]string `json:"attrs,omitempty"`
}

// spanKeys are the attribute keys of the proxy's spans (proxy/attempts.go),
// written as their index. Rows keep these indexes: the list may grow at
// its end, and nothing in it may ever move or change.
var spanKeys = [...]string{"attempt", "key_alias", "model", "provider", "upstream_status", "request_id", "route", "status", "outcome"}

// spanKeyIndex is the index of k in spanKeys, -1 when it is not there (a
// switch: faster than a map on the writer's path; a test holds the two
// together).
func spanKeyIndex(k string) int {
	switch k {
	case "attempt":
		return 0
	case "key_alias":
		return 1
	case "model":
		return 2
	case "provider":
		return 3
	case "upstream_status":
		return 4
	case "request_id":
		return 5
	case "route":
		return 6
	case "status":
		return 7
	case "outcome":
		return 8
	}
	return -1
}

// maxParentScan bounds the spans searched for a parent's index; a parent
// beyond it is written as its id.
const maxParentScan = 32

// Encoder encodes the spans of one request after another, reusing its
// buffers: the writer encodes every span of a batch, and encoding/json's
// reflection and map sorting cost more than the rest of the row together.
// (fastjson's encoder is no substitute: it escapes control characters the
// Go way, \x07, which is not JSON.)
type Encoder struct {
	attrs []attr
	buf   []byte
	num   []byte
}

type attr struct{ key, value string }

// Row is what a request's row holds besides its spans column, which
// the column refers to rather than repeats.
type Row struct {
	ID, Route, Provider, Model string
	Status                     int
	RootStart                  int64 // root_start_us
}

// RowOf is the row of a request whose root span is root (nil for none).
func RowOf(r *analytics.Record, root *analytics.Span) Row {
	row := Row{ID: r.ID, Route: r.Route, Provider: r.Provider, Model: r.Model, Status: r.Status}
	if root != nil {
		row.RootStart = root.Start.UnixMicro()
	}
	return row
}

// Encode returns spans as the JSON of the spans column of row ("" for
// none).
func (e *Encoder) Encode(spans []analytics.Span, row Row) string {
	e.buf = e.Append(e.buf[:0], spans, row)
	return string(e.buf)
}

// Append appends the encoding of spans to b (nothing for none).
func (e *Encoder) Append(b []byte, spans []analytics.Span, row Row) []byte {
	if len(spans) == 0 {
		return b
	}
	b = append(b, '[')
	for i := range spans {
		sp := &spans[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = jsonstr.Append(b, sp.SpanID)
		b = append(b, ',')
		if p := parentIndex(spans, sp.ParentID); p >= 0 {
			b = strconv.AppendInt(b, int64(p), 10)
		} else {
			b = jsonstr.Append(b, sp.ParentID)
		}
		b = append(b, ',')
		b = jsonstr.Append(b, sp.Name)
		b = append(b, ',')
		b = strconv.AppendInt(b, sp.Start.UnixMicro()-row.RootStart, 10)
		b = append(b, ',')
		b = strconv.AppendUint(b, DurationUS(sp.DurationMS), 10)
		b = append(b, ',')
		b = jsonstr.Append(b, sp.Status)
		if sp.NumAttrs() > 0 {
			b = e.appendAttrs(append(b, ",["...), sp, row)
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

// appendAttrs appends a span's attributes as keys and values: the keys of
// spanKeys first, in its order and as their index, then any others in key
// order. Looking the known keys up is cheaper than iterating and sorting
// the map, and the proxy's spans have no others.
func (e *Encoder) appendAttrs(b []byte, sp *analytics.Span, row Row) []byte {
	first, known := true, 0
	for i, k := range spanKeys {
		v, ok := sp.Attr(k)
		if !ok {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first, known = false, known+1
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ',')
		if e.rowValue(i, v, row) {
			b = append(b, '0')
		} else {
			b = jsonstr.Append(b, v)
		}
	}
	if known == sp.NumAttrs() {
		return b
	}
	e.attrs = e.attrs[:0]
	for k, v := range sp.Attrs() {
		if spanKeyIndex(k) < 0 {
			e.attrs = append(e.attrs, attr{k, v})
		}
	}
	slices.SortFunc(e.attrs, func(x, y attr) int { return strings.Compare(x.key, y.key) })
	for _, a := range e.attrs {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = jsonstr.Append(b, a.key)
		b = append(b, ',')
		b = jsonstr.Append(b, a.value)
	}
	return b
}

// rowValue reports whether v, the value of attribute spanKeys[key], is the
// row's own (rowAttr), comparing a status without making its string.
func (e *Encoder) rowValue(key int, v string, row Row) bool {
	if spanKeys[key] == "status" {
		e.num = strconv.AppendInt(e.num[:0], int64(row.Status), 10)
		return v == string(e.num)
	}
	own, ok := rowAttr(spanKeys[key], row)
	return ok && v == own
}

// rowAttr is the row's own value of attribute key, false when the row has
// none.
func rowAttr(key string, row Row) (string, bool) {
	switch key {
	case "request_id":
		return row.ID, true
	case "route":
		return row.Route, true
	case "provider":
		return row.Provider, true
	case "model":
		return row.Model, true
	case "status":
		return strconv.Itoa(row.Status), true
	}
	return "", false
}

// parentIndex is the index of the span with id parent among the first
// maxParentScan spans, -1 when none (or parent is "").
func parentIndex(spans []analytics.Span, parent string) int {
	if parent == "" {
		return -1
	}
	for i := range spans[:min(len(spans), maxParentScan)] {
		if spans[i].SpanID == parent {
			return i
		}
	}
	return -1
}

// Decode reads the spans column of row, a request of trace traceID.
func Decode(traceID, text string, row Row) ([]*analytics.Span, error) {
	if text == "" {
		return nil, nil
	}
	if strings.HasPrefix(text, "[{") {
		return decodeSpanObjects(traceID, text)
	}
	var stored [][]json.RawMessage
	if err := json.Unmarshal([]byte(text), &stored); err != nil {
		return nil, fmt.Errorf("decode the spans of trace %s: %w", traceID, err)
	}
	out := make([]*analytics.Span, len(stored))
	parents := make([]json.RawMessage, len(stored))
	for i, f := range stored {
		if len(f) != 6 && len(f) != 7 {
			return nil, fmt.Errorf("decode the spans of trace %s: span %d has %d fields", traceID, i, len(f))
		}
		sp := &analytics.Span{TraceID: traceID, Attributes: map[string]string{}}
		var (
			start int64
			dur   uint64
		)
		err := errors.Join(json.Unmarshal(f[0], &sp.SpanID), json.Unmarshal(f[2], &sp.Name),
			json.Unmarshal(f[3], &start), json.Unmarshal(f[4], &dur), json.Unmarshal(f[5], &sp.Status))
		if err == nil && len(f) == 7 {
			err = decodeAttrs(f[6], sp.Attributes, row)
		}
		if err != nil {
			return nil, fmt.Errorf("decode the spans of trace %s: span %d: %w", traceID, i, err)
		}
		sp.Start, sp.DurationMS = time.UnixMicro(row.RootStart+start).UTC(), float64(dur)/1000
		out[i], parents[i] = sp, f[1]
	}
	for i, raw := range parents {
		if len(raw) > 0 && raw[0] == '"' {
			if err := json.Unmarshal(raw, &out[i].ParentID); err != nil {
				return nil, fmt.Errorf("decode the spans of trace %s: span %d: %w", traceID, i, err)
			}
			continue
		}
		var p int
		if err := json.Unmarshal(raw, &p); err != nil || p < 0 || p >= len(out) {
			return nil, fmt.Errorf("decode the spans of trace %s: span %d: parent %s", traceID, i, raw)
		}
		out[i].ParentID = out[p].SpanID
	}
	return out, nil
}

// decodeAttrs reads a span's flat array of keys and values into attrs.
func decodeAttrs(raw json.RawMessage, attrs map[string]string, row Row) error {
	var kv []json.RawMessage
	if err := json.Unmarshal(raw, &kv); err != nil {
		return err
	}
	if len(kv)%2 != 0 {
		return fmt.Errorf("attributes: %d keys and values", len(kv))
	}
	for i := 0; i < len(kv); i += 2 {
		var key, value string
		if len(kv[i]) > 0 && kv[i][0] != '"' {
			var k int
			if err := json.Unmarshal(kv[i], &k); err != nil || k < 0 || k >= len(spanKeys) {
				return fmt.Errorf("attributes: unknown key %s", kv[i])
			}
			key = spanKeys[k]
		} else if err := json.Unmarshal(kv[i], &key); err != nil {
			return fmt.Errorf("attributes: %w", err)
		}
		if string(kv[i+1]) == "0" {
			v, ok := rowAttr(key, row)
			if !ok {
				return fmt.Errorf("attributes: %s refers to the row, which has no such value", key)
			}
			attrs[key] = v
			continue
		}
		if err := json.Unmarshal(kv[i+1], &value); err != nil {
			return fmt.Errorf("attributes: %w", err)
		}
		attrs[key] = value
	}
	return nil
}

// decodeSpanObjects reads the spans of a row written before the positional
// format.
func decodeSpanObjects(traceID, text string) ([]*analytics.Span, error) {
	var stored []spanJSON
	if err := json.Unmarshal([]byte(text), &stored); err != nil {
		return nil, fmt.Errorf("decode the spans of trace %s: %w", traceID, err)
	}
	out := make([]*analytics.Span, len(stored))
	for i, sp := range stored {
		attrs := sp.Attrs
		if attrs == nil {
			attrs = map[string]string{}
		}
		out[i] = &analytics.Span{TraceID: traceID, SpanID: sp.ID, ParentID: sp.Parent, Name: sp.Name,
			Start: time.UnixMicro(sp.StartUS).UTC(), DurationMS: float64(sp.DurationUS) / 1000,
			Status: sp.Status, Attributes: attrs}
	}
	return out, nil
}

// Root is the request's root: its span without a parent, the earliest
// (then the least span id) should there be several; nil when none.
func Root(spans []analytics.Span) *analytics.Span {
	var root *analytics.Span
	for i := range spans {
		sp := &spans[i]
		if sp.ParentID != "" {
			continue
		}
		if root == nil || Earlier(sp.Start.UnixMicro(), sp.SpanID, root.Start.UnixMicro(), root.SpanID) {
			root = sp
		}
	}
	return root
}

// Earlier orders spans by start (in stored microseconds), then span id.
func Earlier(startA int64, idA string, startB int64, idB string) bool {
	return startA < startB || startA == startB && idA < idB
}

// DurationUS converts a span duration to whole microseconds (spans measure
// in microseconds; DurationMS carries them as a fraction of milliseconds).
func DurationUS(ms float64) uint64 {
	if ms <= 0 || math.IsNaN(ms) {
		return 0
	}
	return uint64(math.Round(ms * 1000))
}

// Tree makes the trace of one request from its decoded spans (Decode): nil
// when none is a root. Children are ordered by start, then span id; a span
// whose parent is missing hangs under the root, so that no span is hidden.
// The trace's tenant, gateway and request are the request's.
func Tree(id, tenantID, gatewayID, requestID string, spans []*analytics.Span) *analytics.Trace {
	slices.SortStableFunc(spans, func(a, b *analytics.Span) int {
		if Earlier(a.Start.UnixMicro(), a.SpanID, b.Start.UnixMicro(), b.SpanID) {
			return -1
		}
		if Earlier(b.Start.UnixMicro(), b.SpanID, a.Start.UnixMicro(), a.SpanID) {
			return 1
		}
		return 0
	})
	var root *analytics.Span
	byID := make(map[string]*analytics.Span, len(spans))
	for _, sp := range spans {
		byID[sp.SpanID] = sp
		if sp.ParentID == "" && root == nil {
			root = sp
		}
	}
	if root == nil {
		return nil
	}
	// spans are in (start, span id) order, so children are appended in it.
	for _, sp := range spans {
		if sp == root {
			continue
		}
		parent := byID[sp.ParentID]
		if parent == nil || parent == sp {
			parent = root
		}
		parent.Children = append(parent.Children, sp)
	}
	return &analytics.Trace{ID: id, TenantID: tenantID, GatewayID: gatewayID, RequestID: requestID,
		Start: root.Start, DurationMS: root.DurationMS, Root: root}
}
