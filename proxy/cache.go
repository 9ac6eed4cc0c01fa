package proxy

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/rules"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/respcache"
	"github.com/sluicehq/sluice/proxy/sse"
)

// The exact-match response cache (CONTRACT §7). cacheLookup runs after
// the request rules (the key is over the body as it would be forwarded,
// redactions included) and before admit: a hit reaches no provider, so it
// reserves no budget, counts against no rate limit and costs 0; its
// record carries the cost it saved at the current price.

// cacheCall is what cacheLookup decided for the rest of the call.
type cacheCall struct {
	key respcache.Key
	ttl time.Duration
	// store is true on a MISS: a 200 answer is kept.
	store bool
	// wantUsage is the client's own stream_options.include_usage: on a
	// streamed MISS the gateway asks for the usage chunk to store the
	// usage with the answer, and drops it again when the client did not.
	wantUsage bool
}

// newLocalCache is the in-process store of a handler configured without
// one.
func newLocalCache(now func() time.Time) respcache.Store {
	l, err := respcache.NewLocal(respcache.LocalConfig{Now: now})
	if err != nil {
		panic("proxy: the default cache configuration is invalid: " + err.Error()) // a programming error
	}
	return l
}

// cacheLookup answers the request from the response cache when it can
// (x-sluice-cache HIT, replayed as SSE for a stream request) and reports
// whether it did. It sets c.cacheState to HIT, MISS or BYPASS. The cache
// headers were validated by the prepare step (readHeaders).
func (h *Inference) cacheLookup(c *call) bool {
	c.cacheState = "BYPASS"
	ttlSeconds := c.hdr.cacheTTL
	if !c.gw.Cache.Enabled || c.hdr.skipCache || c.route.op == llm.OpCountTokens {
		// A token count is no answer of a model: it is not cached.
		return false
	}
	// The header may only shorten the gateway's TTL: a client must not
	// keep answers longer than the gateway's owner allows.
	ttl := time.Duration(c.gw.Cache.TTLSeconds) * time.Second
	if short := time.Duration(ttlSeconds) * time.Second; ttlSeconds > 0 && short < ttl {
		ttl = short
	}
	if ttl <= 0 {
		return false
	}
	key, err := respcache.NewKey(cacheScope(c, &c.plan), c.body)
	if err != nil {
		return false // parseBody accepted it: does not happen
	}
	c.cacheState = "MISS"
	c.cache = cacheCall{key: key, ttl: ttl, store: true, wantUsage: c.in.includeUsage}
	if ent, ok := h.cfg.Cache.Get(context.Background(), key); ok {
		c.cacheState = "HIT"
		c.cache.store = false
		h.serveHit(c, ent)
		return true
	}
	if c.in.stream && c.in.wire == llm.WireOpenAIChat {
		c.in.includeUsage = true // the recorder drops the extra chunk again
	}
	return false
}

// cacheScope is where the request goes: its gateway, operation (per door)
// and target. A route is named with its targets, so that changing them
// does not serve answers of the old ones.
func cacheScope(c *call, p *plan) respcache.Scope {
	s := respcache.Scope{TenantID: c.gw.TenantID, GatewayID: c.gw.ID, Op: cacheOp(c.route)}
	if c.in.wire != llm.WireOpenAIChat && c.in.stream {
		// A native answer is stored as it came, plain or as its events:
		// the two forms are separate entries (proxy/rulestream_native.go).
		s.Op += "+stream"
	}
	if c.rec.Route == "" && len(p.targets) == 1 {
		s.Provider, s.Model = p.targets[0].Provider, p.targets[0].Model
		return s
	}
	var b strings.Builder
	for i, t := range p.targets {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(t.Provider + "/" + t.Model + "@" + t.KeyAlias)
	}
	s.Provider, s.Model = "route:"+c.rec.Route+":"+p.strategy, b.String()
	return s
}

