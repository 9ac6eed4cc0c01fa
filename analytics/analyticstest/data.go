// Package analyticstest is the conformance suite of analytics backends. Run
// writes a deterministic synthetic data set through Backend.Write and checks
// every query against figures computed in Go by a plain reference
// implementation of the definitions in analytics/backend.go, so that the
// embedded and the ClickHouse backends are held to one answer.
//
// Where backend.go leaves a detail open, the suite pins it (see the
// comments of the reference functions in reference.go); every backend
// follows the same choices:
//
//   - Timestamps keep at least millisecond precision and come back in UTC.
//   - Nearest rank is computed in integers: rank = (n·q_permille + 999) / 1000.
//   - Group keys are the column values as stored, the empty string included
//     (error_code "" groups the successes; user "" groups tokens without a user).
//   - Spend by model groups by (provider, model); ties on cost are broken by
//     model, then provider, ascending. It is not capped at 10.
//   - Answers never hold nil slices or maps: empty figures are [] and a
//     record's rule_hits, flags and metadata are [], [] and {} when empty.
//   - Listings (logs, traces, guardrail events) default to 50 entries when
//     the limit is 0, cap at 1000, and answer a next cursor exactly when more
//     entries follow: every page but the last is full, the last has a nil
//     cursor. A cursor the backend did not issue is an
//     *analytics.QueryError with Param "cursor" (the admin API's 400).
//   - Log and Trace answer (nil, nil) for an unknown id. Records read back
//     carry no Spans or Events.
//   - Traces: a trace is listed when it has a root span; its summary takes
//     start and duration from the root span, status and model from its log
//     record, and spans is the number of spans in the trace. Range and order
//     are on the start, ties broken by trace id descending; the proxy sets
//     the root's start to the record's ts (the data set does the same), so a
//     backend may range and order on either.
//     A span's children are ordered by start, then span id.
//   - Guardrail figures filter on the tenant, gateway and user of the
//     request that hit the rule (events carry the record's user id). ByRule
//     groups by (rule_id, action), ordered by hits descending, then rule_id
//     and action ascending; rule_name is the name on the newest event.
//     Points are hourly buckets when To−From ≤ 90 days, daily beyond (as the
//     default of /stats/timeseries), with requests = hits and the other
//     fields zero. Events list newest first by (ts, id).
//   - Retain removes the tenant's records with ts < before together with
//     their spans (whatever the spans' own start), and the tenant's guardrail
//     events with ts < before.
//   - SpendSince sums every tenant's records of the scope with ts >= start
//     (no upper bound); a scope other than gateway:<id> or user:<id> is an
//     error.
package analyticstest

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/money"
)

// Base is the start of the data set: every record is at or after it and
// before Base+72h.
var Base = time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC)

// SubFrom and SubTo bound a sub-range that is aligned to no minute; the data
// set holds a record at exactly SubFrom (included in the range) and one at
// exactly SubTo (excluded).
var (
	SubFrom = Base.Add(6*time.Hour + 30*time.Minute + 15*time.Second + 250*time.Millisecond)
	SubTo   = Base.Add(54*time.Hour + 7*time.Second)
)

// RetainCut is the cut-off of the suite's Retain test. The data set holds
// a record of t-alpha 1 ms before it whose attempt spans start after it.
var RetainCut = Base.Add(36*time.Hour + 123*time.Millisecond)

// renamedAt is when rule r-competitors was renamed: its events before carry
// the old name, so that by-rule stats must take the newest event's name.
var renamedAt = Base.Add(48 * time.Hour)

type tenantSpec struct {
	id       string
	weight   int
	gateways []string
	users    []string // "" is a token without a user
}

var tenants = []tenantSpec{
	{"t-alpha", 50, []string{"gw-alpha-1", "gw-alpha-2", "gw-alpha-3"},
		[]string{"", "u-alpha-01", "u-alpha-02", "u-alpha-03", "u-alpha-04", "u-alpha-05", "u-alpha-06",
			"u-alpha-07", "u-alpha-08", "u-alpha-09", "u-alpha-10", "u-alpha-11", "u-alpha-12"}},
	{"t-beta", 35, []string{"gw-beta-1", "gw-beta-2"}, []string{"", "u-beta-1", "u-beta-2", "u-beta-3"}},
	{"t-gamma", 15, []string{"gw-gamma-1"}, []string{"u-gamma-1", "u-gamma-2"}},
}

type modelSpec struct {
	provider, model string
	in, out         money.PerMTok // 0: unpriced
}

