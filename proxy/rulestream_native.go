package proxy

import (
	"bytes"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/rules"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/respcache"
)

// The response rules and the cache on the native doors' streams
// (CONTRACT §7 on every door of §12). A native stream hands over the
// provider's own events (Anthropic's message_start … message_stop, the
// Responses API's response.created … response.completed), framed as SSE.
// The rules read each event's JSON as ruleStream reads a chat chunk
// (rules.Walk): the text of a delta event — Anthropic's
// content_block_delta text, thinking and partial_json, a Responses
// "….delta" (output text, refusal, reasoning, function-call arguments) —
// is one streamed text per content block (or output item and part), held
// back by the rules' window so that a match cut by an event boundary is
// found whole before any of it is sent; every other string of an event
// comes whole and is scanned in it. Events go out as they came, but for
// their texts' redactions: an event left with nothing to say is dropped,
// and text still held when a block ends goes out in a delta event of its
// own (a copy of the block's last delta) just before the event that ends
// it. A block ends the stream with the door's error event, as on every
// door.

// nativeSkip are members of native events that are identifiers or opaque
// data, never text the model wrote: a redaction there would break the
// client's next turn (a thinking block's signature, an item's id).
var nativeSkip = map[string]bool{"item_id": true, "call_id": true, "signature": true,
	"encrypted_content": true, "previous_response_id": true, "sequence_number": true}

// nativeRules applies the response rules to a native stream, event by
// event. It shares ruleStream's streamed texts, findings and fail mode.
type nativeRules struct {
	ruleStream
	anthropic bool
	// last is, per streamed text, the newest delta event that carried it:
	// the model of the event that sends what is held at its end.
	last map[streamKey]nativeDelta
}

type nativeDelta struct {
	name, data []byte
}

func (h *Inference) newNativeRules(c *call, set *rules.Set) *nativeRules {
	return &nativeRules{
		ruleStream: ruleStream{h: h, c: c, set: set, streams: map[streamKey]textFilter{}},
		anthropic:  c.in.wire == llm.WireAnthropicMessages,
		last:       map[streamKey]nativeDelta{},
	}
}

// Push takes one framed event and returns the events to send.
func (f *nativeRules) Push(ev []byte) ([][]byte, *apierr.Error) {
	name, data := splitEvent(ev)
	if len(bytes.TrimSpace(data)) == 0 {
		return [][]byte{ev}, nil
	}
	v, err := f.parser.ParseBytes(data)
	if err != nil {
		return nil, f.unreadable()
	}
	typ := string(v.GetStringBytes("type"))
	if typ == "response.audio.delta" {
		return [][]byte{ev}, nil // base64 audio; its transcript comes in events of its own
	}
	key, delta := f.deltaKey(typ, v)
	shape := rules.Chunk
	if !delta && !f.anthropic {
		shape = rules.Message // a whole item or response: its arguments are JSON
	}
	doc, err := rules.Walk(data, shape)
	if err != nil {
		return nil, f.unreadable()
	}
	var outs [][]byte
	if !delta && typ != "ping" {
		// Whatever ends or follows a block sends what its texts hold.
		var e *apierr.Error
		if outs, e = f.flushAll(); e != nil {
			return nil, e
		}
	}
	repl := make([]string, len(doc.Texts))
	var local []int
	changed, emptied := false, false
	for i := range doc.Texts {
		t := &doc.Texts[i]
		repl[i] = t.Text
		if nativeSkip[lastField(t.Field)] {
			continue
		}
		if !delta || !f.streamed(t.Field) {
			local = append(local, i)
			continue
		}
		st := f.nativeStream(key, typ)
		out, found, block := st.Push(t.Text)
		if e := f.found(found, block); e != nil {
			return nil, e
		}
		if e := f.checked(st); e != nil {
			return nil, e
		}
		f.last[key] = nativeDelta{name: bytes.Clone(name), data: bytes.Clone(data)}
		repl[i] = out
		changed = changed || out != t.Text
		emptied = out == "" && t.Text != ""
	}
	// A Responses event that ends an item or the response, or reports
	// progress, restates what earlier events said: scanned (and redacted)
	// again, its hits recorded once, where the text first came.
	f.quiet = !f.anthropic && !delta && typ != "response.created" && !strings.HasSuffix(typ, ".added")
	e := f.scanLocal(doc, local, repl)
	f.quiet = false
	if e != nil {
		return nil, e
	}
	for _, i := range local {
		changed = changed || repl[i] != doc.Texts[i].Text
	}
	switch {
	case emptied && len(local) == 0:
		return outs, nil // all its text is held back
	case !changed:
		return append(outs, ev), nil
	}
	return append(outs, providers.AppendNativeEvent(nil, name, doc.Replace(data, repl))), nil
}

// deltaKey returns the streamed text an event is a delta of: Anthropic's
// content_block_delta by block index, a Responses "….delta" by type,
// output item and part.
func (f *nativeRules) deltaKey(typ string, v *fastjson.Value) (streamKey, bool) {
	if f.anthropic {
		if typ != "content_block_delta" {
			return streamKey{}, false
		}
		return streamKey{choice: v.GetInt64("index"), field: string(v.GetStringBytes("delta", "type")), sub: -1}, true
	}
	if !strings.HasSuffix(typ, ".delta") || v.Get("delta") == nil || v.Get("delta").Type() != fastjson.TypeString {
		return streamKey{}, false
	}
	k := streamKey{choice: v.GetInt64("output_index"), field: typ, sub: -1}
	for _, part := range [...]string{"content_index", "summary_index"} {
		if v.Exists(part) {
			k.sub = v.GetInt64(part)
		}
	}
	return k, true
}

