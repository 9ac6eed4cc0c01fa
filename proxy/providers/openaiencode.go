package providers

import (
	"strconv"

	"github.com/sluicehq/sluice/internal/jsonstr"
	"github.com/sluicehq/sluice/internal/llm"
)

// The one OpenAI chat encoder of the neutral answer model: every
// translating codec decodes its provider's answer into an llm.Response
// (or, streamed, llm.Events) and relays what these functions write.
// They append into a caller's buffer, without reflection, so that a
// stream can reuse one buffer for all its chunks.

// OpenAIOptions are the choices the OpenAI encoder leaves to a codec:
// where its answers have always differed and the neutral model has no
// say.
type OpenAIOptions struct {
	// ReasoningDetails writes usage.completion_tokens_details with
	// Usage.ReasoningTokens, zero included (Gemini's answers, as Google's
	// own OpenAI compatibility layer writes them).
	ReasoningDetails bool
	// ThinkingBlocks writes a message's thinking and redacted thinking
	// parts, signatures and data included, as message.thinking_blocks
	// ([{type: thinking, thinking, signature} | {type: redacted_thinking,
	// data}], LiteLLM's field), when it has any: for a door that gives
	// them back to its client (providers.Request.ThinkingBlocks).
	ThinkingBlocks bool
}

// EncodeOpenAIResponse is the chat.completion of r. Each choice's message
// content is the concatenation of its text parts, null when it has none
// (a codec adds an empty text part for an empty answer that is not null);
// its refusal is null (no provider of the gateway's gives one apart);
// tool calls carry their signature as extra_content.google.
// thought_signature. The usage object is there when the provider
// reported usage (Usage.Present).
func EncodeOpenAIResponse(r *llm.Response) ([]byte, error) {
	n := 256
	for i := range r.Choices {
		for _, p := range r.Choices[i].Message.Parts {
			n += len(p.Text)
		}
		for _, tc := range r.Choices[i].Message.ToolCalls {
			n += 128 + len(tc.Arguments)
		}
	}
	return AppendOpenAIResponse(make([]byte, 0, n), r, OpenAIOptions{}), nil
}

