package proxy

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/jsonstr"
	"github.com/sluicehq/sluice/internal/llm"
)

// messagesDoor is the Anthropic Messages door of /compat/v1/messages
// (CONTRACT §12): any provider, translated. It translates at the door:
// decode turns the client's Messages body into an OpenAI chat body
// (llm.DecodeAnthropicMessages, llm.EncodeOpenAIChat), which the pipeline
// forwards, rules, caches and logs as it does the chat door's, so every
// codec serves it unchanged. Answers and stream chunks come back
// OpenAI-shaped and the door writes them as Anthropic's message and
// events.
//
// Unlike openAIDoor it has state: one messagesDoor is made per request
// (doorFor) and carries the stream's translation from chunk to chunk.
type messagesDoor struct {
	// inputTokens is the gateway's count of the prompt, for message_start
	// before the provider reports its usage (set by readBody).
	inputTokens int64
	// count is the door of count_tokens, whose body needs no max_tokens.
	count bool
	// The stream's state.
	started bool
	// block is the kind of the open content block, 0 when none is open;
	// index is the number of blocks opened so far.
	block byte
	index int
	// tool maps the OpenAI tool call index of the open tool_use block.
	tool       int64
	stopReason string
	// stopSequence is the stop sequence that ended the answer, when the
	// provider said which (a copy: the chunk's bytes do not outlive it).
	stopSequence []byte
	usage        llm.Usage
	p            fastjson.Parser
}

var _ door = (*messagesDoor)(nil)

// The kinds of an open block.
const (
	blockText     = 't'
	blockThinking = 'r'
	blockTool     = 'u'
)

func (d *messagesDoor) decode(p *fastjson.Parser, body []byte, op llm.Operation) (inbound, *apierr.Error) {
	// The client's own bytes pass the chat door's checks first: valid
	// UTF-8 and JSON, no duplicate keys, no fields that choose a host.
	raw, e := parseBody(p, body, op)
	if e != nil {
		return raw, e
	}
	if raw.maxTokens == 0 && !d.count {
		return raw, apierr.Invalid("max_tokens", "max_tokens is required")
	}
	r, err := llm.DecodeAnthropicMessages(body)
	if err != nil {
		return raw, translateError(err)
	}
	chat, err := llm.EncodeOpenAIChat(r)
	if err != nil {
		return raw, translateError(err)
	}
	in, e := parseBody(p, chat, op)
	if e != nil {
		return in, e
	}
	in.body = chat
	in.thinkingBlocks = true
	if llm.HasThinking(r) || llm.HasToolExtras(r) {
		// The chat body drops thinking and its signatures, tool results'
		// is_error and tools' cache_control; the codecs that read them
		// back (Anthropic, Bedrock) get them from the neutral request.
		n, err := llm.DecodeOpenAIChat(chat)
		if err != nil {
			return in, translateError(err)
		}
		llm.CarryThinking(n, r)
		llm.CarryToolExtras(n, r)
		in.neutral = n
	}
	return in, nil
}

// anthropicBeta is the client's anthropic-beta header when c came
// through the translating Messages door, for the codecs of Claude
// (providers.Request.AnthropicBeta); "" otherwise.
func (c *call) anthropicBeta() string {
	if _, ok := c.door.(*messagesDoor); !ok {
		return ""
	}
	return string(c.ctx.Request.Header.Peek("anthropic-beta"))
}

