package proxy

import (
	"bytes"
	"encoding/binary"
	"sync"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/tokenize"
)

// Tokenizer counts the tokens of text as model would; *tokenize.Counter
// is the gateway's.
type Tokenizer interface {
	CountBytes(model string, text []byte) int
}

var _ Tokenizer = (*tokenize.Counter)(nil)

// The token overhead of a chat request in OpenAI's accounting: each
// message is wrapped in a few marker tokens, and the reply is primed with
// a few more. Other providers' templates differ by a token or two.
const (
	tokensPerMessage = 3
	tokensPerReply   = 3
)

// estimate returns u, or, when the provider reported no usage, the tokens
// counted from the request and the answer, flagged Estimated (the record
// then says usage_estimated). The answer is resp for a complete one, sc
// for a stream (whole or cut off). An explicit zero from the provider
// (u.Present) stays zero, and a provider's own estimate stands.
//
// It runs only when usage is missing. Its work is bounded: at most about
// tokenize.MaxBytes of text per side is encoded, the rest extrapolated.
func (h *Inference) estimate(c *call, u llm.Usage, resp []byte, sc *streamCopy) llm.Usage {
	if u.Present || u.Estimated {
		return u
	}
	model := c.rec.Model
	if model == "" {
		model = c.in.model
	}
	p := h.parsers.Get()
	defer h.parsers.Put(p)
	body := c.body
	if sc != nil {
		body = sc.body()
	}
	in := tally{tok: h.cfg.Tokenizer, model: model}
	if v, err := p.ParseBytes(body); err == nil {
		promptTexts(v, c.route.op, &in)
	}
	est := llm.Usage{PromptTokens: in.total(), Estimated: true}
	if c.route.op != llm.OpEmbeddings {
		out := tally{tok: h.cfg.Tokenizer, model: model}
		if sc != nil {
			sc.answerTexts(p, &out)
		} else if v, err := p.ParseBytes(resp); err == nil {
			for _, ch := range v.GetArray("choices") {
				answerTexts(ch.Get("message"), &out)
				out.text(ch.GetStringBytes("text"))
			}
			nativeAnswerTexts(v, c.route.op, &out)
		}
		est.CompletionTokens = out.total()
	}
	est.TotalTokens = est.PromptTokens + est.CompletionTokens
	return est
}

// promptTokens is the gateway's count of the prompt of c.body.
func (h *Inference) promptTokens(c *call) int64 {
	p := h.parsers.Get()
	defer h.parsers.Put(p)
	t := tally{tok: h.cfg.Tokenizer, model: c.in.model}
	if v, err := p.ParseBytes(c.body); err == nil {
		promptTexts(v, c.route.op, &t)
	}
	return t.total()
}

// promptTexts tallies what the provider reads of a request: the messages
// (content strings and text parts, names, tool calls) and tool
// definitions of a chat, the prompt of a legacy completion, the input of
// embeddings. Images and audio are not counted.
func promptTexts(v *fastjson.Value, op llm.Operation, t *tally) {
	switch op {
	case llm.OpChat:
		for _, m := range v.GetArray("messages") {
			t.extra += tokensPerMessage
			t.text(m.GetStringBytes("name"))
			answerTexts(m, t)
		}
		t.extra += tokensPerReply
		if tools := v.Get("tools"); tools != nil && tools.Type() == fastjson.TypeArray {
			// Providers render the schemas in their own syntax; their JSON
			// is a close upper bound.
			t.text(tools.MarshalTo(nil))
		}
	case llm.OpCompletions:
		inputTexts(v.Get("prompt"), t)
	case llm.OpEmbeddings:
		inputTexts(v.Get("input"), t)
	case llm.OpResponses:
		// The native doors (door_native.go): the same texts in their wires.
		t.text(v.GetStringBytes("instructions"))
		if in := v.Get("input"); in != nil && in.Type() == fastjson.TypeString {
			b, _ := in.StringBytes()
			t.text(b)
		}
		for _, item := range v.GetArray("input") {
			t.extra += tokensPerMessage
			answerTexts(item, t)
			t.text(item.GetStringBytes("output"))
			t.text(item.GetStringBytes("arguments"))
		}
	case llm.OpMessages, llm.OpCountTokens:
		if sys := v.Get("system"); sys != nil && sys.Type() == fastjson.TypeString {
			b, _ := sys.StringBytes()
			t.text(b)
		}
		for _, part := range v.GetArray("system") {
			t.text(part.GetStringBytes("text"))
		}
		for _, m := range v.GetArray("messages") {
			t.extra += tokensPerMessage
			answerTexts(m, t)
		}
	}
}