// AppendOpenAIResponse appends the chat.completion of r to dst, as
// EncodeOpenAIResponse writes it with the options opts.
func AppendOpenAIResponse(dst []byte, r *llm.Response, opts OpenAIOptions) []byte {
	dst = appendOpenAIHead(dst, r.ID, "chat.completion", r.Created, r.Model)
	dst = append(dst, `"choices":[`...)
	for i := range r.Choices {
		c := &r.Choices[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"index":`...)
		dst = strconv.AppendInt(dst, int64(c.Index), 10)
		dst = append(dst, `,"message":{"role":"assistant","content":`...)
		dst = appendTextContent(dst, c.Message.Parts)
		dst = append(dst, `,"refusal":null`...)
		if opts.ThinkingBlocks {
			dst = appendThinkingBlocks(dst, c.Message.Parts)
		}
		if len(c.Message.ToolCalls) > 0 {
			dst = append(dst, `,"tool_calls":[`...)
			for j := range c.Message.ToolCalls {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendToolCall(dst, &c.Message.ToolCalls[j])
			}
			dst = append(dst, ']')
		}
		dst = append(dst, `},"logprobs":null,"finish_reason":"`...)
		dst = append(dst, c.Finish...)
		dst = append(dst, '"')
		dst = appendStopSequence(dst, c.StopSequence)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if r.Usage.Present {
		dst = append(dst, `,"usage":`...)
		dst = appendUsage(dst, r.Usage, opts)
	}
	return append(dst, '}')
}

// appendStopSequence appends ,"stop_sequence":… when the provider said
// which stop sequence ended the choice (llm.Choice.StopSequence): an
// extension of OpenAI's choice, which the Messages door gives back as
// Anthropic's stop_sequence.
func appendStopSequence[S ~string | ~[]byte](dst []byte, seq S) []byte {
	if len(seq) == 0 {
		return dst
	}
	dst = append(dst, `,"stop_sequence":`...)
	return jsonstr.Append(dst, seq)
}

// appendThinkingBlocks appends ,"thinking_blocks":[…] with the thinking
// and redacted thinking parts, when there are any.
func appendThinkingBlocks(dst []byte, parts []llm.Part) []byte {
	n := 0
	for i := range parts {
		p := &parts[i]
		if p.Kind != llm.PartThinking && p.Kind != llm.PartRedactedThinking {
			continue
		}
		if n == 0 {
			dst = append(dst, `,"thinking_blocks":[`...)
		} else {
			dst = append(dst, ',')
		}
		n++
		if p.Kind == llm.PartThinking {
			dst = append(dst, `{"type":"thinking","thinking":`...)
			dst = jsonstr.Append(dst, p.Text)
			dst = append(dst, `,"signature":`...)
			dst = jsonstr.Append(dst, p.Signature)
		} else {
			dst = append(dst, `{"type":"redacted_thinking","data":`...)
			dst = jsonstr.Append(dst, p.Data)
		}
		dst = append(dst, '}')
	}
	if n > 0 {
		dst = append(dst, ']')
	}
	return dst
}

// appendOpenAIHead appends the fields an answer or chunk starts with,
// up to and including the comma before "choices".
func appendOpenAIHead[S ~string | ~[]byte](dst []byte, id S, object string, created int64, model S) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonstr.Append(dst, id)
	dst = append(dst, `,"object":"`...)
	dst = append(dst, object...)
	dst = append(dst, `","created":`...)
	dst = strconv.AppendInt(dst, created, 10)
	dst = append(dst, `,"model":`...)
	dst = jsonstr.Append(dst, model)
	return append(dst, ',')
}

// appendTextContent appends the text parts of a message joined, as one
// JSON string, or null when there are none.
func appendTextContent(dst []byte, parts []llm.Part) []byte {
	found := false
	for i := range parts {
		if parts[i].Kind != llm.PartText {
			continue
		}
		if !found {
			dst = append(dst, '"')
			found = true
		}
		dst = jsonstr.AppendEscaped(dst, parts[i].Text)
	}
	if !found {
		return append(dst, "null"...)
	}
	return append(dst, '"')
}

// appendToolCall appends one tool call of an answer.
func appendToolCall(dst []byte, tc *llm.ToolCall) []byte {
	dst = append(dst, '{')
	return appendToolCallRest(dst, tc.ID, tc.Name, tc.Arguments, tc.Signature)
}

// appendToolCallRest appends a tool call's fields after "{" (and, in a
// chunk, its index) and the closing "}": the id, the type, the function
// and the signature as extra_content.google.thought_signature.
func appendToolCallRest[S ~string | ~[]byte](dst []byte, id, name, args, signature S) []byte {
	dst = append(dst, `"id":`...)
	dst = jsonstr.Append(dst, id)
	dst = append(dst, `,"type":"function","function":{"name":`...)
	dst = jsonstr.Append(dst, name)
	dst = append(dst, `,"arguments":`...)
	dst = jsonstr.Append(dst, args)
	dst = append(dst, '}')
	if len(signature) > 0 {
		dst = append(dst, `,"extra_content":{"google":{"thought_signature":`...)
		dst = jsonstr.Append(dst, signature)
		dst = append(dst, "}}"...)
	}
	return append(dst, '}')
}

// AppendUsageJSON appends u as OpenAI's usage object.
func AppendUsageJSON(dst []byte, u llm.Usage) []byte {
	return appendUsage(dst, u, OpenAIOptions{})
}

// appendUsage appends u as OpenAI's usage object, with
// completion_tokens_details when opts asks for it.
func appendUsage(dst []byte, u llm.Usage, opts OpenAIOptions) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, u.PromptTokens, 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, u.CompletionTokens, 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, u.TotalTokens, 10)
	dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
	dst = strconv.AppendInt(dst, u.CachedTokens, 10)
	if u.CacheCreationTokens > 0 {
		// An extension of OpenAI's usage: the prompt tokens written to
		// the provider's cache (Anthropic, Bedrock), which the Messages
		// and Responses doors give back.
		dst = append(dst, `,"cache_creation_tokens":`...)
		dst = strconv.AppendInt(dst, u.CacheCreationTokens, 10)
	}
	dst = append(dst, '}')
	if opts.ReasoningDetails {
		dst = append(dst, `,"completion_tokens_details":{"reasoning_tokens":`...)
		dst = strconv.AppendInt(dst, u.ReasoningTokens, 10)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// ChunkEncoder is the one OpenAI encoder of a neutral stream: it writes
// each batch of llm.Events a codec's stream translator gives as one
// chat.completion.chunk, into a buffer it reuses, so that relaying a
// chunk does not allocate. The zero value is ready; Options may be set
// before the first batch.
type ChunkEncoder struct {
	Options OpenAIOptions
	head    []byte // `{"id":…,"object":…,"created":…,"model":…,`
	modelAt int    // where `,"model":` begins in head
	out     []byte // the chunk Encode returned; reused
}

// grow gives out room for a chunk, once, rather than one allocation per
// doubling.
func (e *ChunkEncoder) grow() {
	if cap(e.out) < len(e.head)+256 {
		e.out = make([]byte, 0, len(e.head)+512)
	}
}

// start writes the head of the chunks that follow ev, an EventStart. An
// EventStart without Model keeps the model of the one before (a provider
// that names the model only in some events, or never).
func (e *ChunkEncoder) start(ev *llm.Event) {
	var model []byte // the model as the head holds it, `,"model":"…",`
	if len(ev.Model) == 0 && len(e.head) > 0 {
		e.grow()
		model = append(e.out[:0], e.head[e.modelAt:]...) // scratch: out holds no chunk yet
	}
	if n := 96 + 2*(len(ev.ID)+len(ev.Model)) + len(model); cap(e.head) < n {
		e.head = make([]byte, 0, n) // one allocation, not one per doubling
	}
	h := append(e.head[:0], `{"id":`...)
	h = jsonstr.Append(h, ev.ID)
	h = append(h, `,"object":"chat.completion.chunk","created":`...)
	h = strconv.AppendInt(h, ev.Created, 10)
	e.modelAt = len(h)
	if model != nil {
		e.head = append(h, model...)
		return
	}
	h = append(h, `,"model":`...)
	h = jsonstr.Append(h, ev.Model)
	e.head = append(h, ',')
}

// Encode returns the chunk of a batch of events, valid until the next
// call, or nil when the batch writes nothing (only EventStart). An
// EventUsage is the chunk `"choices":[],"usage":{…}`; the runs of
// choice events with one Index are the chunk's choices, each with a delta
// of the role, the content (the texts joined) and the tool calls, and
// the finish reason (null until EventFinish).
func (e *ChunkEncoder) Encode(evs ...llm.Event) []byte {
	var usage *llm.Usage
	choices := false
	for i := range evs {
		switch evs[i].Kind {
		case llm.EventStart:
			e.start(&evs[i])
		case llm.EventUsage:
			usage = &evs[i].Usage
		default:
			choices = true
		}
	}
	if !choices && usage == nil {
		return nil
	}
	if e.head == nil {
		e.start(&llm.Event{Kind: llm.EventStart})
	}
	e.grow()
	b := append(e.out[:0], e.head...)
	b = append(b, `"choices":[`...)
	first := true
	for i := 0; i < len(evs); {
		if k := evs[i].Kind; k == llm.EventStart || k == llm.EventUsage {
			i++
			continue
		}
		j := i + 1
		for j < len(evs) && evs[j].Index == evs[i].Index && evs[j].Kind != llm.EventStart && evs[j].Kind != llm.EventUsage {
			j++
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendChoiceDelta(b, evs[i:j])
		i = j
	}
	b = append(b, ']')
	if usage != nil {
		b = append(b, `,"usage":`...)
		b = appendUsage(b, *usage, e.Options)
	}
	e.out = append(b, '}')
	return e.out
}

// appendChoiceDelta appends one choice of a chunk from a run of choice
// events of one Index.
func appendChoiceDelta(b []byte, run []llm.Event) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(run[0].Index), 10)
	b = append(b, `,"delta":{`...)
	comma := false
	for i := range run {
		if run[i].Kind == llm.EventRole {
			b = append(b, `"role":`...)
			b = jsonstr.Append(b, run[i].Role)
			comma = true
			break
		}
	}
	b, comma = appendThinkingDelta(b, run, comma)
	text := false
	for i := range run {
		if run[i].Kind != llm.EventText {
			continue
		}
		if !text {
			if comma {
				b = append(b, ',')
			}
			b = append(b, `"content":"`...)
			text, comma = true, true
		}
		b = jsonstr.AppendEscaped(b, run[i].Text)
	}
	if text {
		b = append(b, '"')
	}
	tools := false
	for i := range run {
		if run[i].Kind != llm.EventToolCall {
			continue
		}
		if !tools {
			if comma {
				b = append(b, ',')
			}
			b = append(b, `"tool_calls":[`...)
			tools = true
		} else {
			b = append(b, ',')
		}
		t := &run[i].Tool
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(t.Index), 10)
		b = append(b, ',')
		if t.First {
			b = appendToolCallRest(b, t.ID, t.Name, t.Arguments, t.Signature)
		} else {
			b = append(b, `"function":{"arguments":`...)
			b = jsonstr.Append(b, t.Arguments)
			b = append(b, "}}"...)
		}
	}
	if tools {
		b = append(b, ']')
	}
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	finish, seq := llm.FinishReason(""), []byte(nil)
	for i := range run {
		if run[i].Kind == llm.EventFinish {
			finish, seq = run[i].Finish, run[i].Text
		}
	}
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = append(b, finish...)
		b = append(b, '"')
		b = appendStopSequence(b, seq)
	}
	return append(b, '}')
}