// countUpstream makes a count_tokens request whose first target is
// Anthropic the native door's count (CONTRACT §12: Anthropic counts for
// its own models). It keeps the plan's Anthropic targets and turns the
// call into /anthropic/v1/messages/count_tokens: the client's own body
// (the provider codec replaces "model"), Anthropic's wire, never
// streamed, answered as it comes by the native door, which writes the
// gateway's errors in the same Anthropic shape. The pipeline then runs as
// for the native count: request rules and in-flight limits apply, no rate
// limit or budget (policies), cost 0 (the codec's zero usage). It reports
// false, changing nothing, for any other provider.
func (h *Inference) countUpstream(c *call) bool {
	t := c.plan.targets
	if len(t) == 0 || t[0].Provider != "anthropic" {
		return false
	}
	kept := t[:0]
	for _, x := range t {
		if x.Provider == "anthropic" {
			kept = append(kept, x)
		}
	}
	c.plan.targets = kept
	c.route.op = llm.OpCountTokens
	c.body = c.ctx.Request.Body()
	c.in.body, c.in.neutral, c.in.thinkingBlocks = nil, nil, false
	c.in.wire, c.in.stream, c.in.includeUsage = llm.WireAnthropicMessages, false, false
	c.door = nativeMessagesDoor{}
	return true
}

// countTokens answers count_tokens (CONTRACT §12) with the gateway's
// count of the prompt, without an upstream call, for a target that is not
// Anthropic (countUpstream): after the plan (so the model must be one the
// token may use here) and before the policies, so it counts against no
// rate limit or budget. It is logged, unbilled.
func (h *Inference) countTokens(c *call) *apierr.Error {
	d, _ := c.door.(*messagesDoor)
	if d == nil {
		return apierr.Internal()
	}
	if t := c.plan.targets; len(t) > 0 {
		c.rec.Provider, c.rec.Model = t[0].Provider, t[0].Model
	}
	ctx := c.ctx
	ctx.SetStatusCode(http.StatusOK)
	ctx.SetContentType("application/json")
	b := append([]byte(`{"input_tokens":`), strconv.AppendInt(nil, d.inputTokens, 10)...)
	ctx.SetBody(append(b, '}'))
	c.rec.Status = http.StatusOK
	return nil
}

// translateError is the 400 of a body the door cannot translate.
func translateError(err error) *apierr.Error {
	var ue *llm.UnsupportedError
	if errors.As(err, &ue) {
		return apierr.New(http.StatusBadRequest, apierr.CodeUnsupportedFeature, "%s", ue.Message).WithParam(ue.Param)
	}
	return apierr.New(http.StatusBadRequest, apierr.CodeInvalidRequest, "the request does not fit the Messages schema: %v", err)
}

// answer writes an OpenAI chat.completion as an Anthropic message.
func (d *messagesDoor) answer(body []byte) []byte {
	v, err := d.p.ParseBytes(body)
	if err != nil {
		return body
	}
	dst := make([]byte, 0, len(body)+128)
	dst = append(dst, `{"id":`...)
	dst = jsonstr.Append(dst, v.GetStringBytes("id"))
	dst = append(dst, `,"type":"message","role":"assistant","model":`...)
	dst = jsonstr.Append(dst, v.GetStringBytes("model"))
	dst = append(dst, `,"content":[`...)
	ch := v.Get("choices", "0")
	m := ch.Get("message")
	n := 0
	sep := func() {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
	}
	if tb := m.GetArray("thinking_blocks"); len(tb) > 0 {
		// A codec's thinking blocks, signed (providers.Request.ThinkingBlocks).
		for _, b := range tb {
			sep()
			if string(b.GetStringBytes("type")) == "redacted_thinking" {
				dst = append(dst, `{"type":"redacted_thinking","data":`...)
				dst = jsonstr.Append(dst, b.GetStringBytes("data"))
			} else {
				dst = append(dst, `{"type":"thinking","thinking":`...)
				dst = jsonstr.Append(dst, b.GetStringBytes("thinking"))
				dst = append(dst, `,"signature":`...)
				dst = jsonstr.Append(dst, b.GetStringBytes("signature"))
			}
			dst = append(dst, '}')
		}
	} else if t := m.GetStringBytes("reasoning_content"); len(t) > 0 {
		sep()
		dst = append(dst, `{"type":"thinking","thinking":`...)
		dst = jsonstr.Append(dst, t)
		dst = append(dst, `,"signature":""}`...)
	}
	if t := m.GetStringBytes("content"); len(t) > 0 {
		sep()
		dst = append(dst, `{"type":"text","text":`...)
		dst = jsonstr.Append(dst, t)
		dst = append(dst, '}')
	}
	for _, tc := range m.GetArray("tool_calls") {
		sep()
		dst = append(dst, `{"type":"tool_use","id":`...)
		dst = jsonstr.Append(dst, tc.GetStringBytes("id"))
		dst = append(dst, `,"name":`...)
		dst = jsonstr.Append(dst, tc.GetStringBytes("function", "name"))
		dst = append(dst, `,"input":`...)
		dst = appendInput(dst, tc.GetStringBytes("function", "arguments"))
		dst = append(dst, '}')
	}
	dst = append(dst, `],`...)
	dst = appendStop(dst, stopReason(ch.GetStringBytes("finish_reason")), ch.GetStringBytes("stop_sequence"))
	dst = append(dst, `,"usage":`...)
	dst = appendMessagesUsage(dst, usageOf(v.Get("usage")), true)
	return append(dst, '}')
}