// nativeAnswerTexts tallies the text of a native door's complete answer:
// a Responses object's output items, a message's content blocks.
func nativeAnswerTexts(v *fastjson.Value, op llm.Operation, t *tally) {
	switch op {
	case llm.OpResponses:
		for _, item := range v.GetArray("output") {
			answerTexts(item, t)
			t.text(item.GetStringBytes("arguments"))
		}
	case llm.OpMessages:
		answerTexts(v, t)
		for _, block := range v.GetArray("content") {
			t.text(block.GetStringBytes("thinking"))
		}
	}
}

// answerTexts tallies the text of a message or a stream delta: content
// (a string or text parts), refusal, reasoning_content (DeepSeek and
// others) and the names and arguments of tool calls.
func answerTexts(m *fastjson.Value, t *tally) {
	if m == nil {
		return
	}
	switch ct := m.Get("content"); {
	case ct == nil:
	case ct.Type() == fastjson.TypeString:
		b, _ := ct.StringBytes()
		t.text(b)
	case ct.Type() == fastjson.TypeArray:
		for _, part := range ct.GetArray() {
			t.text(part.GetStringBytes("text"))
		}
	}
	t.text(m.GetStringBytes("refusal"))
	t.text(m.GetStringBytes("reasoning_content"))
	for _, tc := range m.GetArray("tool_calls") {
		t.text(tc.GetStringBytes("function", "name"))
		t.text(tc.GetStringBytes("function", "arguments"))
	}
}

// inputTexts tallies a prompt or an embeddings input: a string, an array
// of strings, an array of token ids or an array of such arrays (token ids
// count exactly).
func inputTexts(v *fastjson.Value, t *tally) {
	if v == nil {
		return
	}
	switch v.Type() {
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		t.text(b)
	case fastjson.TypeArray:
		for _, x := range v.GetArray() {
			switch x.Type() {
			case fastjson.TypeString:
				b, _ := x.StringBytes()
				t.text(b)
			case fastjson.TypeNumber:
				t.extra++
			case fastjson.TypeArray:
				t.extra += int64(len(x.GetArray()))
			}
		}
	}
}

// tally counts texts one by one under a byte budget: once limit bytes
// (tokenize.MaxBytes when 0) have been encoded, further texts are only
// measured, and their tokens extrapolated from the ratio so far — or,
// with bound, counted one per byte: an upper bound, for reservations.
type tally struct {
	tok   Tokenizer
	model string
	// tokens of the encoded texts, and their bytes.
	tokens, counted int64
	// skipped are the bytes of the texts past the budget.
	skipped int64
	// extra are tokens known without the tokenizer (token ids, message
	// overhead).
	extra int64
	// limit is the bytes encoded at most; 0 means tokenize.MaxBytes.
	limit int64
	// bound counts the skipped bytes one token each, and cuts a text at
	// the budget rather than let Count extrapolate it.
	bound bool
}

func (t *tally) text(b []byte) {
	if len(b) == 0 {
		return
	}
	limit := t.limit
	if limit == 0 {
		limit = tokenize.MaxBytes
	}
	if t.counted >= limit {
		t.skipped += int64(len(b))
		return
	}
	if t.bound {
		head := cutText(b, limit-t.counted)
		t.skipped += int64(len(b) - len(head))
		b = head
	}
	// CountBytes itself bounds one text to tokenize.MaxBytes.
	t.tokens += int64(t.tok.CountBytes(t.model, b))
	t.counted += int64(len(b))
}

func (t *tally) total() int64 {
	n := t.tokens
	switch {
	case t.bound:
		n += t.skipped
	case t.skipped > 0 && t.counted > 0:
		n += t.tokens * t.skipped / t.counted
	}
	return n + t.extra
}

// maxStreamChunks bounds the chunk bytes a streamCopy keeps: enough for
// the answers of nearly every stream; a longer one is extrapolated from
// its first maxStreamChunks bytes.
const maxStreamChunks = 1 << 20

// maxPooledCopy is the largest buffer put back in the pool, so that one
// huge request does not stay in memory.
const maxPooledCopy = 2 << 20

// streamCopies recycles streamCopy buffers (reset on put): a stream then
// costs no allocation for its copy.
var streamCopies = sync.Pool{New: func() any { return &streamCopy{buf: make([]byte, 0, 4<<10)} }}

// streamCopy keeps what a usage estimate of a stream needs, in case the
// stream ends without usage: a copy of the request body, taken while the
// handler still owns it (a stream outlives the handler, and after a
// client disconnect fasthttp may recycle the request's buffers before the
// relay ends), then the upstream's chunks, each prefixed with its length,
// up to maxStreamChunks bytes. Copying is the only cost a stream always
// pays; the chunks are parsed only when usage is missing. It is owned by
// the stream's relay and released once the record is handed over.
type streamCopy struct {
	buf     []byte
	bodyLen int
	// seen are the bytes of every chunk, kept those of the chunks in buf.
	seen, kept int64
	full       bool
}