// cacheOp is the operation of the cache key: the cache is keyed per door
// (issue 14), so that the same prompt through /compat/v1/messages or
// /compat/responses does not hit the entry of /compat/chat/completions
// — their requests translate to the same chat body, but what each door
// carries (and drops) of its client's request differs. The chat door's
// operation is unchanged, so its stored keys stay valid.
func cacheOp(r route) string {
	switch r.kind {
	case kindMessages:
		return "chat+messages"
	case kindResponses:
		return "chat+responses"
	}
	return r.op.String()
}

// serveHit answers with a stored answer. The response rules apply to it
// as to any answer (they may have changed since it was stored).
func (h *Inference) serveHit(c *call, ent *respcache.Entry) {
	c.rec.Provider, c.rec.Model = ent.Provider, ent.Model
	native := c.in.wire != llm.WireOpenAIChat
	var body []byte
	var blocked *apierr.Error
	if native && c.in.stream {
		body, blocked = h.nativeHit(c, ent.Body)
	} else {
		body, blocked = h.responseRules(c, ent.Body)
	}
	if blocked != nil {
		c.err = blocked
		return
	}
	if pr, ok := c.snap.Price(ent.Provider, ent.Model); ok {
		c.rec.CacheSavedUSD = cost(pr, ent.Usage)
	}
	h.success(c, &providers.Request{Model: ent.Model})
	ctx := c.ctx
	ctx.SetStatusCode(http.StatusOK)
	c.rec.TTFBMS = since(c.start)
	if c.in.stream {
		if !native {
			body = replay(body, c.route.op, c.cache.wantUsage)
		}
		if _, openAI := c.door.(openAIDoor); !openAI && !native {
			body = redoor(c.door, body)
		}
		ctx.SetContentType("text/event-stream")
		ctx.Response.Header.Set("Cache-Control", "no-cache")
	} else {
		ctx.SetContentType("application/json")
		body = c.door.answer(body)
	}
	ctx.SetBody(body)
	c.rec.Status, c.out = http.StatusOK, outcome{billed: true, answered: true, respBody: body}
}

// cacheStore keeps a 200 answer of a cacheable request. A native
// answer is kept with the usage its codec read (u); a chat answer's is
// read from it.
func (h *Inference) cacheStore(c *call, body []byte, u llm.Usage) {
	if !c.cache.store {
		return
	}
	if c.in.wire != llm.WireOpenAIChat {
		h.put(c, bytes.Clone(body), u)
		return
	}
	var p fastjson.Parser
	v, err := p.ParseBytes(body)
	if err != nil {
		return
	}
	h.put(c, bytes.Clone(body), usageOf(v.Get("usage")))
}

func (h *Inference) put(c *call, body []byte, u llm.Usage) {
	h.cfg.Cache.Set(context.Background(), c.cache.key,
		&respcache.Entry{Body: body, Provider: c.rec.Provider, Model: c.rec.Model, Usage: u}, c.cache.ttl)
}

// usageOf reads an OpenAI usage object (providers.ReadOpenAIUsage).
func usageOf(v *fastjson.Value) llm.Usage {
	if v == nil || v.Type() != fastjson.TypeObject {
		return llm.Usage{}
	}
	return providers.ReadOpenAIUsage(v)
}

// streamRecorder returns the recorder of a streamed chat MISS, nil
// otherwise (nativeRecorder records a native door's).
func (h *Inference) streamRecorder(c *call) *recorder {
	if !c.cache.store || !c.in.stream {
		return nil
	}
	return &recorder{h: h, c: c, completions: c.route.op == llm.OpCompletions, choices: map[int64]*choice{}}
}

// recorder assembles the chunks of a stream into the complete answer
// (content concatenated, tool calls merged, finish reasons, usage), which
// is stored when the stream ends cleanly. It drops the usage-only chunk
// the gateway asked for when the client did not.
type recorder struct {
	h           *Inference
	c           *call
	completions bool
	parser      fastjson.Parser
	id, model   string
	object      string
	created     []byte // raw JSON
	fingerprint string
	choices     map[int64]*choice
	order       []int64
	usage       []byte // raw JSON of the usage object
	size        int
	tooBig      bool
}