// appendInput appends a tool call's arguments as its input object: the
// arguments when they are a JSON object, else {} (none given) or the
// arguments' text under "arguments", so that nothing is lost.
func appendInput(dst, args []byte) []byte {
	if len(args) == 0 {
		return append(dst, "{}"...)
	}
	var p fastjson.Parser
	if v, err := p.ParseBytes(args); err == nil && v.Type() == fastjson.TypeObject {
		return v.MarshalTo(dst)
	}
	dst = append(dst, `{"arguments":`...)
	dst = jsonstr.Append(dst, args)
	return append(dst, '}')
}

// stopReason maps an OpenAI finish_reason to Anthropic's stop_reason.
func stopReason(finish []byte) string {
	switch string(finish) {
	case "length":
		return "max_tokens"
	case "tool_calls", "function_call":
		return "tool_use"
	case "content_filter":
		return "refusal"
	}
	return "end_turn"
}

// appendStop appends "stop_reason" and "stop_sequence": stop_sequence
// with the sequence when the provider said which one ended an answer
// that stopped (the chat answer's stop_sequence extension), else
// reason and null.
func appendStop(dst []byte, reason string, seq []byte) []byte {
	dst = append(dst, `"stop_reason":`...)
	if len(seq) == 0 || reason != "end_turn" {
		dst = jsonstr.Append(dst, reason)
		return append(dst, `,"stop_sequence":null`...)
	}
	dst = append(dst, `"stop_sequence","stop_sequence":`...)
	return jsonstr.Append(dst, seq)
}

// appendMessagesUsage appends u as Anthropic's usage: input_tokens are
// the prompt tokens neither read from nor written to the provider's
// cache. withInput false leaves out input_tokens and the cache counts
// (message_start carries them when the provider reported no usage yet).
func appendMessagesUsage(dst []byte, u llm.Usage, withInput bool) []byte {
	dst = append(dst, '{')
	if withInput {
		in := u.PromptTokens - u.CachedTokens - u.CacheCreationTokens
		if in < 0 {
			in = 0
		}
		dst = append(dst, `"input_tokens":`...)
		dst = strconv.AppendInt(dst, in, 10)
		dst = append(dst, `,"cache_read_input_tokens":`...)
		dst = strconv.AppendInt(dst, u.CachedTokens, 10)
		dst = append(dst, `,"cache_creation_input_tokens":`...)
		dst = strconv.AppendInt(dst, u.CacheCreationTokens, 10)
		dst = append(dst, ',')
	}
	dst = append(dst, `"output_tokens":`...)
	dst = strconv.AppendInt(dst, u.CompletionTokens, 10)
	return append(dst, '}')
}

