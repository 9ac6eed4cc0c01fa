package analytics

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/internal/money"
)

// The spill's record format. A frame's payload (see spill.go) is the JSON
// of one spillRecord. The spill owns this type: Record is the admin API's
// shape, and a change there must not change what is on disk, nor make a
// file written by an earlier build unreadable.
//
// Versions:
//
//	0  the first format, written before the spill had a type of its own:
//	   {"batch","cost_nanos","saved_nanos","record":<Record's JSON of that
//	   time>,"spans","events"}, no "v". Costs are read from the nano-dollar
//	   fields (the record's cost_usd and cache_saved_usd are floats).
//	1  {"v":1,"batch", the record's fields at the top level under the names
//	   version 0's record had, "cost_nanos","saved_nanos","spans","events"}.
//	2  version 1 and "operation" (the record's front door). A version 1
//	   frame reads with an empty operation (testdata/spill-v1.seg).
//	3  version 2 and "cache_write_tokens", "cache_write_1h_tokens",
//	   "reasoning_tokens" (CONTRACT §14). Older frames read them as 0
//	   (testdata/spill-v2.seg).
//	4  version 3 and "error_message" (the error the client got). Older
//	   frames read it as "".
//
// A build reads every version up to spillVersion and writes spillVersion.
// A frame of a later version (a newer build wrote the file, then an older
// one started on the directory) is not decoded: the replay of its segment
// stops with a *spillVersionError and the file stays on disk, for a build
// that reads it (or for inspection).
//
// To change the format: add the field (or the new meaning) to spillRecord,
// bump spillVersion, keep reading the older versions (decode), and add a
// golden segment of the old version under testdata with a replay test.
const spillVersion = 4

// spillRecord is a spilled record: its fields, the batch it was attempted
// under (Batch: replay writes those records again under the same id, so
// the writer's idempotency applies) and its spans and guardrail events,
// which Record's JSON leaves out.
type spillRecord struct {
	V     int    `json:"v"`
	Batch string `json:"batch,omitempty"`
	spillFields
	// CostNanos and SavedNanos are Record.CostUSD and CacheSavedUSD in
	// nano-dollars, exact (Record's JSON writes dollars as a float).
	CostNanos  int64        `json:"cost_nanos"`
	SavedNanos int64        `json:"saved_nanos"`
	Spans      []spillSpan  `json:"spans,omitempty"`
	Events     []spillEvent `json:"events,omitempty"`
	// V0 is where version 0 kept the record's fields; nil in version 1.
	V0 *spillFields `json:"record,omitempty"`
}

// spillFields are a record's own fields, under the JSON names version 0
// wrote them with.
type spillFields struct {
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
	Cache        string            `json:"cache"`
	Attempts     int               `json:"attempts"`
	RuleHits     []string          `json:"rule_hits"`
	Metadata     map[string]string `json:"metadata"`
	TraceID      string            `json:"trace_id"`
	ClientIP     string            `json:"client_ip"`
	UserAgent    string            `json:"user_agent"`
	RequestBody  string            `json:"request_body,omitempty"`
	ResponseBody string            `json:"response_body,omitempty"`
	Flags        []string          `json:"flags"`
	Operation    string            `json:"operation,omitempty"`
	// Version 3.
	CacheWriteTokens   int64 `json:"cache_write_tokens,omitempty"`
	CacheWrite1hTokens int64 `json:"cache_write_1h_tokens,omitempty"`
	ReasoningTokens    int64 `json:"reasoning_tokens,omitempty"`
	// Version 4.
	ErrorMessage string `json:"error_message,omitempty"`
}

// spillSpan is a spilled Span, under the names version 0 wrote.
type spillSpan struct {
	TraceID    string            `json:"trace_id"`
	SpanID     string            `json:"span_id"`
	ParentID   string            `json:"parent_id"`
	Name       string            `json:"name"`
	Start      time.Time         `json:"start"`
	DurationMS float64           `json:"duration_ms"`
	Status     string            `json:"status"`
	Attributes map[string]string `json:"attributes"`
	Children   []*spillSpan      `json:"children,omitempty"`
}

