// Package analytics holds Sluice's request logs, traces and guardrail
// events, and answers every figure the admin API shows. This file defines
// the records and the shapes of the answers; the backends (embedded and
// ClickHouse) implement the queries.
package analytics

import (
	"cmp"
	"context"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/money"
)

// Query selects the records a figure is computed over.
type Query struct {
	// TenantID limits to one tenant; "" means every tenant (Administrator only).
	TenantID string
	// GatewayID limits to one gateway when set.
	GatewayID string
	// UserID limits to requests made with the user's own tokens (the scope
	// rule for roles below Tenant Administrator).
	UserID string
	From   time.Time
	To     time.Time
}

// Latency holds latency percentiles in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

// Stats are the usage figures of /admin/v1/stats.
type Stats struct {
	From         time.Time `json:"from"`
	To           time.Time `json:"to"`
	Requests     int64     `json:"requests"`
	Errors       int64     `json:"errors"`
	Cached       int64     `json:"cached"`
	TokensIn     int64     `json:"tokens_in"`
	TokensOut    int64     `json:"tokens_out"`
	CostUSD      money.USD `json:"cost_usd"`
	LatencyMS    Latency   `json:"latency_ms"`
	CacheHitRate float64   `json:"cache_hit_rate"`
	// Errors split in two: Refusals the gateway answered itself (no
	// provider was tried, or a content rule blocked the answer: IsRefusal),
	// by reason, most first; UpstreamErrors the rest, requests that
	// reached a provider and failed there (or were cut off on their way).
	UpstreamErrors   int64         `json:"upstream_errors"`
	Refusals         int64         `json:"refusals"`
	RefusalsByReason []ReasonCount `json:"refusals_by_reason"`
	// UnpricedRequests counts the requests answered by a model without a
	// price (flagged unpriced): their cost is 0 for want of a price, not
	// because they were free.
	UnpricedRequests int64 `json:"unpriced_requests"`
}

// ReasonCount is the number of refusals of one reason: the error code the
// client got.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

// UnpricedFlag is the flag of a record answered by a model without a
// price: its cost is 0 for want of a price (CONTRACT §7).
const UnpricedFlag = "unpriced"

// IsUnpriced reports whether rec carries UnpricedFlag.
func IsUnpriced(rec *Record) bool { return slices.Contains(rec.Flags, UnpricedFlag) }

// Priced reports whether the record's cost is what its model's price made
// it: false when it carries UnpricedFlag (cost 0 for want of a price).
func (r *Record) Priced() bool { return !IsUnpriced(r) }

// RefusalSQL is the condition of a refused request over request_logs'
// columns, in SQL both analytics backends read (IsRefusal in Go).
const RefusalSQL = "status >= 400 AND (attempts = 0 OR error_code = 'content_blocked')"

// IsRefusal reports whether rec is an error the gateway answered itself:
// no attempt reached a provider, or a content rule blocked the answer.
func IsRefusal(rec *Record) bool {
	return rec.Status >= 400 && (rec.Attempts == 0 || rec.ErrorCode == "content_blocked")
}

// SetRefusals sets the refusal figures of s from the refusal counts by
// reason (any order), with UpstreamErrors the rest of s.Errors.
func (s *Stats) SetRefusals(by []ReasonCount) {
	slices.SortFunc(by, func(a, b ReasonCount) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return strings.Compare(a.Reason, b.Reason)
	})
	s.Refusals = 0
	for _, r := range by {
		s.Refusals += r.Count
	}
	if by == nil {
		by = []ReasonCount{}
	}
	s.RefusalsByReason, s.UpstreamErrors = by, s.Errors-s.Refusals
}

// Point is one bucket of a time series.
type Point struct {
	TS        time.Time `json:"ts"`
	Requests  int64     `json:"requests"`
	Errors    int64     `json:"errors"`
	TokensIn  int64     `json:"tokens_in"`
	TokensOut int64     `json:"tokens_out"`
	CostUSD   money.USD `json:"cost_usd"`
	// Cached counts the cache hits of the bucket and CacheSavedUSD the
	// cost they saved; LatencyMS are its percentiles (all zero in the
	// points of GuardrailStats, which count hits in Requests).
	Cached        int64     `json:"cached"`
	CacheSavedUSD money.USD `json:"cache_saved_usd"`
	LatencyMS     Latency   `json:"latency_ms"`
}

