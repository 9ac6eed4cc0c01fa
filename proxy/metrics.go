package proxy

import (
	"cmp"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

// The traffic series of CONTRACT §13 (docs/observability.md). finish
// counts every recorded request once, from its record, so that the
// series agree exactly with the request logs; a 401, which is answered
// and not recorded, counts only in sluice_rejected_total.
//
// Hot path: a request looks its series up in copy-on-write maps (an
// atomic pointer to an immutable map, keyed by a struct of label values
// the request already holds), so it takes no lock and allocates nothing;
// only the first request of a label set takes a mutex, builds the series
// name and copies the map. Integer counters are the library's
// (VictoriaMetrics/metrics, atomic). The histograms and the cost counter
// are this file's: the library prints float sums with %g (six digits),
// which would round a cost or a duration sum of a busy gateway; here the
// sums are integers (milliseconds, nano-dollars) printed exactly at a
// scrape.

// unknownLabel is the value of a gateway, provider, model or operation
// label that is not a configured one (CONTRACT §13: no client can grow
// the set of series).
const unknownLabel = "unknown"

// durationBucketsMS are the upper bounds of the duration and
// time-to-first-token histograms, in milliseconds (5 ms … 5 min); the
// series carry them in seconds (le), as Prometheus expects.
var durationBucketsMS = [...]int64{5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 120000, 300000}

// MetricsConfig configures the traffic series.
type MetricsConfig struct {
	// Set is where the series are registered; nil means a new set, written
	// by Inference.WriteMetrics.
	Set *metrics.Set
	// NoModel drops the model label (--metrics-no-model): tenant-sized
	// deployments with many models keep the series count per gateway
	// small (docs/observability.md).
	NoModel bool
}

// trafficMetrics holds the series of CONTRACT §13 but the breaker gauge
// (proxy/breakers.go).
type trafficMetrics struct {
	set     *metrics.Set
	noModel bool

	requests cowMap[requestKey, *metrics.Counter]
	duration cowMap[durationKey, *histogram]
	ttft     cowMap[gwProvider, *histogram]
	usage    cowMap[usageKey, *usageSeries]
	attempts cowMap[attemptKey, *metrics.Counter]
	rejected cowMap[reasonKey, *metrics.Counter]
	ruleHits cowMap[reasonKey, *metrics.Counter]
	cache    cowMap[reasonKey, *metrics.Counter]
}

// gw is a gateway label's parts: tenant and slug ("tenant/slug" is built
// once per series, not per request).
type gw struct{ tenant, slug string }

type requestKey struct {
	gw
	provider, model, op string
	code                int
}

type durationKey struct {
	gw
	provider, op string
}

type gwProvider struct {
	gw
	provider string
}

type usageKey struct {
	gw
	provider, model string
}

type attemptKey struct{ provider, outcome string }

// reasonKey is a series of one gateway and one more label (reason,
// action or result).
type reasonKey struct {
	gw
	v string
}

// usageSeries are the token counters of a gateway × provider × model and
// its cost in nano-dollars.
type usageSeries struct {
	in, out, cacheRead, cacheWrite, reasoning *metrics.Counter
	nanoUSD                                   atomic.Int64
}

func newTrafficMetrics(cfg MetricsConfig) *trafficMetrics {
	m := &trafficMetrics{set: cfg.Set, noModel: cfg.NoModel}
	if m.set == nil {
		m.set = metrics.NewSet()
	}
	m.set.RegisterMetricsWriter(m.write)
	return m
}

// observe counts one recorded request: c.rec is final. It runs in finish.
func (m *trafficMetrics) observe(c *call) {
	rec := c.rec
	g := gw{unknownLabel, ""}
	if c.gw != nil {
		g = gw{c.gw.TenantID, c.gw.Slug}
	}
	provider := knownProvider(rec.Provider)
	model := m.modelLabel(c, provider)
	op := rec.Operation
	if !analytics.IsOperation(op) {
		op = unknownLabel
	}
	m.requestCounter(requestKey{g, provider, model, op, rec.Status}).Inc()
	m.durationHistogram(durationKey{g, provider, op}).observe(rec.LatencyMS)
	if c.in.stream && c.out.answered {
		m.ttftHistogram(gwProvider{g, provider}).observe(rec.TTFBMS)
	}
	if c.out.billed {
		u, s := c.out.usage, m.usageSeries(usageKey{g, provider, model})
		s.in.Add(int(rec.TokensIn))
		s.out.Add(int(rec.TokensOut))
		s.cacheRead.Add(int(rec.CachedTokens))
		s.cacheWrite.Add(int(u.CacheCreationTokens))
		s.reasoning.Add(int(u.ReasoningTokens))
		s.nanoUSD.Add(int64(rec.CostUSD))
	}
	for i := range rec.Spans {
		sp := &rec.Spans[i]
		if o, _ := sp.Attr("outcome"); o != "" {
			p, _ := sp.Attr("provider")
			m.attemptCounter(attemptKey{knownProvider(p), o}).Inc()
		}
	}
	if c.err != nil {
		if r := rejectReason(c.err); r != "" {
			m.gwCounter(&m.rejected, reasonKey{g, r}, "sluice_rejected_total", "reason").Inc()
		}
	}
	for _, id := range rec.RuleHits {
		m.gwCounter(&m.ruleHits, reasonKey{g, ruleAction(c.gw, id)}, "sluice_rule_hits_total", "action").Inc()
	}
	if r := cacheResult(rec.Cache); r != "" {
		m.gwCounter(&m.cache, reasonKey{g, r}, "sluice_cache_requests_total", "result").Inc()
	}
}

// unauthorized counts a 401, which has no record (CONTRACT §5: an
// unauthenticated caller must not fill the log) and no gateway.
func (m *trafficMetrics) unauthorized() {
	m.gwCounter(&m.rejected, reasonKey{gw{unknownLabel, ""}, "auth"}, "sluice_rejected_total", "reason").Inc()
}

// modelLabel is the record's model when it resolved to a configured
// target — in the snapshot's price table, the catalog, a key's model
// list or a route of the gateway — else "unknown"; "" when the label is
// dropped.
func (m *trafficMetrics) modelLabel(c *call, provider string) string {
	if m.noModel {
		return ""
	}
	model := c.rec.Model
	if model == "" || provider == unknownLabel {
		return unknownLabel
	}
	if c.snap != nil {
		if _, ok := c.snap.Price(provider, model); ok {
			return model
		}
	}
	if _, ok := catalogModels()[catalogKey{provider, model}]; ok {
		return model
	}
	if c.gw != nil && gatewayModel(c.gw, provider, model) {
		return model
	}
	return unknownLabel
}

// gatewayModel reports whether one of the gateway's keys of provider lists
// model, or one of its routes targets provider/model.
func gatewayModel(g *snapshot.Gateway, provider, model string) bool {
	for _, k := range g.Keys[provider] {
		if slices.Contains(k.Models, model) {
			return true
		}
	}
	for _, r := range g.Routes {
		for _, t := range r.Targets {
			if t.Provider == provider && t.Model == model {
				return true
			}
		}
	}
	return false
}

type catalogKey struct{ provider, model string }

// catalogModels is the catalog's models as a set, built once.
var catalogModels = sync.OnceValue(func() map[catalogKey]struct{} {
	ms := catalog.Models()
	set := make(map[catalogKey]struct{}, len(ms))
	for _, m := range ms {
		set[catalogKey{m.Provider, m.ID}] = struct{}{}
	}
	return set
})

// knownProvider is p when it is a provider of the catalog, else
// "unknown".
func knownProvider(p string) string {
	if _, ok := catalog.LookupProvider(p); ok {
		return p
	}
	return unknownLabel
}

// rejectReason is the sluice_rejected_total reason of a refusal by the
// gateway itself, "" for an answer that is not one (an upstream's error,
// a timeout, a client gone).
func rejectReason(e *apierr.Error) string {
	switch e.Code {
	case apierr.CodeRateLimitExceeded, apierr.CodeConcurrencyLimitExceeded:
		return "rate_limit"
	case apierr.CodeBudgetExceeded:
		return "budget"
	case apierr.CodeContentBlocked:
		return "content_blocked"
	case apierr.CodeInvalidJSON, apierr.CodeInvalidRequest, apierr.CodeInvalidPath, apierr.CodeUnknownModel,
		apierr.CodeProviderNotConfigured, apierr.CodeProviderNotSupported, apierr.CodeUnsupportedFeature,
		apierr.CodeNotFound, apierr.CodeMethodNotAllowed, apierr.CodeModelSunset, apierr.CodeBodyTooLarge,
		apierr.CodeUnsupportedMediaType, apierr.CodeHeadersTooLarge:
		return "invalid"
	}
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
		return "auth"
	}
	return ""
}