// models holds 15 (provider, model) pairs: gpt-4o-mini under two priced
// providers, mistral-small under two unpriced ones, and a third unpriced
// model, so that spend by model has ties on cost and on model.
var models = []modelSpec{
	{"openai", "gpt-4o", 2_500_000_000, 10_000_000_000},
	{"openai", "gpt-4o-mini", 150_000_000, 600_000_000},
	{"azure", "gpt-4o-mini", 165_000_000, 660_000_000},
	{"openai", "o3-mini", 1_100_000_000, 4_400_000_000},
	{"openai", "text-embedding-3-small", 20_000_000, 0},
	{"anthropic", "claude-3-5-sonnet", 3_000_000_000, 15_000_000_000},
	{"anthropic", "claude-3-5-haiku", 800_000_000, 4_000_000_000},
	{"anthropic", "claude-3-opus", 15_000_000_000, 75_000_000_000},
	{"gemini", "gemini-1.5-flash", 75_000_000, 300_000_000},
	{"gemini", "gemini-1.5-pro", 1_250_000_000, 5_000_000_000},
	{"mistral", "mistral-large", 2_000_000_000, 6_000_000_000},
	{"mistral", "mistral-small", 0, 0},
	{"ollama", "mistral-small", 0, 0},
	{"ollama", "llama-3.1-8b", 0, 0},
	{"groq", "llama-3.1-70b", 590_000_000, 790_000_000},
}

type ruleSpec struct{ id, name, kind, action string }

var rules = []ruleSpec{
	{"r-pii", "PII", "pii", "redact"},
	{"r-secrets", "Secrets", "regex", "block"},
	{"r-profanity", "Profanity", "wordlist", "flag"},
	{"r-pii", "PII", "pii", "flag"},
	{"r-competitors", "Competitor names", "wordlist", "flag"},
}

type statusSpec struct {
	status int
	weight int
	codes  []string
}

var statuses = []statusSpec{
	{200, 72, []string{""}},
	{400, 6, []string{"invalid_request", "upstream_error"}},
	{429, 7, []string{"rate_limit_exceeded", "budget_exceeded"}},
	{499, 5, []string{"client_closed_request"}},
	{502, 7, []string{"upstream_error"}},
	{504, 3, []string{"upstream_timeout"}},
}

// Dataset is the suite's data: 2,000 records over 3 tenants and ~3 days.
func Dataset() []*analytics.Record { return Generate(1, 2000) }

// Generate returns n deterministic records (seeded by seed) with their
// spans and guardrail events, at millisecond timestamps in [Base, Base+72h).
// For n > 5, records 3 and 4 (of t-alpha) are at exactly SubFrom and SubTo
// record 5 at exactly Base+24h and record 6 just before RetainCut; every
// 25th record shares its timestamp, tenant and gateway with the one before
// it.
func Generate(seed uint64, n int) []*analytics.Record {
	g := &gen{rng: rand.New(rand.NewPCG(seed, 0x5eed)), ids: map[string]bool{}}
	recs := make([]*analytics.Record, 0, n)
	var prev *analytics.Record
	for i := range n {
		r := g.record(i, prev)
		recs = append(recs, r)
		prev = r
	}
	return recs
}

// Batches splits recs into batches of size records, in a fixed shuffled
// order, with ids prefix-000, prefix-001, ….
func Batches(recs []*analytics.Record, size int, prefix string) []*analytics.Batch {
	order := make([]*analytics.Record, len(recs))
	copy(order, recs)
	rng := rand.New(rand.NewPCG(7, 7))
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var out []*analytics.Batch
	for i := 0; i < len(order); i += size {
		end := min(i+size, len(order))
		out = append(out, &analytics.Batch{ID: fmt.Sprintf("%s-%03d", prefix, len(out)), Records: order[i:end]})
	}
	return out
}

type gen struct {
	rng *rand.Rand
	ids map[string]bool
}

func (g *gen) hex(n int) string {
	for {
		b := make([]byte, n/2)
		for i := range b {
			b[i] = byte(g.rng.UintN(256))
		}
		s := hex.EncodeToString(b)
		if !g.ids[s] {
			g.ids[s] = true
			return s
		}
	}
}

func (g *gen) pct(p int) bool { return g.rng.IntN(100) < p }

func pick[T any](g *gen, xs []T) T { return xs[g.rng.IntN(len(xs))] }

func (g *gen) tenant() tenantSpec {
	n := g.rng.IntN(100)
	for _, t := range tenants {
		if n < t.weight {
			return t
		}
		n -= t.weight
	}
	return tenants[0]
}

func (g *gen) status() (int, string) {
	n := g.rng.IntN(100)
	for _, s := range statuses {
		if n < s.weight {
			return s.status, pick(g, s.codes)
		}
		n -= s.weight
	}
	return 200, ""
}

