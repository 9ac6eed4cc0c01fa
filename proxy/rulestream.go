package proxy

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/rules"
	"github.com/sluicehq/sluice/proxy/providers"
)

// streamFilter applies the response rules to a stream, chunk by chunk.
// Push returns the bytes to send now (possibly held back for redaction
// across chunk boundaries); Flush returns what is held at the end.
type streamFilter interface {
	Push(chunk []byte) (out [][]byte, blocked *apierr.Error)
	Flush() [][]byte
}

// newStreamFilter returns the stream filter of the call, or nil when no
// response rule applies and the answer is not being cached.
func (h *Inference) newStreamFilter(c *call, st providers.Stream) streamFilter {
	if c.in.wire != llm.WireOpenAIChat {
		return h.newNativeFilter(c, st)
	}
	var rs *ruleStream
	if set := h.ruleSet(c); set.Applies(rules.Response) {
		rs = &ruleStream{h: h, c: c, set: set, completions: c.route.op == llm.OpCompletions,
			streams: map[streamKey]textFilter{}}
	}
	rec := h.streamRecorder(c)
	if rs == nil && rec == nil {
		return nil
	}
	f := &chain{}
	if rs != nil {
		f.rules = rs
	}
	if rec != nil {
		f.rec = rec
	}
	return f
}

// chain runs the rule filter, then the cache recorder (either may be
// nil).
type chain struct {
	rules streamFilter
	rec   streamRecorder
}