type choice struct {
	content, refusal strings.Builder
	hasContent       bool
	hasRefusal       bool
	tools            []*toolCall
	finish           []byte // raw JSON, null when absent
}

type toolCall struct {
	index          int64
	id, typ, name  string
	args           strings.Builder
	hasID, hasType bool
}

// observe records the chunks and returns those to send.
func (r *recorder) observe(outs [][]byte) [][]byte {
	kept := outs[:0]
	for _, chunk := range outs {
		if r.record(chunk) || r.c.cache.wantUsage {
			kept = append(kept, chunk)
		}
	}
	return kept
}

// record takes one chunk in; it returns false for a usage-only chunk.
func (r *recorder) record(chunk []byte) bool {
	v, err := r.parser.ParseBytes(chunk)
	if err != nil {
		r.tooBig = true // cannot assemble: do not store
		return true
	}
	r.size += len(chunk)
	if r.size > respcache.DefaultMaxEntryBytes*2 {
		r.tooBig = true
	}
	if u := v.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		r.usage = u.MarshalTo(r.usage[:0])
	}
	choices := v.GetArray("choices")
	if r.id == "" {
		r.id = string(v.GetStringBytes("id"))
		r.model = string(v.GetStringBytes("model"))
		r.fingerprint = string(v.GetStringBytes("system_fingerprint"))
		if x := v.Get("created"); x != nil {
			r.created = x.MarshalTo(nil)
		}
	}
	if len(choices) == 0 && r.usage != nil && v.Get("usage") != nil {
		return false
	}
	for k, ch := range choices {
		idx := choiceIndex(choices, k)
		acc, ok := r.choices[idx]
		if !ok {
			acc = &choice{}
			r.choices[idx] = acc
			r.order = append(r.order, idx)
		}
		if fr := ch.Get("finish_reason"); fr != nil && fr.Type() != fastjson.TypeNull {
			acc.finish = fr.MarshalTo(acc.finish[:0])
		}
		if r.completions {
			if t := ch.Get("text"); t != nil && t.Type() == fastjson.TypeString {
				acc.content.Write(t.GetStringBytes())
				acc.hasContent = true
			}
			continue
		}
		d := ch.Get("delta")
		if d == nil {
			continue
		}
		if t := d.Get("content"); t != nil && t.Type() == fastjson.TypeString {
			acc.content.Write(t.GetStringBytes())
			acc.hasContent = true
		}
		if t := d.Get("refusal"); t != nil && t.Type() == fastjson.TypeString {
			acc.refusal.Write(t.GetStringBytes())
			acc.hasRefusal = true
		}
		for j, tc := range d.GetArray("tool_calls") {
			ti := int64(j)
			if x := tc.Get("index"); x != nil {
				ti, _ = x.Int64()
			}
			var call *toolCall
			for _, t := range acc.tools {
				if t.index == ti {
					call = t
				}
			}
			if call == nil {
				call = &toolCall{index: ti}
				acc.tools = append(acc.tools, call)
			}
			if s := tc.GetStringBytes("id"); s != nil && !call.hasID {
				call.id, call.hasID = string(s), true
			}
			if s := tc.GetStringBytes("type"); s != nil && !call.hasType {
				call.typ, call.hasType = string(s), true
			}
			if s := tc.GetStringBytes("function", "name"); s != nil && call.name == "" {
				call.name = string(s)
			}
			call.args.Write(tc.GetStringBytes("function", "arguments"))
		}
	}
	return true
}

// store keeps the assembled answer, once the stream ended cleanly.
func (r *recorder) store() {
	if r.tooBig || r.id == "" && len(r.order) == 0 {
		return
	}
	body := r.assemble()
	var p fastjson.Parser
	u := llm.Usage{}
	if v, err := p.ParseBytes(body); err == nil {
		u = usageOf(v.Get("usage"))
	}
	r.h.put(r.c, body, u)
}

