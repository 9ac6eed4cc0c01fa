package embedded_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/analyticstest"
)

// BenchmarkWriteGatewayRecords writes records shaped like those of
// `sluice bench` (one tenant and gateway, a token without a user, a root
// and one attempt span, no rule hits, the bench's 185-byte request body
// and a chat answer) in batches of 1,000, and reports the process's CPU
// time per record while Write runs: the writer's share of the embedded
// gateway's CPU per request, measurable on a loaded machine where the
// gateway's own figure is not (docs/performance.md).
func BenchmarkWriteGatewayRecords(b *testing.B) {
	s := open(b)
	ctx := context.Background()
	b.ReportAllocs()
	reqBody := `{"model":"openai/gpt-4o-mini","messages":[{"role":"system","content":"You are terse."},` +
		`{"role":"user","content":"` + strings.Repeat("x", 90) + `"}],"max_tokens":16}`
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		recs := analyticstest.Generate(uint64(1000+i), 1000)
		for _, r := range recs {
			r.TenantID, r.GatewayID, r.UserID, r.TokenID = "bench", "gw-bench", "", "tok-bench"
			r.Status, r.ErrorCode, r.ErrorMessage, r.Attempts, r.Cache = 200, "", "", 1, "MISS"
			r.RuleHits, r.Events, r.Metadata, r.Flags = nil, nil, nil, nil
			r.RequestBody = reqBody
			r.ResponseBody = `{"id":"chatcmpl-` + r.ID + `","object":"chat.completion","model":"gpt-4o-mini",` +
				`"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}],` +
				`"usage":{"prompt_tokens":24,"completion_tokens":3,"total_tokens":27}}`
			if n := len(r.Spans); n > 2 {
				r.Spans = r.Spans[n-2:] // the last attempt and the root
			}
		}
		batch := &analytics.Batch{ID: fmt.Sprintf("bench-%d", i), Records: recs}
		b.StartTimer()
		before := cpuTime(b)
		if err := s.Write(ctx, batch); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime(b) - before
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*1000), "cpu-µs/record")
}
