package analytics

import (
	"os"
	"path/filepath"
	"strings"
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