// Timeseries is /admin/v1/stats/timeseries.
type Timeseries struct {
	Interval string  `json:"interval"`
	Points   []Point `json:"points"`
}

// Group is one row of a grouped analysis.
type Group struct {
	Key       string    `json:"key"`
	Requests  int64     `json:"requests"`
	Errors    int64     `json:"errors"`
	TokensIn  int64     `json:"tokens_in"`
	TokensOut int64     `json:"tokens_out"`
	CostUSD   money.USD `json:"cost_usd"`
	LatencyMS Latency   `json:"latency_ms"`
	// UnpricedRequests counts the group's requests flagged unpriced.
	UnpricedRequests int64 `json:"unpriced_requests"`
}

// Analysis is /admin/v1/stats/analytics.
type Analysis struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	GroupBy string    `json:"group_by"`
	Groups  []Group   `json:"groups"`
}

// ModelSpend is the cost of one model.
type ModelSpend struct {
	Provider  string    `json:"provider"`
	Model     string    `json:"model"`
	Requests  int64     `json:"requests"`
	CostUSD   money.USD `json:"cost_usd"`
	TokensIn  int64     `json:"tokens_in"`
	TokensOut int64     `json:"tokens_out"`
	// UnpricedRequests counts the model's requests flagged unpriced.
	UnpricedRequests int64 `json:"unpriced_requests"`
}

// DaySpend is the cost of one UTC day.
type DaySpend struct {
	Day      string    `json:"day"` // YYYY-MM-DD
	Requests int64     `json:"requests"`
	CostUSD  money.USD `json:"cost_usd"`
}

// Spend is the cost of a gateway or tenant.
type Spend struct {
	From     time.Time    `json:"from"`
	To       time.Time    `json:"to"`
	TotalUSD money.USD    `json:"total_usd"`
	ByModel  []ModelSpend `json:"by_model"`
	ByDay    []DaySpend   `json:"by_day"`
	// UnpricedRequests counts the requests flagged unpriced: TotalUSD
	// leaves them out for want of a price.
	UnpricedRequests int64 `json:"unpriced_requests"`
}

// TenantAnalysis is /admin/v1/tenants/{id}/analytics.
type TenantAnalysis struct {
	From            time.Time `json:"from"`
	To              time.Time `json:"to"`
	Requests        int64     `json:"requests"`
	ErrorRate       float64   `json:"error_rate"`
	CacheSavingsUSD money.USD `json:"cache_savings_usd"`
	TopGateways     []Group   `json:"top_gateways"`
	TopUsers        []Group   `json:"top_users"`
	TopModels       []Group   `json:"top_models"`
}