// spillEvent is a spilled GuardrailEvent, under the names version 0 wrote.
type spillEvent struct {
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

// spillVersionError is a frame of a format this build does not read.
type spillVersionError struct{ version int }

func (e *spillVersionError) Error() string {
	return fmt.Sprintf("spill record format version %d is newer than this build reads (up to %d)", e.version, spillVersion)
}

// toSpill returns the spilled form of rec in the current version.
func toSpill(rec *Record, batchID string) *spillRecord {
	sr := &spillRecord{
		V: spillVersion, Batch: batchID,
		spillFields: spillFields{
			ID: rec.ID, TS: rec.TS, TenantID: rec.TenantID, GatewayID: rec.GatewayID, TokenID: rec.TokenID,
			UserID: rec.UserID, Provider: rec.Provider, Model: rec.Model, Route: rec.Route, Status: rec.Status,
			ErrorCode: rec.ErrorCode, LatencyMS: rec.LatencyMS, TTFBMS: rec.TTFBMS, TokensIn: rec.TokensIn,
			TokensOut: rec.TokensOut, CachedTokens: rec.CachedTokens, Cache: rec.Cache, Attempts: rec.Attempts,
			RuleHits: rec.RuleHits, Metadata: rec.Metadata, TraceID: rec.TraceID, ClientIP: rec.ClientIP,
			UserAgent: rec.UserAgent, RequestBody: rec.RequestBody, ResponseBody: rec.ResponseBody, Flags: rec.Flags,
			Operation: rec.Operation, CacheWriteTokens: rec.CacheWriteTokens, CacheWrite1hTokens: rec.CacheWrite1hTokens,
			ReasoningTokens: rec.ReasoningTokens, ErrorMessage: rec.ErrorMessage,
		},
		CostNanos: int64(rec.CostUSD), SavedNanos: int64(rec.CacheSavedUSD),
	}
	if len(rec.Spans) > 0 {
		sr.Spans = make([]spillSpan, len(rec.Spans))
		for i := range rec.Spans {
			sr.Spans[i] = toSpillSpan(&rec.Spans[i])
		}
	}
	if len(rec.Events) > 0 {
		sr.Events = make([]spillEvent, len(rec.Events))
		for i, e := range rec.Events {
			sr.Events[i] = spillEvent(e)
		}
	}
	return sr
}

func toSpillSpan(s *Span) spillSpan {
	out := spillSpan{TraceID: s.TraceID, SpanID: s.SpanID, ParentID: s.ParentID, Name: s.Name, Start: s.Start,
		DurationMS: s.DurationMS, Status: s.Status, Attributes: s.AttributeMap()}
	if s.Children != nil {
		out.Children = make([]*spillSpan, len(s.Children))
		for i, c := range s.Children {
			if c != nil {
				cs := toSpillSpan(c)
				out.Children[i] = &cs
			}
		}
	}
	return out
}

// record returns the record sr holds, of any version this build reads.
func (sr *spillRecord) record() (*Record, error) {
	f := &sr.spillFields
	switch {
	case sr.V > spillVersion:
		return nil, &spillVersionError{version: sr.V}
	case sr.V < 0:
		return nil, fmt.Errorf("spill record format version %d", sr.V)
	case sr.V == 0:
		if sr.V0 == nil {
			return nil, errors.New("version 0 envelope without a record")
		}
		f = sr.V0
	}
	rec := &Record{
		ID: f.ID, TS: f.TS, TenantID: f.TenantID, GatewayID: f.GatewayID, TokenID: f.TokenID, UserID: f.UserID,
		Provider: f.Provider, Model: f.Model, Route: f.Route, Status: f.Status, ErrorCode: f.ErrorCode,
		LatencyMS: f.LatencyMS, TTFBMS: f.TTFBMS, TokensIn: f.TokensIn, TokensOut: f.TokensOut,
		CachedTokens: f.CachedTokens, CostUSD: money.USD(sr.CostNanos), Cache: f.Cache, Attempts: f.Attempts,
		RuleHits: f.RuleHits, Metadata: f.Metadata, TraceID: f.TraceID, ClientIP: f.ClientIP,
		UserAgent: f.UserAgent, RequestBody: f.RequestBody, ResponseBody: f.ResponseBody, Flags: f.Flags,
		CacheSavedUSD: money.USD(sr.SavedNanos), Operation: f.Operation,
		CacheWriteTokens: f.CacheWriteTokens, CacheWrite1hTokens: f.CacheWrite1hTokens, ReasoningTokens: f.ReasoningTokens,
		ErrorMessage: f.ErrorMessage,
	}
	if sr.Spans != nil {
		rec.Spans = make([]Span, len(sr.Spans))
		for i := range sr.Spans {
			rec.Spans[i] = sr.Spans[i].span()
		}
	}
	if sr.Events != nil {
		rec.Events = make([]GuardrailEvent, len(sr.Events))
		for i, e := range sr.Events {
			rec.Events[i] = GuardrailEvent(e)
		}
	}
	return rec, nil
}

func (s *spillSpan) span() Span {
	out := Span{TraceID: s.TraceID, SpanID: s.SpanID, ParentID: s.ParentID, Name: s.Name, Start: s.Start,
		DurationMS: s.DurationMS, Status: s.Status, Attributes: s.Attributes}
	if s.Children != nil {
		out.Children = make([]*Span, len(s.Children))
		for i, c := range s.Children {
			if c != nil {
				cs := c.span()
				out.Children[i] = &cs
			}
		}
	}
	return out
}

// encodeSpill returns the payload of rec's frame.
func encodeSpill(rec *Record, batchID string) ([]byte, error) {
	return json.Marshal(toSpill(rec, batchID))
}

// decodeSpill reads the record of a frame's payload and the batch it was
// spilled with. A payload of a later version is a *spillVersionError, even
// when its JSON no longer fits spillRecord.
func decodeSpill(payload []byte) (*Record, string, error) {
	var sr spillRecord
	if err := json.Unmarshal(payload, &sr); err != nil {
		var v struct {
			V int `json:"v"`
		}
		if json.Unmarshal(payload, &v) == nil && v.V > spillVersion {
			return nil, "", &spillVersionError{version: v.V}
		}
		return nil, "", err
	}
	rec, err := sr.record()
	if err != nil {
		return nil, "", err
	}
	return rec, sr.Batch, nil
}