// appendChunk translates one OpenAI chunk into Anthropic events:
// message_start before the first, then the content blocks — a block is
// opened by its first delta (content_block_start) and closed when a
// block of another kind, or another tool call, begins.
func (d *messagesDoor) appendChunk(dst, chunk []byte) []byte {
	v, err := d.p.ParseBytes(chunk)
	if err != nil {
		return dst
	}
	if u := v.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		d.usage = usageOf(u)
	}
	if !d.started {
		dst = d.appendStart(dst, v.GetStringBytes("id"), v.GetStringBytes("model"))
	}
	ch := v.Get("choices", "0")
	if ch == nil {
		return dst
	}
	delta := ch.Get("delta")
	if t := delta.GetStringBytes("reasoning_content"); len(t) > 0 {
		dst = d.open(dst, blockThinking, -1, nil, nil)
		dst = d.appendDelta(dst, `{"type":"thinking_delta","thinking":`, t)
	}
	for _, tb := range delta.GetArray("thinking_blocks") {
		dst = d.appendThinkingBlock(dst, tb)
	}
	if t := delta.GetStringBytes("content"); len(t) > 0 {
		dst = d.open(dst, blockText, -1, nil, nil)
		dst = d.appendDelta(dst, `{"type":"text_delta","text":`, t)
	}
	for _, tc := range delta.GetArray("tool_calls") {
		i := tc.GetInt64("index")
		if id := tc.GetStringBytes("id"); len(id) > 0 || d.block != blockTool || d.tool != i {
			dst = d.open(dst, blockTool, i, id, tc.GetStringBytes("function", "name"))
		}
		if args := tc.GetStringBytes("function", "arguments"); len(args) > 0 {
			dst = d.appendDelta(dst, `{"type":"input_json_delta","partial_json":`, args)
		}
	}
	if fr := ch.GetStringBytes("finish_reason"); len(fr) > 0 {
		d.stopReason = stopReason(fr)
		d.stopSequence = append(d.stopSequence[:0], ch.GetStringBytes("stop_sequence")...)
	}
	return dst
}

// appendThinkingBlock appends an element of a delta's thinking_blocks
// (a codec's signed thinking, providers.Request.ThinkingBlocks): a
// thinking one's signature is the signature_delta that ends the open
// thinking block (opened when no thinking came before it); a
// redacted_thinking one is a whole block of its own.
func (d *messagesDoor) appendThinkingBlock(dst []byte, tb *fastjson.Value) []byte {
	switch string(tb.GetStringBytes("type")) {
	case "thinking":
		dst = d.open(dst, blockThinking, -1, nil, nil)
		if t := tb.GetStringBytes("thinking"); len(t) > 0 {
			dst = d.appendDelta(dst, `{"type":"thinking_delta","thinking":`, t)
		}
		if sig := tb.GetStringBytes("signature"); len(sig) > 0 {
			dst = d.appendDelta(dst, `{"type":"signature_delta","signature":`, sig)
			dst = d.closeBlock(dst) // thinking that follows is another block
		}
	case "redacted_thinking":
		dst = d.closeBlock(dst)
		dst = append(dst, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":"...)
		dst = strconv.AppendInt(dst, int64(d.index), 10)
		dst = append(dst, `,"content_block":{"type":"redacted_thinking","data":`...)
		dst = jsonstr.Append(dst, tb.GetStringBytes("data"))
		dst = append(dst, "}}\n\n"...)
		d.block = blockThinking
		dst = d.closeBlock(dst)
	}
	return dst
}

