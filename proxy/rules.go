package proxy

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/apierr"
	"github.com/sluicehq/sluice/ids"
	"github.com/sluicehq/sluice/llm"
	"github.com/sluicehq/sluice/rules"
	"github.com/sluicehq/sluice/snapshot"
)

// Content rules (CONTRACT §7). The rules package matches; this file finds
// the text of requests, responses and stream chunks, applies the actions
// and records each hit as a guardrail event.
//
// Fail mode: each message has at most rules.MaxScanBytes of text scanned.
// When it has more, a gateway with block or redact rules in that
// direction refuses it (400 content_blocked: it cannot be checked), and
// one with flag rules only lets it through with the flag
// "rules_truncated".

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

// requestRules applies the gateway's content rules to the request body:
// block answers 400 content_blocked (the provider is never called),
// redact rewrites c.body, flag records a guardrail event.
func (h *Inference) requestRules(c *call) *apierr.Error {
	set := h.ruleSet(c)
	if !set.Applies(rules.Request) {
		return nil
	}
	texts, err := rules.Texts(c.body, rules.RequestFields)
	if err != nil {
		// parseBody accepted the body, so this does not happen; a body the
		// rules cannot read is not forwarded unchecked.
		return apierr.New(400, "invalid_json", "the request body could not be read for the gateway's content rules")
	}
	out, e := h.applyRules(c, set, rules.Request, c.body, texts)
	if e == nil {
		c.body = out
	}
	return e
}

// responseRules applies the rules to a complete response body; it returns
// the body to send (redacted) or a block error.
func (h *Inference) responseRules(c *call, body []byte) ([]byte, *apierr.Error) {
	set := h.ruleSet(c)
	if !set.Applies(rules.Response) {
		return body, nil
	}
	texts, err := rules.Texts(body, rules.ResponseFields)
	if err != nil {
		// The adapter built this body; it is JSON. Nothing unchecked goes
		// out if it is not.
		return nil, apierr.New(502, "upstream_error", "provider %s answered a body the gateway's content rules cannot read", c.rec.Provider)
	}
	out, e := h.applyRules(c, set, rules.Response, body, texts)
	if e != nil {
		return nil, e
	}
	return out, nil
}

// applyRules scans texts of body and applies the actions. It returns the
// body to forward (redacted) or a refusal; when a request is refused,
// c.body becomes the body masked for the log (every hit replaced), since
// it is not forwarded.
func (h *Inference) applyRules(c *call, set *rules.Set, dir string, body []byte, texts []rules.Text) ([]byte, *apierr.Error) {
	sc := set.NewScanner(dir)
	hits := make([][]rules.Hit, len(texts))
	var block *rules.Hit
	hit := false
	for i, t := range texts {
		hits[i] = sc.Scan(t.Text)
		for j := range hits[i] {
			hit = true
			if block == nil && hits[i][j].Rule.Action == rules.Block {
				block = &hits[i][j]
			}
		}
		h.recordFindings(c, dir, rules.Findings(t.Text, hits[i]))
	}
	var e *apierr.Error
	switch {
	case block != nil:
		e = blocked(dir, block.Rule)
	case sc.Truncated():
		e = h.truncated(c, set, dir)
	}
	if e != nil {
		if dir == rules.Request && hit {
			c.body = replaceTexts(body, texts, hits, rules.Masked)
		}
		return nil, e
	}
	if !hit {
		return body, nil
	}
	return replaceTexts(body, texts, hits, rules.Redacted), nil
}

// replaceTexts returns body with each text rewritten by f.
func replaceTexts(body []byte, texts []rules.Text, hits [][]rules.Hit, f func(string, []rules.Hit) string) []byte {
	repl := make([]string, len(texts))
	for i, t := range texts {
		repl[i] = f(t.Text, hits[i])
	}
	return rules.Replace(body, texts, repl)
}

func blocked(dir string, r *rules.Rule) *apierr.Error {
	return apierr.New(400, "content_blocked", "the %s was blocked by the content rule %q", dir, r.Name)
}