func (g *gen) record(i int, prev *analytics.Record) *analytics.Record {
	ten := g.tenant()
	gw := pick(g, ten.gateways)
	ts := Base.Add(time.Duration(g.rng.Int64N(int64(72*time.Hour/time.Millisecond))) * time.Millisecond)
	switch {
	case i == 3:
		ten, gw, ts = tenants[0], "gw-alpha-2", SubFrom
	case i == 4:
		ten, gw, ts = tenants[0], "gw-alpha-2", SubTo
	case i == 5:
		ts = Base.Add(24 * time.Hour)
	case i == 6:
		ten, gw, ts = tenants[0], "gw-alpha-1", RetainCut.Add(-time.Millisecond)
	case i%25 == 0 && prev != nil:
		for _, t := range tenants {
			if t.id == prev.TenantID {
				ten = t
			}
		}
		gw, ts = prev.GatewayID, prev.TS
	}
	user := pick(g, ten.users)
	m := pick(g, models)
	status, code := g.status()
	if i == 6 {
		status, code = 502, "upstream_error"
	}
	r := &analytics.Record{
		ID: "req_" + g.hex(20), TS: ts, TenantID: ten.id, GatewayID: gw, UserID: user,
		Provider: m.provider, Model: m.model, Status: status, ErrorCode: code,
		Route:     pick(g, []string{"chat/completions", "messages", "embeddings", "responses"}),
		ClientIP:  fmt.Sprintf("10.%d.%d.%d", g.rng.IntN(4), g.rng.IntN(256), g.rng.IntN(256)),
		UserAgent: pick(g, []string{"openai-python/1.54.0", "anthropic-typescript/0.30.1", "curl/8.5.0", ""}),
		RuleHits:  []string{}, Flags: []string{}, Metadata: map[string]string{},
	}
	// The operation follows the route (no draw: the data set stays as it
	// was); one record in 17 has none, as records written before the
	// field existed.
	r.Operation = map[string]string{"chat/completions": "chat", "messages": "messages",
		"embeddings": "embeddings", "responses": "responses"}[r.Route]
	if i%17 == 0 {
		r.Operation = ""
	}
	// An error's message follows its code (no draw); records of every
	// fourth position have none, as records written before the field.
	if code != "" && i%4 != 3 {
		r.ErrorMessage = "refused or failed: " + code
	}
	// A stream that failed after its answer began keeps status 200 with
	// the code and message of its closing error event (no draw): an error
	// below 400, for the log filter "errors".
	if status == 200 && i%41 == 13 {
		r.ErrorCode, r.ErrorMessage = "upstream_error", "the stream ended early: upstream_error"
	}
	if user == "" {
		r.TokenID = "tok-svc-" + gw
	} else {
		r.TokenID = "tok-" + user
	}
	// Cache and latency.
	if status == 200 {
		r.Cache = pick(g, []string{"HIT", "HIT", "MISS", "MISS", "MISS", "MISS", "BYPASS", "BYPASS", ""})
	} else {
		r.Cache = pick(g, []string{"MISS", "BYPASS", ""})
	}
	if r.Cache == "HIT" {
		r.LatencyMS = 1 + g.rng.Int64N(40)
		r.TTFBMS = r.LatencyMS
	} else {
		r.LatencyMS = 20 + g.rng.Int64N(8000)
		r.TTFBMS = r.LatencyMS / (1 + g.rng.Int64N(4))
	}
	// Usage and cost.
	switch status {
	case 200:
		r.TokensIn = 10 + g.rng.Int64N(4000)
		r.TokensOut = 1 + g.rng.Int64N(1500)
		if g.pct(20) {
			r.CachedTokens = r.TokensIn / 2
		}
	case 499:
		r.TokensIn = 10 + g.rng.Int64N(2000)
		r.TokensOut = g.rng.Int64N(200)
		r.Flags = append(r.Flags, "partial")
	}
	// Cache writes and reasoning tokens (CONTRACT §14) follow the record's
	// position (no draw: the data set stays as it was); the cost keeps its
	// formula, as a reader never reprices a record.
	if status == 200 && i%7 == 1 {
		r.CacheWriteTokens = r.TokensIn / 3
		r.CacheWrite1hTokens = r.CacheWriteTokens / 2
	}
	if status == 200 && i%5 == 2 {
		r.ReasoningTokens = r.TokensOut / 2
	}
	cost := money.Cost(r.TokensIn, m.in) + money.Cost(r.TokensOut, m.out)
	if m.in == 0 && m.out == 0 && r.TokensIn > 0 {
		r.Flags = append(r.Flags, "unpriced")
	}
	if status == 200 && g.pct(6) {
		r.Flags = append(r.Flags, "usage_estimated")
	}
	if r.Cache == "HIT" {
		r.CacheSavedUSD = cost
	} else {
		r.CostUSD = cost
	}
	// Metadata, with a quote-laden value and a dotted key.
	if g.pct(90) {
		r.Metadata["env"] = pick(g, []string{"prod", "prod", "staging", "dev"})
	}
	if g.pct(60) {
		r.Metadata["team"] = pick(g, []string{"search", "chat", `o'brien "ml"`})
	}
	if g.pct(30) {
		r.Metadata["app.version"] = pick(g, []string{"1.2", "1.3"})
	}
	if len(r.Metadata) == 0 && g.pct(50) {
		r.Metadata = nil // a writer may hand in no map at all
	}
	// Bodies, when the gateway logs them.
	if g.pct(70) {
		r.RequestBody = fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"héllo ✓ n°%d, it's \"quoted\""}]}`, m.model, i)
		if status == 200 {
			r.ResponseBody = fmt.Sprintf(`{"id":"chatcmpl-%d","choices":[{"message":{"role":"assistant","content":"hi\nthere"}}]}`, i)
		}
	}
	// Attempts and spans: a root and 1–3 attempts; cache hits and requests
	// refused by a limit have only the root; a few records have no trace.
	switch {
	case r.Cache == "HIT" || code == "budget_exceeded":
		r.Attempts = 0
	default:
		r.Attempts = 1 + g.rng.IntN(3)
	}
	if g.pct(95) || i == 6 {
		r.TraceID = g.hex(32)
		g.spans(r)
	}
	// Content-rule hits.
	if g.pct(12) {
		for j := range 1 + g.rng.IntN(2) {
			rs := pick(g, rules)
			if rs.id == "r-competitors" && r.TS.Before(renamedAt) {
				rs.name = "Competitors"
			}
			r.RuleHits = append(r.RuleHits, rs.id)
			r.Events = append(r.Events, analytics.GuardrailEvent{
				ID: r.ID + "-ev" + strconv.Itoa(j), TS: r.TS, TenantID: r.TenantID, GatewayID: r.GatewayID,
				RequestID: r.ID, RuleID: rs.id, RuleName: rs.name, Kind: rs.kind, Action: rs.action,
				Direction: pick(g, []string{"request", "response"}), Excerpt: "…my key is sk-••••" + strconv.Itoa(j),
			})
		}
	}
	if len(r.RuleHits) == 0 && g.pct(50) {
		r.RuleHits = nil
	}
	if len(r.Flags) == 0 && g.pct(50) {
		r.Flags = nil
	}
	return r
}

// spans appends the root span and one span per attempt, in the order the
// proxy appends them (attempts first, the root last).
func (g *gen) spans(r *analytics.Record) {
	root := g.hex(16)
	at := r.TS.Add(time.Duration(1+g.rng.IntN(3)) * time.Millisecond)
	for n := 1; n <= r.Attempts; n++ {
		d := time.Duration(1+g.rng.Int64N(3_000_000)) * time.Microsecond
		status, code := "ok", "200"
		if n < r.Attempts || r.Status >= 500 {
			status, code = "error", pick(g, []string{"500", "503", "0"})
		}
		// Attempt spans carry their attributes in Span.Fixed, as the
		// gateway's do; root spans in the map.
		sp := analytics.Span{
			TraceID: r.TraceID, SpanID: g.hex(16), ParentID: root, Name: "upstream " + r.Provider,
			Start: at, DurationMS: float64(d.Microseconds()) / 1000, Status: status,
		}
		sp.SetAttr("provider", r.Provider)
		sp.SetAttr("model", r.Model)
		sp.SetAttr("key_alias", "main")
		sp.SetAttr("attempt", strconv.Itoa(n))
		sp.SetAttr("upstream_status", code)
		r.Spans = append(r.Spans, sp)
		// Attempts start on whole milliseconds; a third of them (hedged)
		// at the same instant as the one before.
		if !g.pct(33) {
			at = at.Add(d.Truncate(time.Millisecond) + time.Millisecond)
		}
	}
	status := "ok"
	if r.Status >= 400 {
		status = "error"
	}
	r.Spans = append(r.Spans, analytics.Span{
		TraceID: r.TraceID, SpanID: root, Name: "POST /v1/" + r.Route, Start: r.TS,
		DurationMS: float64(r.LatencyMS) + float64(g.rng.IntN(1000))/1000, Status: status,
		Attributes: map[string]string{"request_id": r.ID, "status": strconv.Itoa(r.Status), "route": r.Route},
	})
}
