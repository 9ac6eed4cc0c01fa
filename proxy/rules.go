package proxy

import (
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/ids"
	"github.com/sluicehq/sluice/internal/rules"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

// Content rules (CONTRACT §7). The rules package matches; this file finds
// the texts of requests and responses, applies the actions and records
// each hit as a guardrail event; rulestream.go does the same for streams.
//
// What is scanned: every string the model reads or writes (rules.Walk),
// in the OpenAI shape the proxy speaks to clients and providers alike —
// every provider's answer is translated to it before the rules see it.
//
// Fail mode: a rule whose scan did not finish — the request's matching
// budget ran out, or the message has more than rules.MaxScanBytes of
// text — is unchecked. An unchecked block or redact rule fails closed:
// the request (or response, or stream) is refused with 400
// content_blocked. An unchecked flag rule fails open: the traffic passes.
// Either way the record has the flag "rules_budget_exceeded" (or
// "rules_truncated") and a guardrail event of kind "budget_exceeded" (or
// "text_too_long") for each unchecked rule.

// maxEvents bounds the guardrail events of one request; rule hits beyond
// it still count in RuleHits and change the traffic, but are not logged
// one by one.
const maxEvents = 100

// ruleSets caches the compiled rules of each gateway for the newest
// snapshot version seen, so that the hot path compiles nothing: the first
// request of a gateway after a configuration change compiles its rules
// once, the others load them. An older snapshot still serving a request
// compiles for that request only.
type ruleSets struct {
	cur atomic.Pointer[ruleGen]
}

type ruleGen struct {
	version int64
	sets    sync.Map // gateway id → *rules.Set; read without locks once stored
}

// ruleSet returns the compiled rules of the call's gateway, nil when it
// has none.
func (h *Inference) ruleSet(c *call) *rules.Set {
	if len(c.gw.Rules) == 0 {
		return nil
	}
	v := c.snap.Version
	g := h.ruleSets.cur.Load()
	for g == nil || g.version < v {
		if h.ruleSets.cur.CompareAndSwap(g, &ruleGen{version: v}) {
			g = h.ruleSets.cur.Load()
			break
		}
		g = h.ruleSets.cur.Load()
	}
	if g.version != v {
		return h.compileRules(c.gw)
	}
	if s, ok := g.sets.Load(c.gw.ID); ok {
		return s.(*rules.Set)
	}
	s, _ := g.sets.LoadOrStore(c.gw.ID, h.compileRules(c.gw))
	return s.(*rules.Set)
}

// compileRules compiles a gateway's rules. The admin API refuses rules
// that do not compile; one that still does not (a row written around it)
// is left out and logged.
func (h *Inference) compileRules(gw *snapshot.Gateway) *rules.Set {
	rs := make([]rules.Rule, len(gw.Rules))
	for i, r := range gw.Rules {
		rs[i] = rules.Rule{ID: r.ID, Name: r.Name, Direction: r.Direction, Kind: r.Kind,
			Patterns: r.Patterns, PII: r.PII, Action: r.Action, CaseSensitive: r.CaseSensitive}
	}
	s, err := rules.Compile(rs)
	if err != nil {
		h.log.Error("content rules left out: they do not compile", "gateway_id", gw.ID, "err", err)
	}
	return s
}

// ruleBudget returns the call's matching budget, made at its first use.
func (h *Inference) ruleBudget(c *call) *rules.Budget {
	if c.ruleBudget == nil && h.cfg.RuleBudget >= 0 {
		d := h.cfg.RuleBudget
		if d == 0 {
			d = rules.DefaultBudget
		}
		c.ruleBudget = rules.NewBudget(d, h.cfg.Now)
	}
	return c.ruleBudget
}

// requestRules applies the gateway's content rules to the request body:
// block answers 400 content_blocked (the provider is never called),
// redact rewrites c.body, flag records a guardrail event.
func (h *Inference) requestRules(c *call) *apierr.Error {
	set := h.ruleSet(c)
	if set.Len() == 0 {
		return nil
	}
	if e := h.logprobsAllowed(c, set); e != nil {
		return e
	}
	if !set.Applies(rules.Request) {
		return nil
	}
	doc, err := rules.Walk(c.body, rules.Message)
	if err != nil {
		// parseBody accepted the body, so this does not happen; a body the
		// rules cannot read is not forwarded unchecked.
		return apierr.New(http.StatusBadRequest, apierr.CodeInvalidJSON, "the request body could not be read for the gateway's content rules")
	}
	out, e := h.applyRules(c, set, rules.Request, c.body, doc)
	if e == nil {
		c.body = out
	}
	return e
}

// logprobsAllowed refuses token log probabilities on a gateway whose
// response rules redact or block: the tokens restate the answer piece by
// piece, so they would carry what the rules remove.
func (h *Inference) logprobsAllowed(c *call, set *rules.Set) *apierr.Error {
	if !set.HasAction(rules.Response, rules.Redact) && !set.HasAction(rules.Response, rules.Block) {
		return nil
	}
	p := h.parsers.Get()
	defer h.parsers.Put(p)
	v, err := p.ParseBytes(c.body)
	if err != nil {
		return nil
	}
	for _, f := range [...]string{"logprobs", "top_logprobs"} {
		x := v.Get(f)
		if x == nil {
			continue
		}
		switch x.Type() {
		case fastjson.TypeNull, fastjson.TypeFalse:
			continue
		case fastjson.TypeNumber:
			if n, _ := x.Int(); n == 0 {
				continue
			}
		}
		return apierr.New(http.StatusBadRequest, apierr.CodeUnsupportedFeature,
			"%s cannot be used on this gateway: its content rules redact or block answers, which token log probabilities would reveal", f).WithParam(f)
	}
	// The Responses API asks for them in "include" (the native door).
	for _, x := range v.GetArray("include") {
		if string(x.GetStringBytes()) == "message.output_text.logprobs" {
			return apierr.New(http.StatusBadRequest, apierr.CodeUnsupportedFeature,
				"include message.output_text.logprobs cannot be used on this gateway: its content rules redact or block answers, which token log probabilities would reveal").WithParam("include")
		}
	}
	return nil
}

// responseRules applies the rules to a complete response body; it returns
// the body to send (redacted) or a block error.
func (h *Inference) responseRules(c *call, body []byte) ([]byte, *apierr.Error) {
	set := h.ruleSet(c)
	if !set.Applies(rules.Response) {
		return body, nil
	}
	doc, err := rules.Walk(body, rules.Message)
	if err != nil {
		// The adapter built this body; it is JSON. Nothing unchecked goes
		// out if it is not.
		return nil, apierr.New(http.StatusBadGateway, apierr.CodeUpstreamError, "provider %s answered a body the gateway's content rules cannot read", c.rec.Provider)
	}
	out, e := h.applyRules(c, set, rules.Response, body, doc)
	if e != nil {
		return nil, e
	}
	return out, nil
}

// applyRules scans the texts of body and applies the actions. It returns
// the body to forward (redacted) or a refusal; when a request is refused,
// c.body becomes the body masked for the log (every hit replaced), since
// it is not forwarded.
func (h *Inference) applyRules(c *call, set *rules.Set, dir string, body []byte, doc *rules.Doc) ([]byte, *apierr.Error) {
	texts := make([]string, len(doc.Texts))
	for i, t := range doc.Texts {
		texts[i] = t.Text
	}
	res := set.Scan(dir, texts, h.ruleBudget(c))
	var block *rules.Hit
	hit := false
	for i, t := range texts {
		hs := res.Hits[i]
		for j := range hs {
			hit = true
			if block == nil && hs[j].Rule.Action == rules.Block {
				block = &hs[j]
			}
		}
		h.recordFindings(c, dir, rules.Findings(t, hs))
	}
	var e *apierr.Error
	switch {
	case block != nil:
		e = blocked(dir, block.Rule)
	default:
		e = h.unchecked(c, dir, res.Unchecked, res.Truncated)
	}
	if e != nil {
		switch {
		case dir == rules.Request && block == nil && uncheckedRedact(res.Unchecked):
			// A redact rule could not check it: what it would have
			// removed may be in it, so it is not logged.
			c.body = nil
		case dir == rules.Request && hit:
			c.body = replaceTexts(body, doc, res.Hits, rules.Masked)
		}
		return nil, e
	}
	if !hit {
		return body, nil
	}
	return replaceTexts(body, doc, res.Hits, rules.Redacted), nil
}

// uncheckedRedact reports whether a redact rule is among rs.
func uncheckedRedact(rs []*rules.Rule) bool {
	for _, r := range rs {
		if r.Action == rules.Redact {
			return true
		}
	}
	return false
}

// replaceTexts returns body with each text rewritten by f.
func replaceTexts(body []byte, doc *rules.Doc, hits [][]rules.Hit, f func(string, []rules.Hit) string) []byte {
	repl := make([]string, len(doc.Texts))
	for i, t := range doc.Texts {
		repl[i] = f(t.Text, hits[i])
	}
	return doc.Replace(body, repl)
}

func blocked(dir string, r *rules.Rule) *apierr.Error {
	return apierr.New(http.StatusBadRequest, apierr.CodeContentBlocked, "the %s was blocked by the content rule %q", dir, r.Name)
}

// unchecked applies the fail mode of the rules whose scan did not finish:
// it records them, and refuses the message when one of them blocks or
// redacts. truncated says why: too much text, else the budget ran out.
func (h *Inference) unchecked(c *call, dir string, rs []*rules.Rule, truncated bool) *apierr.Error {
	if len(rs) == 0 {
		return nil
	}
	flag, kind := "rules_budget_exceeded", "budget_exceeded"
	if truncated {
		flag, kind = "rules_truncated", "text_too_long"
	}
	c.flag(flag)
	var closed *rules.Rule
	for _, r := range rs {
		h.recordUnchecked(c, dir, r, kind)
		if closed == nil && r.Action != rules.Flag {
			closed = r
		}
	}
	if closed == nil {
		return nil
	}
	if truncated {
		return apierr.New(http.StatusBadRequest, apierr.CodeContentBlocked, "the %s has more than %d bytes of text, more than the gateway's content rules check", dir, rules.MaxScanBytes)
	}
	return apierr.New(http.StatusBadRequest, apierr.CodeContentBlocked, "the %s could not be checked by the content rule %q within the gateway's matching time budget", dir, closed.Name)
}

// recordUnchecked records an unchecked rule once per request and
// direction: in RuleHits and as a guardrail event of the given kind.
func (h *Inference) recordUnchecked(c *call, dir string, r *rules.Rule, kind string) {
	for _, ev := range c.rec.Events {
		if ev.RuleID == r.ID && ev.Kind == kind && ev.Direction == dir {
			return
		}
	}
	h.recordFindings(c, dir, []rules.Finding{{Rule: r, Kind: kind}})
}

// flag adds a flag to the record once.
func (c *call) flag(f string) {
	for _, x := range c.rec.Flags {
		if x == f {
			return
		}
	}
	c.rec.Flags = append(c.rec.Flags, f)
}

// recordFindings adds the findings to the record: each rule once in
// RuleHits, each hit as a guardrail event (up to maxEvents).
func (h *Inference) recordFindings(c *call, dir string, found []rules.Finding) {
	if len(found) == 0 {
		return
	}
	now := h.cfg.Now().UTC()
	for _, f := range found {
		seen := false
		for _, id := range c.rec.RuleHits {
			if id == f.Rule.ID {
				seen = true
				break
			}
		}
		if !seen {
			c.rec.RuleHits = append(c.rec.RuleHits, f.Rule.ID)
		}
		if len(c.rec.Events) >= maxEvents {
			c.flag("events_truncated")
			continue
		}
		c.rec.Events = append(c.rec.Events, analytics.GuardrailEvent{
			ID: ids.UUIDv7(), TS: now, TenantID: c.rec.TenantID, GatewayID: c.rec.GatewayID, RequestID: c.rec.ID,
			RuleID: f.Rule.ID, RuleName: f.Rule.Name, Kind: f.Kind, Action: f.Rule.Action, Direction: dir,
			Excerpt: f.Excerpt,
		})
	}
}
