package clickhouse

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
)

func TestSpansRoundTrip(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 123456000, time.UTC)
	spans := []analytics.Span{
		{TraceID: "t1", SpanID: "a1", Name: "POST chat/completions", Start: start, DurationMS: 12.345, Status: "ok",
			Attributes: map[string]string{"request_id": "req_1", "status": "200", "route": "chat/completions"}},
		{TraceID: "t1", SpanID: "b2", ParentID: "a1", Name: "upstream \"odd\" \\ name\n\t\x07\x7f é ✓", Start: start.Add(time.Millisecond),
			DurationMS: 0.001, Status: "error", Attributes: map[string]string{"bad\xffutf8": "v\x00", "": ""}},
		{TraceID: "t1", SpanID: "c3", ParentID: "a1", Name: "", Start: start.Add(-time.Hour)},
	}
	var e spanEncoder
	text := e.encode(spans)
	if !json.Valid([]byte(text)) {
		t.Fatalf("not JSON: %s", text)
	}
	got, err := decodeSpans("t1", text)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]*analytics.Span, len(spans))
	for i, sp := range spans {
		cp := sp
		if cp.Attributes == nil {
			cp.Attributes = map[string]string{}
		}
		want[i] = &cp
	}
	want[1].Attributes = map[string]string{"bad\ufffdutf8": "v\x00", "": ""}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if root := rootSpan(spans); root == nil || root.SpanID != "a1" {
		t.Errorf("rootSpan: %v, want a1", root)
	}
	if e.encode(nil) != "" {
		t.Error("no spans: want an empty string")
	}
}

func TestRootSpanEarliest(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	spans := []analytics.Span{{SpanID: "z", Start: at}, {SpanID: "y", ParentID: "z", Start: at.Add(-time.Second)},
		{SpanID: "b", Start: at.Add(-time.Millisecond)}, {SpanID: "a", Start: at.Add(-time.Millisecond)}}
	if root := rootSpan(spans); root == nil || root.SpanID != "a" {
		t.Errorf("rootSpan: %v, want a (earliest, then least id)", root)
	}
	if rootSpan(spans[1:2]) != nil {
		t.Error("rootSpan of spans that all have parents: want nil")
	}
}

func BenchmarkSpanEncode(b *testing.B) {
	at := time.Now()
	spans := []analytics.Span{
		{SpanID: "0123456789abcdef", ParentID: "fedcba9876543210", Name: "upstream openai", Start: at, DurationMS: 1234.567, Status: "ok",
			Attributes: map[string]string{"provider": "openai", "model": "gpt-4o", "key_alias": "main", "attempt": "1", "upstream_status": "200"}},
		{SpanID: "fedcba9876543210", Name: "POST chat/completions", Start: at, DurationMS: 1300.5, Status: "ok",
			Attributes: map[string]string{"request_id": "0196c5a2-aaaa-7bbb-8ccc-123456789abc", "status": "200", "route": "chat/completions"}},
	}
	var e spanEncoder
	for b.Loop() {
		_ = e.encode(spans)
	}
}