// Record is one request log.
type Record struct {
	ID           string            `json:"id"`
	TS           time.Time         `json:"ts"`
	TenantID     string            `json:"tenant_id"`
	GatewayID    string            `json:"gateway_id"`
	TokenID      string            `json:"token_id"`
	UserID       string            `json:"user_id"`
	Provider     string            `json:"provider"`
	Model        string            `json:"model"`
	Route        string            `json:"route"`
	Status       int               `json:"status"`
	ErrorCode    string            `json:"error_code"`
	LatencyMS    int64             `json:"latency_ms"`
	TTFBMS       int64             `json:"ttfb_ms"`
	TokensIn     int64             `json:"tokens_in"`
	TokensOut    int64             `json:"tokens_out"`
	CachedTokens int64             `json:"cached_tokens"`
	CostUSD      money.USD         `json:"cost_usd"`
	Cache        string            `json:"cache"`
	Attempts     int               `json:"attempts"`
	RuleHits     []string          `json:"rule_hits"`
	Metadata     map[string]string `json:"metadata"`
	TraceID      string            `json:"trace_id"`
	ClientIP     string            `json:"client_ip"`
	UserAgent    string            `json:"user_agent"`
	RequestBody  string            `json:"request_body,omitempty"`
	ResponseBody string            `json:"response_body,omitempty"`
	// Flags mark what a reader should know: "unpriced" (no price for the
	// model: cost 0), "usage_estimated" (the provider reported no usage),
	// "partial" (a stream ended early), "retry_budget_exhausted" (the
	// provider's retry budget refused a retry).
	Flags []string `json:"flags"`
	// CacheSavedUSD is the cost a cache hit saved.
	CacheSavedUSD money.USD `json:"cache_saved_usd"`
	// Operation names the front door the request came through (CONTRACT
	// §12): chat, completions, embeddings, responses, messages,
	// count_tokens or models. Empty for records written before the field
	// existed.
	Operation string `json:"operation"`
	// CacheWriteTokens are the prompt tokens written to the provider's
	// cache (CONTRACT §14), part of TokensIn as CachedTokens (the reads)
	// are; CacheWrite1hTokens the part of them written for one hour.
	// ReasoningTokens are the output tokens spent reasoning, part of
	// TokensOut. All 0 on records written before the fields existed.
	CacheWriteTokens   int64 `json:"cache_write_tokens"`
	CacheWrite1hTokens int64 `json:"cache_write_1h_tokens"`
	ReasoningTokens    int64 `json:"reasoning_tokens"`
	// ErrorMessage is the message of the error the client got (an error
	// answer, or a stream's closing error event); "" for an answer.
	// Empty on records written before the field existed.
	ErrorMessage string `json:"error_message"`

	// Spans are the trace spans of the request (one per upstream attempt
	// under a root span), written to the trace store with the log.
	Spans []Span `json:"-"`
	// Events are the content-rule hits of the request.
	Events []GuardrailEvent `json:"-"`
}

// The operations of CONTRACT §12: the front door a record's request came
// through (Record.Operation).
const (
	OpChat        = "chat"
	OpCompletions = "completions"
	OpEmbeddings  = "embeddings"
	OpResponses   = "responses"
	OpMessages    = "messages"
	OpCountTokens = "count_tokens"
	OpModels      = "models"
)

// IsOperation reports whether op is one of the operations above.
func IsOperation(op string) bool {
	switch op {
	case OpChat, OpCompletions, OpEmbeddings, OpResponses, OpMessages, OpCountTokens, OpModels:
		return true
	}
	return false
}

// Batch is a set of records written together. Its ID is stable across
// retries, so that a writer can make a retried batch idempotent.
type Batch struct {
	ID      string
	Records []*Record
}

// LogFilter selects request logs (logfilter.go defines what each field
// matches and how the listing is ordered).
type LogFilter struct {
	Query
	Provider string
	Model    string
	Status   int
	// StatusClass matches a class of statuses: "2xx", "4xx", "5xx" (any
	// "Nxx" from 1 to 5), or "errors": every status >= 400 and every
	// record with an error code.
	StatusClass string
	ErrorCode   string
	// TokenID matches the records of one API token.
	TokenID string
	// Operation matches the records of one front door (Record.Operation).
	Operation string
	// Metadata matches logs whose metadata has every key=value given.
	Metadata map[string]string
	// Search matches the records whose id or one of whose metadata values
	// holds it, ASCII letters compared without case.
	Search string
	// LatencyMS and CostUSD (in money.USD units) bound latency_ms and
	// cost_usd, both ends included.
	LatencyMS Bounds
	CostUSD   Bounds
	// Sort orders the listing; the zero LogSort is newest first.
	Sort   LogSort
	Limit  int
	Cursor string
}

// Span is one span of a trace.
type Span struct {
	TraceID    string            `json:"trace_id"`
	SpanID     string            `json:"span_id"`
	ParentID   string            `json:"parent_id"`
	Name       string            `json:"name"`
	Start      time.Time         `json:"start"`
	DurationMS float64           `json:"duration_ms"`
	Status     string            `json:"status"`
	Attributes map[string]string `json:"attributes"`
	// Fixed holds attributes in place, besides Attributes: the gateway
	// sets its own spans' attributes here (SetAttr), which costs no map
	// per span on the request path (issue 17). Slots are filled in order;
	// an empty Key ends them. A key is in one of the two, not both. The
	// stores, the spill and the exporters read both (Attr, Attrs,
	// AttributeMap); spans read back from a store have Attributes only.
	Fixed    [MaxFixedAttrs]SpanAttr `json:"-"`
	Children []*Span                 `json:"children,omitempty"`
}