// cacheResult is the sluice_cache_requests_total result of a record's
// cache field (x-sluice-cache), "" for a request that did not reach the
// cache step.
func cacheResult(cache string) string {
	switch cache {
	case "HIT":
		return "hit"
	case "MISS":
		return "miss"
	case "BYPASS":
		return "bypass"
	}
	return ""
}

// ruleAction is the action of the gateway's rule id: block, redact or
// flag ("unknown" for a rule no longer in the configuration).
func ruleAction(g *snapshot.Gateway, id string) string {
	if g != nil {
		for i := range g.Rules {
			if r := &g.Rules[i]; r.ID == id {
				switch r.Action {
				case "block", "redact", "flag":
					return r.Action
				}
			}
		}
	}
	return unknownLabel
}

// attemptOutcome is the sluice_upstream_attempts_total outcome of an
// upstream attempt that ended with err (nil: it answered).
func attemptOutcome(err error) string {
	if err == nil {
		return "ok"
	}
	pe := providers.AsError(err)
	switch {
	case pe == nil:
		return "fatal"
	case pe.Timeout:
		return "timeout"
	case pe.Status == 0 && !pe.Unsupported:
		return "connect_error"
	case pe.Retryable():
		return "retryable"
	}
	return "fatal"
}

func (m *trafficMetrics) requestCounter(k requestKey) *metrics.Counter {
	if c, ok := m.requests.load(k); ok {
		return c
	}
	return m.requests.add(k, func() *metrics.Counter {
		b := appendGateway([]byte("sluice_requests_total{"), k.gw)
		b = appendPair(b, "provider", k.provider)
		if !m.noModel {
			b = appendPair(b, "model", k.model)
		}
		b = appendPair(b, "operation", k.op)
		b = appendPair(b, "code", strconv.Itoa(k.code))
		return m.set.GetOrCreateCounter(string(append(b, '}')))
	})
}

