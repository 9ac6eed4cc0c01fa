package analyticstest

import (
	"time"

	"github.com/sluicehq/sluice/analytics"
)

// The requests of Triage, oldest first; the comments say how the log
// filters and orders of the admin API see them.
const (
	TriageOK        = "0190b8c6-0001-7000-8000-000000000001" // openai/gpt-4o-mini 200, 300 ms, tok_a, team=Search, the only priced one
	TriageRefused   = "0190b8c6-0002-7000-8000-000000000002" // openai/gpt-4o-mini 403 model_not_allowed, 5 ms, tok_b, no attempt
	TriageUpstream  = "0190b8c6-0003-7000-8000-000000000003" // openai/gpt-4o-mini 502 upstream_error, 900 ms, tok_a
	TriageLimited   = "0190b8c6-0004-7000-8000-000000000004" // anthropic/claude-3-5-haiku 429, 50 ms, tok_b
	TriageStreamCut = "0190b8c6-0005-7000-8000-000000000005" // openai/gpt-4o-mini 200 with upstream_error, 1500 ms, tok_a
)

// Triage returns five requests of tenant in the minutes before now, for
// tests of the log explorer over the admin API (embeddedtest.Open stores
// them).
func Triage(tenant string, now time.Time) []*analytics.Record {
	rec := func(i int, id, provider, model string, status int, code string, latency int64, token string) *analytics.Record {
		return &analytics.Record{ID: id, TS: now.Add(time.Duration(i-10) * time.Minute).Truncate(time.Millisecond),
			TenantID: tenant, GatewayID: "gw_triage", TokenID: token, Provider: provider, Model: model,
			Status: status, ErrorCode: code, LatencyMS: latency, Attempts: 1, Metadata: map[string]string{}}
	}
	ok := rec(1, TriageOK, "openai", "gpt-4o-mini", 200, "", 300, "tok_a")
	ok.Metadata["team"], ok.CostUSD, ok.TokensIn, ok.TokensOut = "Search", 1500, 10, 5
	refused := rec(2, TriageRefused, "openai", "gpt-4o-mini", 403, "model_not_allowed", 5, "tok_b")
	refused.Attempts, refused.ErrorMessage = 0, "model openai/gpt-4o-mini is not allowed on this gateway"
	cut := rec(5, TriageStreamCut, "openai", "gpt-4o-mini", 200, "upstream_error", 1500, "tok_a")
	cut.ErrorMessage = "the stream ended early"
	return []*analytics.Record{ok, refused,
		rec(3, TriageUpstream, "openai", "gpt-4o-mini", 502, "upstream_error", 900, "tok_a"),
		rec(4, TriageLimited, "anthropic", "claude-3-5-haiku", 429, "rate_limit_exceeded", 50, "tok_b"), cut}
}
