package otlp

import (
	"context"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/proxy"
)

// Sluice's own attributes (CONTRACT §13), and the HTTP status.
const (
	attrTenant    = attribute.Key("sluice.tenant")
	attrGateway   = attribute.Key("sluice.gateway")
	attrRequestID = attribute.Key("sluice.request_id")
	// attrOperation is the front door (analytics.Record.Operation): it
	// tells a Messages or Responses call from a chat completion, which
	// share gen_ai.operation.name "chat".
	attrOperation = attribute.Key("sluice.operation")
	attrKeyAlias  = attribute.Key("sluice.key_alias")
	attrStatus    = attribute.Key("http.response.status_code")
)

// Observe exports the spans of the finished request f: a server span for
// the request and, as its children, a client span per upstream attempt,
// with the ids of the record's spans (the admin trace view shows the same
// tree). Nothing from a body is exported but the answer's model and
// finish reasons. Each attribute costs the encoder a few allocations, so
// a span carries the contract's attributes and little else.
func (e *Exporter) Observe(f *proxy.Finished) {
	rec := f.Record
	ctx := context.Background()
	if f.Traceparent != "" {
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": f.Traceparent})
	}
	var root *analytics.Span
	for i := range rec.Spans {
		if rec.Spans[i].ParentID == "" {
			root = &rec.Spans[i]
		}
	}
	start, end := rec.TS, rec.TS.Add(time.Duration(rec.LatencyMS)*time.Millisecond)
	var next *ids
	if root != nil {
		ctx, next = withIDs(ctx, rec.TraceID, root.SpanID)
		start, end = root.Start, spanEnd(root)
	}
	op := operationName(rec.Operation)
	ctx, span := e.tracer.Start(ctx, spanName(op, f.RequestModel), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(start))
	if !span.IsRecording() {
		return // not sampled: nothing else to do
	}
	a := make([]attribute.KeyValue, 0, 16)
	a = append(a, semconv.GenAIOperationNameKey.String(op), attrTenant.String(rec.TenantID), attrGateway.String(f.Gateway),
		attrRequestID.String(rec.ID), attrOperation.String(rec.Operation), // the attempts' too: a[:5]
		semconv.GenAIRequestModel(f.RequestModel), attrStatus.Int(rec.Status))
	if rec.Provider != "" {
		a = append(a, semconv.GenAIProviderNameKey.String(providerName(rec.Provider)))
	}
	model, reasons := f.Answer()
	if model == "" {
		model = rec.Model
	}
	if model != "" {
		a = append(a, semconv.GenAIResponseModel(model))
	}
	if len(reasons) > 0 {
		a = append(a, semconv.GenAIResponseFinishReasons(reasons...))
	}
	if rec.TokensIn > 0 || rec.TokensOut > 0 {
		a = append(a, semconv.GenAIUsageInputTokens(int(rec.TokensIn)), semconv.GenAIUsageOutputTokens(int(rec.TokensOut)))
	}
	if rec.CachedTokens > 0 {
		a = append(a, semconv.GenAIUsageCacheReadInputTokens(int(rec.CachedTokens)))
	}
	if rec.CacheWriteTokens > 0 {
		a = append(a, semconv.GenAIUsageCacheCreationInputTokens(int(rec.CacheWriteTokens)))
	}
	if rec.ReasoningTokens > 0 {
		a = append(a, semconv.GenAIUsageReasoningOutputTokens(int(rec.ReasoningTokens)))
	}
	if rec.Status >= http.StatusBadRequest {
		a = append(a, semconv.ErrorTypeKey.String(errorType(rec)))
		span.SetStatus(codes.Error, rec.ErrorCode)
	}
	span.SetAttributes(a...)
	if root != nil {
		for i := range rec.Spans {
			if s := &rec.Spans[i]; s.ParentID == root.SpanID {
				next.setSpan(s.SpanID)
				e.attempt(ctx, s, a[:5])
			}
		}
	}
	span.End(trace.WithTimestamp(end))
}