// streamRecorder keeps a streamed answer for the cache: observe sees what
// goes to the client, store keeps it after a clean end.
type streamRecorder interface {
	observe(outs [][]byte) [][]byte
	store()
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

// textFilter is a rules.Stream (streamed text) or a rules.ArgStream
// (streamed tool-call arguments).
type textFilter interface {
	Push(text string) (string, []rules.Finding, *rules.Finding)
	Flush() (string, []rules.Finding, *rules.Finding)
	Unchecked() []*rules.Rule
}

// streamKey names one streamed text: a field of one choice, for tool
// calls of one call.
type streamKey struct {
	choice int64
	field  string // the path below the choice: "delta.content", "text", "delta.tool_calls.*.function.arguments"
	sub    int64  // the tool call's index (or the position in the field's array), -1 when none
}

// ruleStream applies the response rules to every string of a stream's
// chunks (rules.Walk). A string under a choice — its content, refusal,
// reasoning, tool-call arguments, … — is one streamed text per choice,
// field and tool call, held back by a window (rules.Stream, or
// rules.ArgStream for arguments, which keeps them valid JSON). Names and
// strings outside the choices come whole in one chunk and are scanned in
// it. Chunks go out with their texts replaced by what may be sent; a
// chunk left with nothing to say is dropped, and text still held when a
// choice finishes goes out in a chunk of its own just before the
// finishing one.
type ruleStream struct {
	h           *Inference
	c           *call
	set         *rules.Set
	completions bool
	streams     map[streamKey]textFilter
	order       []streamKey
	parser      fastjson.Parser
	last        []byte // the latest chunk, the envelope of chunks made at Flush
	// quiet: scanLocal applies the rules without recording their
	// findings (a native event restating texts already scanned).
	quiet bool
}

func (f *ruleStream) Push(chunk []byte) ([][]byte, *apierr.Error) {
	doc, err := rules.Walk(chunk, rules.Chunk)
	if err != nil {
		return nil, f.unreadable()
	}
	v, err := f.parser.ParseBytes(chunk)
	if err != nil {
		return nil, f.unreadable()
	}
	f.last = append(f.last[:0], chunk...)
	choices := v.GetArray("choices")
	repl := make([]string, len(doc.Texts))
	keys := make([]streamKey, len(doc.Texts))
	var local []int // texts scanned in this chunk alone
	streamed, emptied := false, true
	for i := range doc.Texts {
		t := &doc.Texts[i]
		repl[i] = t.Text
		key, ok := f.key(choices, t)
		if !ok {
			keys[i].sub = -2 // no stream
			local = append(local, i)
			continue
		}
		keys[i] = key
		st := f.stream(key, t)
		out, found, block := st.Push(t.Text)
		if e := f.found(found, block); e != nil {
			return nil, e
		}
		if e := f.checked(st); e != nil {
			return nil, e
		}
		repl[i] = out
		streamed = true
		if out != "" || t.Text == "" {
			emptied = false
		}
	}
	if e := f.scanLocal(doc, local, repl); e != nil {
		return nil, e
	}
	// A choice that finishes here sends what it holds first.
	var pre [][]byte
	for k, ch := range choices {
		if fr := ch.Get("finish_reason"); fr == nil || fr.Type() == fastjson.TypeNull {
			continue
		}
		idx := choiceIndex(choices, k)
		for _, key := range f.order {
			st, ok := f.streams[key]
			if !ok || key.choice != idx {
				continue
			}
			out, e := f.flush(key, st)
			if e != nil {
				return nil, e
			}
			if out == "" {
				continue
			}
			own := false
			for i := range doc.Texts {
				if keys[i] == key {
					repl[i] += out
					own = true
					break
				}
			}
			if !own {
				pre = append(pre, f.chunk(v, key, out))
			}
		}
	}
	if streamed && emptied && onlyText(v) {
		return pre, nil
	}
	return append(pre, doc.Replace(chunk, repl)), nil
}

func (f *ruleStream) unreadable() *apierr.Error {
	return apierr.New(http.StatusBadGateway, apierr.CodeUpstreamError, "provider %s sent a stream chunk the gateway's content rules cannot read", f.c.rec.Provider)
}

// key returns the stream of text t of a chunk; ok is false for a string
// that comes whole in one chunk (outside the choices, or a name).
func (f *ruleStream) key(choices []*fastjson.Value, t *rules.Text) (streamKey, bool) {
	field, ok := strings.CutPrefix(t.Field, "choices.*.")
	if !ok || t.Item < 0 || t.Item >= len(choices) || field == "name" || strings.HasSuffix(field, ".name") {
		return streamKey{}, false
	}
	key := streamKey{choice: choiceIndex(choices, t.Item), field: field, sub: -1}
	if t.Sub >= 0 {
		key.sub = int64(t.Sub)
		if strings.HasPrefix(field, "delta.tool_calls.*.") {
			calls := choices[t.Item].GetArray("delta", "tool_calls")
			if t.Sub < len(calls) {
				if n, err := calls[t.Sub].Get("index").Int64(); err == nil {
					key.sub = n
				}
			}
		}
	}
	return key, true
}

func (f *ruleStream) stream(key streamKey, t *rules.Text) textFilter {
	st, ok := f.streams[key]
	if !ok {
		if t.IsArguments() {
			st = f.set.NewArgStream(rules.Response, f.h.ruleBudget(f.c))
		} else {
			st = f.set.NewStream(rules.Response, f.h.ruleBudget(f.c))
		}
		f.streams[key] = st
		f.order = append(f.order, key)
	}
	return st
}

// scanLocal scans the texts of a chunk that are not streamed (each comes
// whole) and writes their redactions into repl.
func (f *ruleStream) scanLocal(doc *rules.Doc, local []int, repl []string) *apierr.Error {
	if len(local) == 0 {
		return nil
	}
	texts := make([]string, len(local))
	for k, i := range local {
		texts[k] = doc.Texts[i].Text
	}
	res := f.set.Scan(rules.Response, texts, f.h.ruleBudget(f.c))
	for k, i := range local {
		hs := res.Hits[k]
		for _, h := range hs {
			if h.Rule.Action == rules.Block {
				b := rules.Finding{Rule: h.Rule, Kind: h.Kind, Excerpt: rules.Excerpt(texts[k], h, hs)}
				return f.found(nil, &b)
			}
		}
		if !f.quiet {
			f.h.recordFindings(f.c, rules.Response, rules.Findings(texts[k], hs))
		}
		repl[i] = rules.Redacted(texts[k], hs)
	}
	return f.h.unchecked(f.c, rules.Response, res.Unchecked, res.Truncated)
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
	for _, key := range f.order {
		st, ok := f.streams[key]
		if !ok {
			continue
		}
		// A block cannot first show at the end (the text was all seen
		// before); should it, the held text is not sent.
		if out, e := f.flush(key, st); e == nil && out != "" {
			outs = append(outs, f.chunk(v, key, out))
		}
	}
	f.streams = nil
	return outs
}

// flush ends the streamed text key, st: it records what the rules found,
// applies the fail mode of what they left unchecked and returns what st
// held.
func (f *ruleStream) flush(key streamKey, st textFilter) (string, *apierr.Error) {
	out, found, block := st.Flush()
	if e := f.found(found, block); e != nil {
		return "", e
	}
	if e := f.checked(st); e != nil {
		return "", e
	}
	delete(f.streams, key)
	return out, nil
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

// checked applies the fail mode of the rules a stream left unchecked.
func (f *ruleStream) checked(st textFilter) *apierr.Error {
	u := st.Unchecked()
	if len(u) == 0 {
		return nil
	}
	return f.h.unchecked(f.c, rules.Response, u, !f.h.ruleBudget(f.c).Exhausted())
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

// onlyText reports whether a chunk carries nothing but streamed text: no
// role, no tool calls, no finish reason, no usage. Such a chunk whose
// text is all held back is not sent.
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
				if err != nil || d.Len() != 1 {
					only = false
					return
				}
				d.Visit(func(_ []byte, s *fastjson.Value) {
					if s.Type() != fastjson.TypeString {
						only = false
					}
				})
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

// chunk makes a chunk carrying text at key, in the envelope (id, object,
// created, model) of v.
func (f *ruleStream) chunk(v *fastjson.Value, key streamKey, text string) []byte {
	b := appendEnvelope(make([]byte, 0, len(text)+200), v)
	b = append(b, `"choices":[{"index":`...)
	b = strconv.AppendInt(b, key.choice, 10)
	b = append(b, ',')
	b = appendPath(b, strings.Split(key.field, "."), key.sub, text)
	return append(b, `,"logprobs":null,"finish_reason":null}]}`...)
}

// appendPath appends the member at path holding text: "delta.content"
// gives "delta":{"content":text}; an array ("*") holds one object with
// "index": sub.
func appendPath(b []byte, path []string, sub int64, text string) []byte {
	b = rules.AppendString(b, path[0])
	b = append(b, ':')
	rest := path[1:]
	switch {
	case len(rest) == 0:
		return rules.AppendString(b, text)
	case rest[0] == "*" && len(rest) == 1:
		b = append(b, '[')
		b = rules.AppendString(b, text)
		return append(b, ']')
	case rest[0] == "*":
		b = append(b, `[{"index":`...)
		b = strconv.AppendInt(b, max(sub, 0), 10)
		b = append(b, ',')
		b = appendPath(b, rest[1:], 0, text)
		return append(b, `}]`...)
	default:
		b = append(b, '{')
		b = appendPath(b, rest, sub, text)
		return append(b, '}')
	}
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
