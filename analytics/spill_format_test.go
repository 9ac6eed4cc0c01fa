package analytics

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/money"
)

// goldenV0Records are the records of testdata/spill-v0.seg, a segment the
// spill wrote before it had a format of its own (frames whose payload is
// the JSON of Record inside an envelope, no version): records 0–4 spilled
// from the queue, 5–7 as the attempted batch "batch_v0", 8 with every field
// set.
func goldenV0Records() []*Record {
	var recs []*Record
	for i := range 8 {
		recs = append(recs, NewTestRecord(i))
	}
	ts := time.Date(2026, 3, 2, 8, 30, 15, 123_000_000, time.UTC)
	full := &Record{
		ID: "rec-full", TS: ts, TenantID: "acme", GatewayID: "gw_2", TokenID: "tok_1", UserID: "user_1",
		Provider: "anthropic", Model: "claude-3-5-sonnet", Route: "chat/completions", Status: 429,
		ErrorCode: "rate_limited", LatencyMS: 812, TTFBMS: 97, TokensIn: 1200, TokensOut: 0, CachedTokens: 64,
		CostUSD: money.USD(123_456_789_012_345), Cache: "MISS", Attempts: 3,
		RuleHits: []string{"rule_a", "rule_b"}, Metadata: map[string]string{"env": "prod", "team": "é"},
		TraceID: "0af7651916cd43dd8448eb211c80319c", ClientIP: "203.0.113.7", UserAgent: "agent\xff/1.0",
		RequestBody: `{"q":"é\u0000"}`, ResponseBody: "answer", Flags: []string{"usage_estimated", "partial"},
		CacheSavedUSD: money.USD(42),
		Spans: []Span{
			{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "root", Name: "POST chat/completions", Start: ts,
				DurationMS: 812.25, Status: "error", Attributes: map[string]string{"request_id": "rec-full"}},
			{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "a1", ParentID: "root", Name: "attempt",
				Start: ts.Add(time.Millisecond), DurationMS: 400.5, Status: "error", Attributes: map[string]string{"attempt": "1"}},
		},
		Events: []GuardrailEvent{{ID: "ev-full", TS: ts, TenantID: "acme", GatewayID: "gw_2", RequestID: "rec-full",
			RuleID: "rule_a", RuleName: "No secrets", Kind: "regex", Action: "flag", Direction: "request", Excerpt: "sk-…"}},
	}
	return append(recs, full)
}

// TestSpillReplaysVersion0Segment replays a segment written by the spill's
// first format (testdata/spill-v0.seg, made by the code of that time from
// goldenV0Records): a process upgraded with records on disk replays them.
func TestSpillReplaysVersion0Segment(t *testing.T) {
	golden, err := os.ReadFile("testdata/spill-v0.seg")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "000001-01jqv0goldensegment00000000.seg"), golden, 0o600); err != nil {
		t.Fatal(err)
	}
	p := testPipeline(t, dir)
	batches := replayAll(t, p, p.spill, 100)

	want := goldenV0Records()
	// JSON replaced the invalid UTF-8 byte when the segment was written.
	want[8].UserAgent = "agent\uFFFD/1.0"
	var got []*Record
	var ids []string
	for _, b := range batches {
		ids = append(ids, b.ID)
		got = append(got, b.Records...)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replayed records (-want +got):\n%s", diff)
	}
	wantIDs := []string{"spill-000001-01jqv0goldensegment00000000-0", "batch_v0", "spill-000001-01jqv0goldensegment00000000-"}
	if len(ids) != 3 || ids[0] != wantIDs[0] || ids[1] != wantIDs[1] || !strings.HasPrefix(ids[2], wantIDs[2]) {
		t.Errorf("batch ids %q, want %q (the last with its offset)", ids, wantIDs)
	}
	if got := p.Stats().DroppedRecords; got != 0 {
		t.Errorf("dropped = %d, want 0", got)
	}
	if n := len(SegmentFiles(t, dir)); n != 0 {
		t.Errorf("%d segments left after replay, want 0", n)
	}
}

// filled returns a value of type t with every field set to something other
// than its zero value (a nested span's children one level deep), for the
// round-trip test of the spill's record.
func filled(t reflect.Type, depth int) reflect.Value {
	v := reflect.New(t).Elem()
	switch {
	case t == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 5, 6, 7, 8, 9, 123_456_789, time.UTC)))
		return v
	case t == reflect.TypeFor[[MaxFixedAttrs]SpanAttr]():
		// Span.Fixed comes back in Attributes: TestSpillFixedSpanAttrs.
		return v
	case t.Kind() == reflect.String:
		v.SetString("s-" + t.Name())
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64:
		v.SetInt(7_000_000_001)
	case t.Kind() == reflect.Float64:
		v.SetFloat(12.375)
	case t.Kind() == reflect.Map:
		v.Set(reflect.MakeMap(t))
		v.SetMapIndex(filled(t.Key(), depth), filled(t.Elem(), depth))
	case t.Kind() == reflect.Slice:
		if depth > 1 {
			return v
		}
		v.Set(reflect.MakeSlice(t, 0, 2))
		v.Set(reflect.Append(v, filled(t.Elem(), depth+1)))
	case t.Kind() == reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		v.Elem().Set(filled(t.Elem(), depth))
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			fv := filled(f.Type, depth)
			if fv.Kind() == reflect.String {
				fv.SetString(f.Name + "-value")
			}
			v.Field(i).Set(fv)
		}
	default:
		panic("filled: no value for " + t.String())
	}
	return v
}