// assemble builds the complete answer: a chat.completion or a
// text_completion.
func (r *recorder) assemble() []byte {
	b := make([]byte, 0, r.size)
	b = append(b, `{"id":`...)
	b = rules.AppendString(b, r.id)
	if r.completions {
		b = append(b, `,"object":"text_completion"`...)
	} else {
		b = append(b, `,"object":"chat.completion"`...)
	}
	if r.created != nil {
		b = append(b, `,"created":`...)
		b = append(b, r.created...)
	}
	b = append(b, `,"model":`...)
	b = rules.AppendString(b, r.model)
	b = append(b, `,"choices":[`...)
	for i, idx := range r.order {
		acc := r.choices[idx]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, idx, 10)
		if r.completions {
			b = append(b, `,"text":`...)
			b = rules.AppendString(b, acc.content.String())
		} else {
			b = append(b, `,"message":{"role":"assistant","content":`...)
			if acc.hasContent || len(acc.tools) == 0 {
				b = rules.AppendString(b, acc.content.String())
			} else {
				b = append(b, "null"...)
			}
			if acc.hasRefusal {
				b = append(b, `,"refusal":`...)
				b = rules.AppendString(b, acc.refusal.String())
			}
			if len(acc.tools) > 0 {
				b = append(b, `,"tool_calls":[`...)
				for j, t := range acc.tools {
					if j > 0 {
						b = append(b, ',')
					}
					typ := t.typ
					if typ == "" {
						typ = "function"
					}
					b = append(b, `{"id":`...)
					b = rules.AppendString(b, t.id)
					b = append(b, `,"type":`...)
					b = rules.AppendString(b, typ)
					b = append(b, `,"function":{"name":`...)
					b = rules.AppendString(b, t.name)
					b = append(b, `,"arguments":`...)
					b = rules.AppendString(b, t.args.String())
					b = append(b, "}}"...)
				}
				b = append(b, ']')
			}
			b = append(b, '}')
		}
		b = append(b, `,"logprobs":null,"finish_reason":`...)
		if acc.finish != nil {
			b = append(b, acc.finish...)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if r.usage != nil {
		b = append(b, `,"usage":`...)
		b = append(b, r.usage...)
	}
	if r.fingerprint != "" {
		b = append(b, `,"system_fingerprint":`...)
		b = rules.AppendString(b, r.fingerprint)
	}
	return append(b, '}')
}

// redoor writes a replayed OpenAI event stream in d's events: each data
// event through d.appendChunk, then d's clean end.
func redoor(d door, stream []byte) []byte {
	out := make([]byte, 0, 2*len(stream))
	for _, ev := range bytes.Split(stream, []byte("\n\n")) {
		data, ok := bytes.CutPrefix(ev, []byte("data: "))
		if !ok || bytes.Equal(data, []byte("[DONE]")) {
			continue
		}
		out = d.appendChunk(out, data)
	}
	return d.appendEnd(out, nil)
}

// replay turns a stored answer into the SSE stream of a stream request:
// per choice a role chunk, the content, tool calls, a finish chunk; a
// usage chunk when the client asked for it; [DONE].
func replay(body []byte, op llm.Operation, wantUsage bool) []byte {
	var p fastjson.Parser
	v, err := p.ParseBytes(body)
	if err != nil {
		return append(sse.AppendError(nil, apierr.TypeAPI, apierr.CodeCacheError, "the stored answer could not be replayed"), sse.Done...)
	}
	completions := op == llm.OpCompletions
	head := envelope(v, completions)
	out := make([]byte, 0, 2*len(body)+256)
	event := func(choiceJSON []byte) {
		out = append(out, "data: "...)
		out = append(out, head...)
		out = append(out, `"choices":[`...)
		out = append(out, choiceJSON...)
		out = append(out, "]}\n\n"...)
	}
	var c []byte
	for k, ch := range v.GetArray("choices") {
		idx := strconv.AppendInt(nil, choiceIndex(v.GetArray("choices"), k), 10)
		open := func(b []byte) []byte {
			b = append(b[:0], `{"index":`...)
			return append(b, idx...)
		}
		finish := []byte("null")
		if fr := ch.Get("finish_reason"); fr != nil {
			finish = fr.MarshalTo(nil)
		}
		if completions {
			c = open(c)
			c = append(c, `,"text":`...)
			c = rules.AppendString(c, string(ch.GetStringBytes("text")))
			c = append(c, `,"logprobs":null,"finish_reason":null}`...)
			event(c)
			c = open(c)
			c = append(c, `,"text":"","logprobs":null,"finish_reason":`...)
			c = append(append(c, finish...), '}')
			event(c)
			continue
		}
		msg := ch.Get("message")
		c = open(c)
		c = append(c, `,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}`...)
		event(c)
		if s := msg.GetStringBytes("content"); len(s) > 0 {
			c = open(c)
			c = append(c, `,"delta":{"content":`...)
			c = rules.AppendString(c, string(s))
			c = append(c, `},"logprobs":null,"finish_reason":null}`...)
			event(c)
		}
		if s := msg.Get("refusal"); s != nil && s.Type() == fastjson.TypeString {
			c = open(c)
			c = append(c, `,"delta":{"refusal":`...)
			c = rules.AppendString(c, string(s.GetStringBytes()))
			c = append(c, `},"logprobs":null,"finish_reason":null}`...)
			event(c)
		}
		if tools := msg.GetArray("tool_calls"); len(tools) > 0 {
			c = open(c)
			c = append(c, `,"delta":{"tool_calls":[`...)
			for j, t := range tools {
				if j > 0 {
					c = append(c, ',')
				}
				c = append(c, `{"index":`...)
				c = strconv.AppendInt(c, int64(j), 10)
				c = append(c, `,"id":`...)
				c = rules.AppendString(c, string(t.GetStringBytes("id")))
				c = append(c, `,"type":"function","function":{"name":`...)
				c = rules.AppendString(c, string(t.GetStringBytes("function", "name")))
				c = append(c, `,"arguments":`...)
				c = rules.AppendString(c, string(t.GetStringBytes("function", "arguments")))
				c = append(c, "}}"...)
			}
			c = append(c, `]},"logprobs":null,"finish_reason":null}`...)
			event(c)
		}
		c = open(c)
		c = append(c, `,"delta":{},"logprobs":null,"finish_reason":`...)
		c = append(append(c, finish...), '}')
		event(c)
	}
	if u := v.Get("usage"); wantUsage && u != nil && u.Type() == fastjson.TypeObject {
		out = append(out, "data: "...)
		out = append(out, head...)
		out = append(out, `"choices":[],"usage":`...)
		out = u.MarshalTo(out)
		out = append(out, "}\n\n"...)
	}
	return append(out, sse.Done...)
}

// envelope returns the members every replayed chunk starts with, up to
// and including the comma before "choices".
func envelope(v *fastjson.Value, completions bool) []byte {
	b := []byte(`{"id":`)
	b = rules.AppendString(b, string(v.GetStringBytes("id")))
	if completions {
		b = append(b, `,"object":"text_completion"`...)
	} else {
		b = append(b, `,"object":"chat.completion.chunk"`...)
	}
	if x := v.Get("created"); x != nil {
		b = append(b, `,"created":`...)
		b = x.MarshalTo(b)
	}
	b = append(b, `,"model":`...)
	b = rules.AppendString(b, string(v.GetStringBytes("model")))
	if s := v.GetStringBytes("system_fingerprint"); s != nil {
		b = append(b, `,"system_fingerprint":`...)
		b = rules.AppendString(b, string(s))
	}
	return append(b, ',')
}