func (m *trafficMetrics) usageSeries(k usageKey) *usageSeries {
	if s, ok := m.usage.load(k); ok {
		return s
	}
	return m.usage.add(k, func() *usageSeries {
		tokens := func(typ string) *metrics.Counter {
			b := appendGateway([]byte("sluice_tokens_total{"), k.gw)
			b = appendPair(b, "provider", k.provider)
			if !m.noModel {
				b = appendPair(b, "model", k.model)
			}
			b = appendPair(b, "type", typ)
			return m.set.GetOrCreateCounter(string(append(b, '}')))
		}
		return &usageSeries{in: tokens("input"), out: tokens("output"), cacheRead: tokens("cache_read"),
			cacheWrite: tokens("cache_write"), reasoning: tokens("reasoning")}
	})
}

func (m *trafficMetrics) attemptCounter(k attemptKey) *metrics.Counter {
	if c, ok := m.attempts.load(k); ok {
		return c
	}
	return m.attempts.add(k, func() *metrics.Counter {
		b := appendPair([]byte("sluice_upstream_attempts_total{"), "provider", k.provider)
		b = appendPair(b, "outcome", k.outcome)
		return m.set.GetOrCreateCounter(string(append(b, '}')))
	})
}

func (m *trafficMetrics) gwCounter(f *cowMap[reasonKey, *metrics.Counter], k reasonKey, name, label string) *metrics.Counter {
	if c, ok := f.load(k); ok {
		return c
	}
	return f.add(k, func() *metrics.Counter {
		b := appendGateway(append([]byte(name), '{'), k.gw)
		b = appendPair(b, label, k.v)
		return m.set.GetOrCreateCounter(string(append(b, '}')))
	})
}

func (m *trafficMetrics) durationHistogram(k durationKey) *histogram {
	if h, ok := m.duration.load(k); ok {
		return h
	}
	return m.duration.add(k, func() *histogram {
		b := appendGateway(nil, k.gw)
		b = appendPair(b, "provider", k.provider)
		b = appendPair(b, "operation", k.op)
		return &histogram{name: "sluice_request_duration_seconds", labels: string(b)}
	})
}

func (m *trafficMetrics) ttftHistogram(k gwProvider) *histogram {
	if h, ok := m.ttft.load(k); ok {
		return h
	}
	return m.ttft.add(k, func() *histogram {
		b := appendPair(appendGateway(nil, k.gw), "provider", k.provider)
		return &histogram{name: "sluice_time_to_first_token_seconds", labels: string(b)}
	})
}

// appendGateway appends the gateway label, first of a label list.
func appendGateway(b []byte, g gw) []byte {
	b = append(b, `gateway="`...)
	b = appendLabel(b, g.tenant)
	if g.slug != "" {
		b = append(b, '/')
		b = appendLabel(b, g.slug)
	}
	return append(b, '"')
}

// appendPair appends `,name="value"` (without the comma after a "{").
func appendPair(b []byte, name, v string) []byte {
	if len(b) > 0 && b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, name...)
	b = append(b, `="`...)
	b = appendLabel(b, v)
	return append(b, '"')
}

// write writes the histograms and sluice_cost_usd_total at a scrape.
func (m *trafficMetrics) write(w io.Writer) {
	b := writeHistograms(nil, m.duration.all(), m.ttft.all())
	usage := m.usage.all()
	keys := make([]usageKey, 0, len(usage))
	for k := range usage {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b usageKey) int {
		return cmp.Or(strings.Compare(a.tenant, b.tenant), strings.Compare(a.slug, b.slug),
			strings.Compare(a.provider, b.provider), strings.Compare(a.model, b.model))
	})
	for i, k := range keys {
		if i == 0 {
			b = append(b, "# TYPE sluice_cost_usd_total counter\n"...)
		}
		b = append(b, "sluice_cost_usd_total{"...)
		b = appendGateway(b, k.gw)
		b = appendPair(b, "provider", k.provider)
		if !m.noModel {
			b = appendPair(b, "model", k.model)
		}
		b = append(b, "} "...)
		b = strconv.AppendFloat(b, float64(usage[k].nanoUSD.Load())/money.PerDollar, 'g', -1, 64)
		b = append(b, '\n')
	}
	_, _ = w.Write(b)
}

// WriteMetrics writes the traffic series and the breaker gauges in the
// Prometheus text format. With a MetricsConfig.Set of its own, the
// process writes that set instead (the traffic series are registered in
// it) and the breaker gauges with WriteBreakerMetrics.
func (h *Inference) WriteMetrics(w io.Writer) {
	h.metrics.set.WritePrometheus(w)
	h.WriteBreakerMetrics(w)
}