// truncated applies the fail mode of a message with more text than the
// rules scan.
func (h *Inference) truncated(c *call, set *rules.Set, dir string) *apierr.Error {
	c.flag("rules_truncated")
	if set.HasAction(dir, rules.Block) || set.HasAction(dir, rules.Redact) {
		return apierr.New(400, "content_blocked", "the %s has more than %d bytes of text, more than the gateway's content rules check", dir, rules.MaxScanBytes)
	}
	return nil
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

// streamFilter applies the response rules to a stream, chunk by chunk.
// Push returns the bytes to send now (possibly held back for redaction
// across chunk boundaries); Flush returns what is held at the end.
type streamFilter interface {
	Push(chunk []byte) (out [][]byte, blocked *apierr.Error)
	Flush() [][]byte
}

// newStreamFilter returns the stream filter of the call, or nil when no
// response rule applies and the answer is not being cached.
func (h *Inference) newStreamFilter(c *call) streamFilter {
	var rs *ruleStream
	if set := h.ruleSet(c); set.Applies(rules.Response) {
		rs = &ruleStream{h: h, c: c, set: set, completions: c.route.op == llm.OpCompletions,
			streams: map[int64]*rules.Stream{}}
	}
	rec := h.streamRecorder(c)
	if rs == nil && rec == nil {
		return nil
	}
	return &chain{rules: rs, rec: rec}
}

// chain runs the rule filter, then the cache recorder.
type chain struct {
	rules *ruleStream
	rec   *recorder
}

func (f *chain) Push(chunk []byte) ([][]byte, *apierr.Error) {
	outs := [][]byte{chunk}
	if f.rules != nil {
		var e *apierr.Error
		if outs, e = f.rules.Push(chunk); e != nil {
			return nil, e
		}
	}
	if f.rec != nil {
		outs = f.rec.observe(outs)
	}
	return outs, nil
}

func (f *chain) Flush() [][]byte {
	var outs [][]byte
	if f.rules != nil {
		outs = f.rules.Flush()
	}
	if f.rec != nil {
		outs = f.rec.observe(outs)
		f.rec.store()
	}
	return outs
}

// ruleStream applies the response rules to the text of each choice of a
// stream with a rules.Stream, which holds back a window of text. Chunks go
// out with their text replaced by what may be sent; a chunk left with
// nothing to say is dropped, and text still held when a choice finishes
// goes out in a chunk of its own just before the finishing one.
type ruleStream struct {
	h           *Inference
	c           *call
	set         *rules.Set
	completions bool
	streams     map[int64]*rules.Stream // by choice index
	order       []int64
	parser      fastjson.Parser
	last        []byte // the latest chunk, the envelope of chunks made at Flush
}

func (f *ruleStream) Push(chunk []byte) ([][]byte, *apierr.Error) {
	texts, err := rules.Texts(chunk, rules.ChunkFields)
	if err != nil {
		return nil, apierr.New(502, "upstream_error", "provider %s sent a stream chunk the gateway's content rules cannot read", f.c.rec.Provider)
	}
	v, err := f.parser.ParseBytes(chunk)
	if err != nil {
		return nil, apierr.New(502, "upstream_error", "provider %s sent a stream chunk the gateway's content rules cannot read", f.c.rec.Provider)
	}
	f.last = append(f.last[:0], chunk...)
	choices := v.GetArray("choices")
	repl := make([]string, len(texts))
	var pre [][]byte
	emptied := len(texts) > 0
	for i, t := range texts {
		st := f.stream(choiceIndex(choices, t.Item))
		out, found, block := st.Push(t.Text)
		if e := f.found(found, block); e != nil {
			return nil, e
		}
		if st.Truncated() {
			if e := f.h.truncated(f.c, f.set, rules.Response); e != nil {
				return nil, e
			}
		}
		repl[i] = out
		if out != "" || t.Text == "" {
			emptied = false
		}
	}
	// A choice that finishes here sends what it holds first.
	for k, ch := range choices {
		if fr := ch.Get("finish_reason"); fr == nil || fr.Type() == fastjson.TypeNull {
			continue
		}
		idx := choiceIndex(choices, k)
		st, ok := f.streams[idx]
		if !ok {
			continue
		}
		out, found, block := st.Flush()
		if e := f.found(found, block); e != nil {
			return nil, e
		}
		delete(f.streams, idx)
		if out == "" {
			continue
		}
		own := false
		for i, t := range texts {
			if t.Item == k {
				repl[i] += out
				own = true
				break
			}
		}
		if !own {
			pre = append(pre, f.chunk(v, idx, out))
		}
	}
	if emptied && onlyText(v) {
		return pre, nil
	}
	return append(pre, rules.Replace(chunk, texts, repl)), nil
}

// Flush sends the text still held at the clean end of the stream.
func (f *ruleStream) Flush() [][]byte {
	if len(f.streams) == 0 {
		return nil
	}
	v, err := f.parser.ParseBytes(f.last)
	if err != nil {
		return nil
	}
	var outs [][]byte
	for _, idx := range f.order {
		st, ok := f.streams[idx]
		if !ok {
			continue
		}
		out, found, block := st.Flush()
		if f.found(found, block) != nil || out == "" {
			// A block cannot first show at the end (the text was all seen
			// before); should it, the held text is not sent.
			continue
		}
		outs = append(outs, f.chunk(v, idx, out))
	}
	f.streams = nil
	return outs
}

func (f *ruleStream) stream(idx int64) *rules.Stream {
	st, ok := f.streams[idx]
	if !ok {
		st = f.set.NewStream(rules.Response)
		f.streams[idx] = st
		f.order = append(f.order, idx)
	}
	return st
}

// found records the findings and turns a block into the error that ends
// the stream.
func (f *ruleStream) found(found []rules.Finding, block *rules.Finding) *apierr.Error {
	f.h.recordFindings(f.c, rules.Response, found)
	if block == nil {
		return nil
	}
	f.h.recordFindings(f.c, rules.Response, []rules.Finding{*block})
	return blocked(rules.Response, block.Rule)
}

// choiceIndex returns the "index" of choices[k], k when it has none.
func choiceIndex(choices []*fastjson.Value, k int) int64 {
	if k >= 0 && k < len(choices) {
		if x := choices[k].Get("index"); x != nil {
			if n, err := x.Int64(); err == nil {
				return n
			}
		}
	}
	return int64(k)
}

// onlyText reports whether a chunk carries nothing but text: no role, no
// tool calls, no finish reason, no usage. Such a chunk whose text is all
// held back is not sent.
func onlyText(v *fastjson.Value) bool {
	if u := v.Get("usage"); u != nil && u.Type() != fastjson.TypeNull {
		return false
	}
	choices := v.GetArray("choices")
	if len(choices) == 0 {
		return false
	}
	for _, ch := range choices {
		o, err := ch.Object()
		if err != nil {
			return false
		}
		only := true
		o.Visit(func(k []byte, x *fastjson.Value) {
			switch string(k) {
			case "index", "text":
			case "delta":
				d, err := x.Object()
				if err != nil || d.Len() != 1 || d.Get("content") == nil {
					only = false
				}
			default:
				if x.Type() != fastjson.TypeNull {
					only = false
				}
			}
		})
		if !only {
			return false
		}
	}
	return true
}

// chunk makes a chunk carrying text for choice idx, in the envelope (id,
// object, created, model) of v.
func (f *ruleStream) chunk(v *fastjson.Value, idx int64, text string) []byte {
	b := appendEnvelope(make([]byte, 0, len(text)+160), v)
	b = append(b, `"choices":[{"index":`...)
	b = strconv.AppendInt(b, idx, 10)
	if f.completions {
		b = append(b, `,"text":`...)
		b = rules.AppendString(b, text)
	} else {
		b = append(b, `,"delta":{"content":`...)
		b = rules.AppendString(b, text)
		b = append(b, '}')
	}
	return append(b, `,"logprobs":null,"finish_reason":null}]}`...)
}

// appendEnvelope appends "{" and the id, object, created, model and
// system_fingerprint members of v, each followed by a comma.
func appendEnvelope(b []byte, v *fastjson.Value) []byte {
	b = append(b, '{')
	for _, k := range [...]string{"id", "object", "created", "model", "system_fingerprint"} {
		x := v.Get(k)
		if x == nil {
			continue
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, `":`...)
		if x.Type() == fastjson.TypeString {
			b = rules.AppendString(b, string(x.GetStringBytes()))
		} else {
			b = x.MarshalTo(b)
		}
		b = append(b, ',')
	}
	return b
}