// attempt exports the span of one upstream attempt, s, under the request's
// span in ctx, with the request's attributes common (its operation, tenant,
// gateway, request id and door).
func (e *Exporter) attempt(ctx context.Context, s *analytics.Span, common []attribute.KeyValue) {
	sa := func(k string) string { v, _ := s.Attr(k); return v }
	a := make([]attribute.KeyValue, 0, len(common)+5)
	a = append(a, common...)
	a = append(a, semconv.GenAIProviderNameKey.String(providerName(sa("provider"))),
		semconv.GenAIRequestModel(sa("model")), attrKeyAlias.String(sa("key_alias")))
	code, _ := strconv.Atoi(sa("upstream_status"))
	if code > 0 {
		a = append(a, attrStatus.Int(code))
	}
	_, span := e.tracer.Start(ctx, spanName(common[0].Value.AsString(), sa("model")), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(s.Start), trace.WithAttributes(a...))
	if s.Status == "error" {
		t := "connect_error" // no status: the upstream was not reached, or did not answer
		if code > 0 {
			t = strconv.Itoa(code)
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(t))
		span.SetStatus(codes.Error, "upstream "+t)
	}
	span.End(trace.WithTimestamp(spanEnd(s)))
}

// spanEnd is when the stored span s ended.
func spanEnd(s *analytics.Span) time.Time {
	return s.Start.Add(time.Duration(s.DurationMS * float64(time.Millisecond)))
}

// operationName maps a front door's operation (analytics.Op*) to the
// GenAI semantic conventions' gen_ai.operation.name. The Responses and
// Messages doors generate a chat answer ("chat"); a token count and a
// model listing have no conventional name and keep Sluice's.
func operationName(op string) string {
	switch op {
	case analytics.OpChat, analytics.OpResponses, analytics.OpMessages:
		return "chat"
	case analytics.OpCompletions:
		return "text_completion"
	case analytics.OpEmbeddings:
		return "embeddings"
	case analytics.OpModels:
		return "list_models"
	}
	return op
}

// providerName maps a Sluice provider id to the conventions'
// gen_ai.provider.name, when they name it; any other id is kept.
func providerName(id string) string {
	switch id {
	case "azure-openai":
		return "azure.ai.openai"
	case "bedrock":
		return "aws.bedrock"
	case "google":
		return "gcp.gemini"
	case "mistral":
		return "mistral_ai"
	case "xai":
		return "x_ai"
	}
	return id
}

// spanName is the conventions' "{operation} {model}".
func spanName(op, model string) string {
	if model == "" {
		return op
	}
	return op + " " + model
}

// errorType is the request's error.type: its error code, or its status
// when it has none (a stream cut off by its client, 499).
func errorType(rec *analytics.Record) string {
	if rec.ErrorCode != "" {
		return rec.ErrorCode
	}
	return strconv.Itoa(rec.Status)
}

// ids are the trace and span ids the next span must take: the record's,
// so that the exported tree and the admin trace view agree. One request's
// spans share one ids, set before each span starts (setSpan): they are
// started one after the other, by Observe.
type ids struct {
	trace trace.TraceID
	span  trace.SpanID
}

type idsKey struct{}

// withIDs asks recordIDs to give the next span started with ctx (or a
// context made from it) the trace id traceID, when it starts a trace,
// and the span id spanID; setSpan on the ids returned names the next.
func withIDs(ctx context.Context, traceID, spanID string) (context.Context, *ids) {
	v := &ids{}
	_, _ = hex.Decode(v.trace[:], []byte(traceID))
	v.setSpan(spanID)
	return context.WithValue(ctx, idsKey{}, v), v
}

func (v *ids) setSpan(spanID string) {
	v.span = trace.SpanID{}
	_, _ = hex.Decode(v.span[:], []byte(spanID))
}

// recordIDs is the tracer's IDGenerator: the ids withIDs put in the
// context, random ones for a request without (one refused before its
// attempts, which the trace view does not show).
type recordIDs struct{}

// NewIDs implements sdktrace.IDGenerator.
func (recordIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	var sid trace.SpanID
	if v, ok := ctx.Value(idsKey{}).(*ids); ok && v.trace.IsValid() {
		tid, sid = v.trace, v.span
	}
	for !tid.IsValid() {
		randomBytes(tid[:])
	}
	return tid, spanOr(sid)
}

// NewSpanID implements sdktrace.IDGenerator.
func (recordIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	var sid trace.SpanID
	if v, ok := ctx.Value(idsKey{}).(*ids); ok {
		sid = v.span
	}
	return spanOr(sid)
}

func spanOr(id trace.SpanID) trace.SpanID {
	for !id.IsValid() {
		randomBytes(id[:])
	}
	return id
}

func randomBytes(b []byte) {
	for i := 0; i < len(b); i += 8 {
		u := rand.Uint64()
		for j := i; j < len(b) && j < i+8; j++ {
			b[j] = byte(u >> (8 * (j - i)))
		}
	}
}