// MaxFixedAttrs is the room of Span.Fixed: the most attributes the
// gateway gives a span of its own (an attempt has six).
const MaxFixedAttrs = 6

// SpanAttr is one attribute of a span.
type SpanAttr struct{ Key, Value string }

// SetAttr sets the attribute key to value: in Fixed while it has room,
// in Attributes beyond it. key must not be set already.
func (s *Span) SetAttr(key, value string) {
	for i := range s.Fixed {
		if s.Fixed[i].Key == "" {
			s.Fixed[i] = SpanAttr{key, value}
			return
		}
	}
	if s.Attributes == nil {
		s.Attributes = make(map[string]string)
	}
	s.Attributes[key] = value
}

// Attr returns the value of the attribute key, from Fixed or Attributes.
func (s *Span) Attr(key string) (string, bool) {
	for _, a := range s.Fixed {
		if a.Key == "" {
			break
		}
		if a.Key == key {
			return a.Value, true
		}
	}
	v, ok := s.Attributes[key]
	return v, ok
}

// Attrs yields every attribute, those of Fixed first (in their order),
// then those of Attributes (in a map's order).
func (s *Span) Attrs() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, a := range s.Fixed {
			if a.Key == "" {
				break
			}
			if !yield(a.Key, a.Value) {
				return
			}
		}
		for k, v := range s.Attributes {
			if !yield(k, v) {
				return
			}
		}
	}
}

// NumAttrs returns how many attributes s has.
func (s *Span) NumAttrs() int {
	n := len(s.Attributes)
	for _, a := range s.Fixed {
		if a.Key == "" {
			break
		}
		n++
	}
	return n
}

// AttributeMap returns every attribute in one map: Attributes itself
// when Fixed is empty (not a copy), else a new map.
func (s *Span) AttributeMap() map[string]string {
	if s.Fixed[0].Key == "" {
		return s.Attributes
	}
	m := make(map[string]string, s.NumAttrs())
	for k, v := range s.Attrs() {
		m[k] = v
	}
	return m
}

// Trace is a span tree of one request.
type Trace struct {
	ID         string    `json:"id"`
	TenantID   string    `json:"tenant_id"`
	GatewayID  string    `json:"gateway_id"`
	RequestID  string    `json:"request_id"`
	Start      time.Time `json:"start"`
	DurationMS float64   `json:"duration_ms"`
	Root       *Span     `json:"root"`
}

// TraceSummary is one entry of a gateway's trace listing.
type TraceSummary struct {
	ID         string    `json:"id"`
	RequestID  string    `json:"request_id"`
	Start      time.Time `json:"start"`
	DurationMS float64   `json:"duration_ms"`
	Status     int       `json:"status"`
	Model      string    `json:"model"`
	Spans      int       `json:"spans"`
}

// GuardrailEvent is one hit of a content rule.
type GuardrailEvent struct {
	ID        string    `json:"id"`
	TS        time.Time `json:"ts"`
	TenantID  string    `json:"tenant_id"`
	GatewayID string    `json:"gateway_id"`
	RequestID string    `json:"request_id"`
	RuleID    string    `json:"rule_id"`
	RuleName  string    `json:"rule_name"`
	Kind      string    `json:"kind"`
	Action    string    `json:"action"`
	Direction string    `json:"direction"`
	Excerpt   string    `json:"excerpt"`
}

// RuleHits counts the hits of one rule and action.
type RuleHits struct {
	RuleID   string `json:"rule_id"`
	RuleName string `json:"rule_name"`
	Action   string `json:"action"`
	Hits     int64  `json:"hits"`
}

// GuardrailStats are the hits of a gateway's rules over time.
type GuardrailStats struct {
	From   time.Time  `json:"from"`
	To     time.Time  `json:"to"`
	Total  int64      `json:"total"`
	ByRule []RuleHits `json:"by_rule"`
	Points []Point    `json:"points"`
}

// Writer stores batches. Write must be idempotent: writing a batch again
// (after a failure whose outcome is unknown) leaves each record, span and
// event stored exactly once.
type Writer interface {
	Write(ctx context.Context, b *Batch) error
}
