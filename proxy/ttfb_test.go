package proxy

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// TestStreamTTFBAndAttemptSpan: the mock answers its headers and role
// chunk at once and waits delay before each content chunk. ttfb_ms is the
// time to the first content chunk (at least one delay), not to the
// headers; the attempt's span lasts until the stream's end (at least the
// chunks' delays) and ends within the root span; a stream the upstream
// breaks off ends its attempt span in error.
func TestStreamTTFBAndAttemptSpan(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	const delay, chunks = 150 * time.Millisecond, 3
	h.mock.Script(providertest.Step{Chunks: chunks, ChunkDelay: delay})
	resp, sr := h.openStream(t, chatBody("openai/gpt-4o-mini", `,"stream":true`))
	sr.all(t)
	resp.Body.Close()
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if rec.TTFBMS < delay.Milliseconds() || rec.TTFBMS > rec.LatencyMS {
		t.Errorf("ttfb_ms %d (latency %d), want the first content chunk's time: ≥ %d ms", rec.TTFBMS, rec.LatencyMS, delay.Milliseconds())
	}
	attempt, root := spans(t, rec)
	if min := float64((chunks * delay).Milliseconds()); attempt.DurationMS < min {
		t.Errorf("attempt span %.2f ms, want the whole stream (≥ %.0f ms)", attempt.DurationMS, min)
	}
	if attempt.Status != "ok" || attempt.AttributeMap()["outcome"] != "ok" {
		t.Errorf("attempt span status %q outcome %q, want ok", attempt.Status, attempt.AttributeMap()["outcome"])
	}
	end := func(s analytics.Span) time.Time {
		return s.Start.Add(time.Duration(s.DurationMS * float64(time.Millisecond)))
	}
	if end(attempt).After(end(root).Add(time.Millisecond)) {
		t.Errorf("attempt span ends at %v, after its root span (%v)", end(attempt), end(root))
	}

	// Broken off after one content chunk: the span ends then, in error.
	h.mock.Script(providertest.Step{Chunks: chunks, ChunkDelay: delay, ResetAfter: 1})
	resp, sr = h.openStream(t, chatBody("openai/gpt-4o-mini", `,"stream":true`))
	sr.all(t)
	resp.Body.Close()
	rec = h.record(resp.Header.Get(RequestIDHeader))
	attempt, _ = spans(t, rec)
	if attempt.Status != "error" || attempt.DurationMS < float64(delay.Milliseconds()) {
		t.Errorf("broken stream's attempt span status %q, %.2f ms; want error, ≥ %d ms", attempt.Status, attempt.DurationMS, delay.Milliseconds())
	}
}

// spans returns a record's one attempt span and its root span.
func spans(t *testing.T, rec analytics.Record) (attempt, root analytics.Span) {
	t.Helper()
	if len(rec.Spans) != 2 || rec.Spans[1].ParentID != "" {
		t.Fatalf("spans %+v, want the attempt, then the root", rec.Spans)
	}
	return rec.Spans[0], rec.Spans[1]
}

// TestCarriesContent: the chunks that start ttfb_ms.
func TestCarriesContent(t *testing.T) {
	for chunk, want := range map[string]bool{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`:                                 false,
		`{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`:                                                  true,
		`{"choices":[{"index":0,"delta":{"content": "Hi"}}]}`:                                                                      true,
		`{"choices":[{"index":0,"delta":{"content":null,"tool_calls":[{"index":0,"id":"c","function":{"name":"f"}}]}}]}`:           true,
		`{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}`:                                                            true,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`:                                                              false,
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}`:                                                         false,
		`{"choices":[{"index":0,"text":"Hi","finish_reason":null}]}`:                                                               true,
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}": true,
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[]}}":                                    false,
	} {
		if got := carriesContent([]byte(chunk)); got != want {
			t.Errorf("carriesContent(%s) = %v, want %v", chunk, got, want)
		}
	}
}