// TestSpillRefusesAFutureVersion: a segment written by a newer build (a
// format version this one does not read) is neither replayed nor dropped:
// its replay stops, the file stays on disk, and the log says why.
func TestSpillRefusesAFutureVersion(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload string
	}{
		{"same shape", `{"v":5,"id":"rec-future","ts":"2026-03-01T12:00:00Z","tenant_id":"acme"}`},
		{"another shape", `{"v":5,"id":{"a":1},"ts":17}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var logs syncLog
			p, err := NewPipeline(PipelineConfig{Writer: NewFakeWriter(), Dir: dir,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			appendRecords(t, p.spill, 0, 2, "")
			if err := p.spill.close(); err != nil {
				t.Fatal(err)
			}
			// A segment of the future, after this build's.
			var h [frameHeader]byte
			payload := []byte(tc.payload)
			binary.LittleEndian.PutUint32(h[0:4], uint32(len(payload)))
			binary.LittleEndian.PutUint32(h[4:8], crc32.Checksum(payload, castagnoli))
			future := filepath.Join(dir, "000009-01jqfuturesegment000000000.seg")
			if err := os.WriteFile(future, append(h[:], payload...), 0o600); err != nil {
				t.Fatal(err)
			}

			p2, err := NewPipeline(PipelineConfig{Writer: NewFakeWriter(), Dir: dir,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, b := range replayAll(t, p2, p2.spill, 100) {
				for _, r := range b.Records {
					ids = append(ids, r.ID)
				}
			}
			if diff := cmp.Diff([]string{NewTestRecord(0).ID, NewTestRecord(1).ID}, ids); diff != "" {
				t.Errorf("replayed (-want +got):\n%s", diff)
			}
			if got := p2.Stats().DroppedRecords; got != 0 {
				t.Errorf("dropped = %d, want 0: a record of a later version is kept, not dropped", got)
			}
			if files := SegmentFiles(t, dir); len(files) != 1 || files[0] != future {
				t.Errorf("segments left %v, want only %s", files, future)
			}
			log := logs.String()
			for _, want := range []string{"000009-01jqfuturesegment000000000", "format version 5", "kept on disk"} {
				if !strings.Contains(log, want) {
					t.Errorf("log %q does not say %q", log, want)
				}
			}
		})
	}
}

// syncLog is a log buffer safe for the pipeline's goroutines.
type syncLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestSpillReadsVersion1: a frame of format 1 (before the record had an
// operation) decodes with its fields and an empty operation; the current
// format carries the operation.
func TestSpillReadsVersion1(t *testing.T) {
	v1 := `{"v":1,"batch":"b1","id":"rec-v1","ts":"2026-03-01T12:00:00Z","tenant_id":"acme","provider":"openai",` +
		`"model":"gpt-4o","status":200,"cost_nanos":5,"saved_nanos":0}`
	rec, batch, err := decodeSpill([]byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	if batch != "b1" || rec.ID != "rec-v1" || rec.Model != "gpt-4o" || rec.CostUSD != 5 || rec.Operation != "" {
		t.Errorf("decoded %+v (batch %q), want rec-v1 of gpt-4o, cost 5, no operation", rec, batch)
	}
	rec.Operation = "embeddings"
	payload, err := encodeSpill(rec, "b2")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`"v":%d`, spillVersion); !strings.Contains(string(payload), want) {
		t.Errorf("payload %s is not version %d", payload, spillVersion)
	}
	back, _, err := decodeSpill(payload)
	if err != nil {
		t.Fatal(err)
	}
	if back.Operation != "embeddings" {
		t.Errorf("operation %q after a round trip, want embeddings", back.Operation)
	}
}

// TestSpillReplaysVersion1Segment replays a segment of format 1
// (testdata/spill-v1.seg, written by the code of that time from
// goldenV0Records, records 5–7 under the attempted batch "batch_v1"): the
// records come back whole, with no operation.
func TestSpillReplaysVersion1Segment(t *testing.T) {
	golden, err := os.ReadFile("testdata/spill-v1.seg")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "000001-01jqv1goldensegment00000000.seg"), golden, 0o600); err != nil {
		t.Fatal(err)
	}
	p := testPipeline(t, dir)
	want := goldenV0Records()
	want[8].UserAgent = "agent\uFFFD/1.0"
	var got []*Record
	var ids []string
	for _, b := range replayAll(t, p, p.spill, 100) {
		ids = append(ids, b.ID)
		got = append(got, b.Records...)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replayed records (-want +got):\n%s", diff)
	}
	if len(ids) != 3 || ids[1] != "batch_v1" {
		t.Errorf("batch ids %q, want the attempted batch batch_v1 second of three", ids)
	}
	if n := len(SegmentFiles(t, dir)); n != 0 {
		t.Errorf("%d segments left after replay, want 0", n)
	}
}

// TestSpillReadsVersion2: a frame of format 2 (before cache writes and
// reasoning tokens) decodes with them 0; the current format carries them.
func TestSpillReadsVersion2(t *testing.T) {
	v2 := `{"v":2,"batch":"b1","id":"rec-v2","ts":"2026-03-01T12:00:00Z","tenant_id":"acme","provider":"anthropic",` +
		`"model":"claude-sonnet-4-5","status":200,"tokens_in":900,"cached_tokens":100,"operation":"messages","cost_nanos":7,"saved_nanos":0}`
	rec, _, err := decodeSpill([]byte(v2))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Operation != "messages" || rec.CachedTokens != 100 || rec.CacheWriteTokens != 0 || rec.ReasoningTokens != 0 {
		t.Errorf("decoded %+v, want operation messages, 100 cached, no writes or reasoning", rec)
	}
	rec.CacheWriteTokens, rec.CacheWrite1hTokens, rec.ReasoningTokens = 500, 200, 42
	payload, err := encodeSpill(rec, "b2")
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := decodeSpill(payload)
	if err != nil {
		t.Fatal(err)
	}
	if back.CacheWriteTokens != 500 || back.CacheWrite1hTokens != 200 || back.ReasoningTokens != 42 || back.CostUSD != 7 {
		t.Errorf("after a round trip: writes %d (1h %d), reasoning %d, cost %d; want 500 (200), 42, 7",
			back.CacheWriteTokens, back.CacheWrite1hTokens, back.ReasoningTokens, back.CostUSD)
	}
}

// TestSpillReplaysVersion2Segment replays a segment of format 2
// (testdata/spill-v2.seg, written by the code of that time from
// goldenV0Records, every other one with the operation "chat", all under
// the attempted batch "batch_v2"): the records come back whole, their
// cache writes and reasoning tokens 0.
func TestSpillReplaysVersion2Segment(t *testing.T) {
	golden, err := os.ReadFile("testdata/spill-v2.seg")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "000001-01jqv2goldensegment00000000.seg"), golden, 0o600); err != nil {
		t.Fatal(err)
	}
	p := testPipeline(t, dir)
	want := goldenV0Records()
	want[8].UserAgent = "agent\uFFFD/1.0"
	for i := range want {
		if i%2 == 0 {
			want[i].Operation = "chat"
		}
	}
	var got []*Record
	for _, b := range replayAll(t, p, p.spill, 100) {
		if b.ID != "batch_v2" {
			t.Errorf("batch id %q, want the attempted batch batch_v2", b.ID)
		}
		got = append(got, b.Records...)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replayed records (-want +got):\n%s", diff)
	}
	if n := len(SegmentFiles(t, dir)); n != 0 {
		t.Errorf("%d segments left after replay, want 0", n)
	}
}

// TestSpillReadsVersion3: a frame of format 3 (before error messages)
// decodes with none; the current format carries it.
func TestSpillReadsVersion3(t *testing.T) {
	v3 := `{"v":3,"batch":"b1","id":"rec-v3","ts":"2026-03-01T12:00:00Z","tenant_id":"acme","provider":"openai",` +
		`"model":"gpt-4o-mini","status":429,"error_code":"budget_exceeded","reasoning_tokens":3,"cost_nanos":0,"saved_nanos":0}`
	rec, _, err := decodeSpill([]byte(v3))
	if err != nil {
		t.Fatal(err)
	}
	if rec.ErrorCode != "budget_exceeded" || rec.ReasoningTokens != 3 || rec.ErrorMessage != "" {
		t.Errorf("decoded %+v, want budget_exceeded, 3 reasoning tokens, no message", rec)
	}
	rec.ErrorMessage = "the gateway's monthly budget is spent"
	payload, err := encodeSpill(rec, "b2")
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := decodeSpill(payload)
	if err != nil {
		t.Fatal(err)
	}
	if back.ErrorMessage != rec.ErrorMessage {
		t.Errorf("after a round trip: message %q, want %q", back.ErrorMessage, rec.ErrorMessage)
	}
}
