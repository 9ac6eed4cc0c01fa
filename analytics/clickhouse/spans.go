package clickhouse

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/jsonstr"
)

// A request's spans are stored on its row (migration 0004): a JSON array in
// the spans column, plus the root's start and duration and the span count
// as plain columns for the trace listing. A span's trace is its request's.

// spanJSON is a span as stored: times in whole microseconds.
type spanJSON struct {
	ID         string            `json:"id"`
	Parent     string            `json:"parent,omitempty"`
	Name       string            `json:"name"`
	StartUS    int64             `json:"start_us"`
	DurationUS uint64            `json:"duration_us"`
	Status     string            `json:"status,omitempty"`
	Attrs      map[string]string `json:"attrs,omitempty"`
}

// spanEncoder encodes the spans of one request after another, reusing its
// buffers: the writer encodes every span of a batch, and encoding/json's
// reflection and map sorting cost more than the rest of the row together.
// (fastjson's encoder is no substitute: it escapes control characters the
// Go way, \x07, which is not JSON.)
type spanEncoder struct {
	keys []string
	buf  []byte
}

// encode returns spans as the JSON of the spans column ("" for none): the
// fields of spanJSON, attributes in key order.
func (e *spanEncoder) encode(spans []analytics.Span) string {
	if len(spans) == 0 {
		return ""
	}
	b := append(e.buf[:0], '[')
	for i, sp := range spans {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = jsonstr.Append(b, sp.SpanID)
		if sp.ParentID != "" {
			b = append(b, `,"parent":`...)
			b = jsonstr.Append(b, sp.ParentID)
		}
		b = append(b, `,"name":`...)
		b = jsonstr.Append(b, sp.Name)
		b = append(b, `,"start_us":`...)
		b = strconv.AppendInt(b, sp.Start.UnixMicro(), 10)
		b = append(b, `,"duration_us":`...)
		b = strconv.AppendUint(b, durationUS(sp.DurationMS), 10)
		if sp.Status != "" {
			b = append(b, `,"status":`...)
			b = jsonstr.Append(b, sp.Status)
		}
		if len(sp.Attributes) > 0 {
			e.keys = e.keys[:0]
			for k := range sp.Attributes {
				e.keys = append(e.keys, k)
			}
			slices.Sort(e.keys)
			b = append(b, `,"attrs":{`...)
			for j, k := range e.keys {
				if j > 0 {
					b = append(b, ',')
				}
				b = jsonstr.Append(b, k)
				b = append(b, ':')
				b = jsonstr.Append(b, sp.Attributes[k])
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	e.buf = b
	return string(b)
}

// decodeSpans reads the spans column of a request of trace traceID.
func decodeSpans(traceID, text string) ([]*analytics.Span, error) {
	if text == "" {
		return nil, nil
	}
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

// rootSpan is the request's root: its span without a parent, the earliest
// (then the least span id) should there be several; nil when none.
func rootSpan(spans []analytics.Span) *analytics.Span {
	var root *analytics.Span
	for i := range spans {
		sp := &spans[i]
		if sp.ParentID != "" {
			continue
		}
		if root == nil || earlier(sp.Start.UnixMicro(), sp.SpanID, root.Start.UnixMicro(), root.SpanID) {
			root = sp
		}
	}
	return root
}

// earlier orders spans by start (in stored microseconds), then span id.
func earlier(startA int64, idA string, startB int64, idB string) bool {
	return startA < startB || startA == startB && idA < idB
}