// streamed reports whether the text at field of a delta event is the
// streamed one: Anthropic's delta.text, delta.thinking or
// delta.partial_json, a Responses event's delta.
func (f *nativeRules) streamed(field string) bool {
	if f.anthropic {
		return field == "delta.text" || field == "delta.thinking" || field == "delta.partial_json"
	}
	return field == "delta"
}

// nativeStream returns the filter of a streamed text: tool input and
// arguments (fragments of JSON) keep valid JSON when redacted.
func (f *nativeRules) nativeStream(key streamKey, typ string) textFilter {
	st, ok := f.streams[key]
	if !ok {
		if key.field == "input_json_delta" || strings.Contains(typ, "arguments") {
			st = f.set.NewArgStream(rules.Response, f.h.ruleBudget(f.c))
		} else {
			st = f.set.NewStream(rules.Response, f.h.ruleBudget(f.c))
		}
		f.streams[key] = st
		f.order = append(f.order, key)
	}
	return st
}

// flushAll ends every streamed text: what each holds goes out in a copy
// of its last delta event.
func (f *nativeRules) flushAll() ([][]byte, *apierr.Error) {
	var outs [][]byte
	for _, key := range f.order {
		st, ok := f.streams[key]
		if !ok {
			continue
		}
		out, e := f.flush(key, st)
		if e != nil {
			return nil, e
		}
		if out == "" {
			continue
		}
		if ev := f.deltaOf(key, out); ev != nil {
			outs = append(outs, ev)
		}
	}
	f.order = f.order[:0]
	return outs, nil
}

// deltaOf is the last delta event of key carrying text.
func (f *nativeRules) deltaOf(key streamKey, text string) []byte {
	d := f.last[key]
	doc, err := rules.Walk(d.data, rules.Chunk)
	if err != nil {
		return nil
	}
	repl := make([]string, len(doc.Texts))
	for i, t := range doc.Texts {
		repl[i] = t.Text
		if f.streamed(t.Field) {
			repl[i] = text
		}
	}
	return providers.AppendNativeEvent(nil, d.name, doc.Replace(d.data, repl))
}

// Flush sends what is still held at the clean end of the stream (the
// terminal event sent it already, unless the provider skipped the events
// that end a block).
func (f *nativeRules) Flush() [][]byte {
	outs, _ := f.flushAll()
	return outs
}

// lastField is the last member name of a text's path.
func lastField(field string) string {
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		return field[i+1:]
	}
	return field
}

// splitEvent returns the name and the data (its lines joined by "\n") of
// one framed SSE event.
func splitEvent(ev []byte) (name, data []byte) {
	lines := 0
	for len(ev) > 0 {
		var line []byte
		line, ev, _ = bytes.Cut(ev, []byte("\n"))
		switch {
		case bytes.HasPrefix(line, []byte("event: ")):
			name = line[len("event: "):]
		case bytes.HasPrefix(line, []byte("data: ")):
			d := line[len("data: "):]
			switch lines {
			case 0:
				data = d
			case 1:
				data = append(append(append([]byte(nil), data...), '\n'), d...)
			default:
				data = append(append(data, '\n'), d...)
			}
			lines++
		}
	}
	return name, data
}

// nativeRecorder keeps the events of a streamed native MISS as they went
// to the client, and stores them, with the stream's usage, when the
// stream ends cleanly: a hit replays them byte for byte.
type nativeRecorder struct {
	h      *Inference
	c      *call
	st     providers.Stream
	buf    []byte
	tooBig bool
}

func (r *nativeRecorder) observe(outs [][]byte) [][]byte {
	for _, ev := range outs {
		if len(r.buf)+len(ev) > respcache.DefaultMaxEntryBytes {
			r.tooBig = true
		}
		if !r.tooBig {
			r.buf = append(r.buf, ev...)
		}
	}
	return outs
}

func (r *nativeRecorder) store() {
	if !r.tooBig && len(r.buf) > 0 {
		r.h.put(r.c, r.buf, r.st.Usage())
	}
}

// newNativeFilter is newStreamFilter for a native door's stream.
func (h *Inference) newNativeFilter(c *call, st providers.Stream) streamFilter {
	f := &chain{}
	if set := h.ruleSet(c); set.Applies(rules.Response) {
		f.rules = h.newNativeRules(c, set)
	}
	if c.cache.store && c.in.stream {
		f.rec = &nativeRecorder{h: h, c: c, st: st}
	}
	if f.rules == nil && f.rec == nil {
		return nil
	}
	return f
}

// nativeHit applies the response rules to a stored native stream, event
// by event, as to a live one. A block refuses the hit.
func (h *Inference) nativeHit(c *call, stored []byte) ([]byte, *apierr.Error) {
	set := h.ruleSet(c)
	if !set.Applies(rules.Response) {
		return stored, nil
	}
	f := h.newNativeRules(c, set)
	out := make([]byte, 0, len(stored))
	for _, ev := range bytes.SplitAfter(stored, []byte("\n\n")) {
		if len(ev) == 0 {
			continue
		}
		evs, e := f.Push(ev)
		if e != nil {
			return nil, e
		}
		for _, x := range evs {
			out = append(out, x...)
		}
	}
	for _, x := range f.Flush() {
		out = append(out, x...)
	}
	return out, nil
}