// newStreamCopy returns a pooled streamCopy holding a copy of body.
func newStreamCopy(body []byte) *streamCopy {
	sc := streamCopies.Get().(*streamCopy)
	sc.buf = append(sc.buf[:0], body...)
	sc.bodyLen = len(body)
	return sc
}

// body is the copy of the request body.
func (sc *streamCopy) body() []byte { return sc.buf[:sc.bodyLen] }

// add keeps a copy of an upstream chunk, while there is room.
func (sc *streamCopy) add(chunk []byte) {
	sc.seen += int64(len(chunk))
	if sc.full || sc.kept+int64(len(chunk)) > maxStreamChunks {
		sc.full = true
		return
	}
	sc.buf = binary.AppendUvarint(sc.buf, uint64(len(chunk)))
	sc.buf = append(sc.buf, chunk...)
	sc.kept += int64(len(chunk))
}

// each calls fn with each kept chunk that parses as JSON (an OpenAI
// chunk, or the data of a native door's event), parsed with p: the value
// is valid until fn returns.
func (sc *streamCopy) each(p *fastjson.Parser, fn func(v *fastjson.Value)) {
	for rest := sc.buf[sc.bodyLen:]; len(rest) > 0; {
		n, k := binary.Uvarint(rest)
		if k <= 0 || uint64(len(rest)-k) < n {
			return
		}
		chunk := rest[k : k+int(n)]
		rest = rest[k+int(n):]
		if v, err := p.ParseBytes(nativeEventData(chunk)); err == nil {
			fn(v)
		}
	}
}

// answerTexts tallies the text of the kept chunks: the content deltas of
// chat chunks (with refusals, reasoning and tool calls) and the text of
// legacy completion chunks, concatenated as the client reads them. A
// stream longer than the copy is extrapolated by its bytes.
func (sc *streamCopy) answerTexts(p *fastjson.Parser, t *tally) {
	var joined []byte // the deltas, concatenated, then encoded at once
	sc.each(p, func(v *fastjson.Value) {
		for _, ch := range v.GetArray("choices") {
			joined = appendDelta(joined, ch.Get("delta"))
			joined = append(joined, ch.GetStringBytes("text")...)
		}
		// A native door's event: a Responses text delta (a string), or a
		// Messages content_block_delta (text, thinking or tool input).
		switch d := v.Get("delta"); {
		case d == nil:
		case d.Type() == fastjson.TypeString:
			b, _ := d.StringBytes()
			joined = append(joined, b...)
		case d.Type() == fastjson.TypeObject:
			joined = append(joined, d.GetStringBytes("text")...)
			joined = append(joined, d.GetStringBytes("thinking")...)
			joined = append(joined, d.GetStringBytes("partial_json")...)
		}
	})
	text := tally{tok: t.tok, model: t.model}
	text.text(joined)
	n := text.total()
	if sc.seen > sc.kept && sc.kept > 0 {
		n = n * sc.seen / sc.kept
	}
	t.extra += n
}

// appendDelta appends the texts of a stream delta (see answerTexts).
func appendDelta(dst []byte, d *fastjson.Value) []byte {
	if d == nil {
		return dst
	}
	dst = append(dst, d.GetStringBytes("content")...)
	dst = append(dst, d.GetStringBytes("refusal")...)
	dst = append(dst, d.GetStringBytes("reasoning_content")...)
	for _, tc := range d.GetArray("tool_calls") {
		dst = append(dst, tc.GetStringBytes("function", "name")...)
		dst = append(dst, tc.GetStringBytes("function", "arguments")...)
	}
	return dst
}

// release puts sc back in the pool; sc must not be used after.
func (sc *streamCopy) release() {
	if cap(sc.buf) > maxPooledCopy {
		return
	}
	*sc = streamCopy{buf: sc.buf[:0]}
	streamCopies.Put(sc)
}

// nativeEventData returns the data of a native door's chunk, an SSE event
// as the provider sent it ("event: …\ndata: {…}\n\n"); an OpenAI chunk,
// bare JSON, is returned as it is.
func nativeEventData(chunk []byte) []byte {
	if len(chunk) == 0 || chunk[0] == '{' {
		return chunk
	}
	i := bytes.Index(chunk, []byte("data:"))
	if i < 0 {
		return chunk
	}
	data := chunk[i+len("data:"):]
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	return bytes.TrimSpace(data)
}