// appendThinkingDelta appends the thinking events of run to a delta:
// the thinking text joined as reasoning_content, and the signatures and
// redacted blocks as thinking_blocks (LiteLLM's delta field:
// {"type":"thinking","thinking":"","signature":…} and
// {"type":"redacted_thinking","data":…}). comma says whether a field came
// before; the result says whether one has now.
func appendThinkingDelta(b []byte, run []llm.Event, comma bool) ([]byte, bool) {
	text, blocks := false, false
	for i := range run {
		switch run[i].Kind {
		case llm.EventThinking:
			text = true
		case llm.EventThinkingSignature, llm.EventRedactedThinking:
			blocks = true
		}
	}
	if text {
		if comma {
			b = append(b, ',')
		}
		b = append(b, `"reasoning_content":"`...)
		for i := range run {
			if run[i].Kind == llm.EventThinking {
				b = jsonstr.AppendEscaped(b, run[i].Text)
			}
		}
		b = append(b, '"')
		comma = true
	}
	if blocks {
		if comma {
			b = append(b, ',')
		}
		b = append(b, `"thinking_blocks":[`...)
		n := 0
		for i := range run {
			k := run[i].Kind
			if k != llm.EventThinkingSignature && k != llm.EventRedactedThinking {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			if k == llm.EventThinkingSignature {
				b = append(b, `{"type":"thinking","thinking":"","signature":`...)
			} else {
				b = append(b, `{"type":"redacted_thinking","data":`...)
			}
			b = jsonstr.Append(b, run[i].Text)
			b = append(b, '}')
		}
		b = append(b, ']')
		comma = true
	}
	return b, comma
}