// appendStart appends message_start, with the gateway's count of the
// prompt as its input_tokens unless the provider already reported usage.
func (d *messagesDoor) appendStart(dst, id, model []byte) []byte {
	d.started = true
	dst = append(dst, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":"...)
	dst = jsonstr.Append(dst, id)
	dst = append(dst, `,"type":"message","role":"assistant","model":`...)
	dst = jsonstr.Append(dst, model)
	dst = append(dst, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	u := d.usage
	if !u.Present {
		u = llm.Usage{PromptTokens: d.inputTokens}
	}
	u.CompletionTokens = 0
	dst = appendMessagesUsage(dst, u, true)
	return append(dst, "}}\n\n"...)
}

// open makes a block of kind the open one: it closes another, and starts
// the new one (a tool_use block with id and name).
func (d *messagesDoor) open(dst []byte, kind byte, tool int64, id, name []byte) []byte {
	if d.block == kind && kind != blockTool {
		return dst
	}
	dst = d.closeBlock(dst)
	d.block, d.tool = kind, tool
	dst = append(dst, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":"...)
	dst = strconv.AppendInt(dst, int64(d.index), 10)
	switch kind {
	case blockText:
		dst = append(dst, `,"content_block":{"type":"text","text":""}}`...)
	case blockThinking:
		dst = append(dst, `,"content_block":{"type":"thinking","thinking":"","signature":""}}`...)
	case blockTool:
		dst = append(dst, `,"content_block":{"type":"tool_use","id":`...)
		dst = jsonstr.Append(dst, id)
		dst = append(dst, `,"name":`...)
		dst = jsonstr.Append(dst, name)
		dst = append(dst, `,"input":{}}}`...)
	}
	return append(dst, "\n\n"...)
}

// appendDelta appends a content_block_delta of the open block: head is
// the delta object up to its text, which is t.
func (d *messagesDoor) appendDelta(dst []byte, head string, t []byte) []byte {
	dst = append(dst, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"...)
	dst = strconv.AppendInt(dst, int64(d.index), 10)
	dst = append(dst, `,"delta":`...)
	dst = append(dst, head...)
	dst = jsonstr.Append(dst, t)
	return append(dst, "}}\n\n"...)
}

// closeBlock appends content_block_stop for the open block, if any.
func (d *messagesDoor) closeBlock(dst []byte) []byte {
	if d.block == 0 {
		return dst
	}
	dst = append(dst, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":"...)
	dst = strconv.AppendInt(dst, int64(d.index), 10)
	d.block = 0
	d.index++
	return append(dst, "}\n\n"...)
}

// appendEnd closes the stream: the open block, message_delta with the
// stop reason and the usage, message_stop; or, when e cut the stream
// short, Anthropic's error event.
func (d *messagesDoor) appendEnd(dst []byte, e *apierr.Error) []byte {
	if e != nil {
		dst = append(dst, "event: error\ndata: "...)
		return append(appendMessagesError(dst, e), "\n\n"...)
	}
	if !d.started {
		dst = d.appendStart(dst, nil, nil)
	}
	dst = d.closeBlock(dst)
	stop := d.stopReason
	if stop == "" {
		stop = "end_turn"
	}
	dst = append(dst, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{"...)
	dst = appendStop(dst, stop, d.stopSequence)
	dst = append(dst, `},"usage":`...)
	dst = appendMessagesUsage(dst, d.usage, d.usage.Present)
	dst = append(dst, "}\n\n"...)
	return append(dst, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
}

func (d *messagesDoor) errorBody(e *apierr.Error) []byte { return appendMessagesError(nil, e) }

// appendMessagesError appends e in Anthropic's shape, with Anthropic's
// error type for the status (CONTRACT §12) and the gateway's code.
func appendMessagesError(dst []byte, e *apierr.Error) []byte {
	dst = append(dst, `{"type":"error","error":{"type":"`...)
	dst = append(dst, messagesErrorType(e.Status)...)
	dst = append(dst, `","message":`...)
	dst = jsonstr.Append(dst, e.Message)
	dst = append(dst, `,"code":`...)
	dst = jsonstr.Append(dst, e.Code)
	if e.Param != "" {
		dst = append(dst, `,"param":`...)
		dst = jsonstr.Append(dst, e.Param)
	}
	return append(dst, "}}"...)
}

// messagesErrorType is Anthropic's error.type of an HTTP status.
func messagesErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}
