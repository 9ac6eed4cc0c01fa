package anthropic

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/sse"
)

// Stream translation.

// stream is an Anthropic event stream presented as OpenAI
// chunks; Close before message_stop closes the connection, so that
// Anthropic stops generating.
type stream = providers.TranslatedStream[translator, *translator]

// SeenUsage, Terminated and ParserOf serve providers.TranslatedStream.
func (t *translator) SeenUsage() llm.Usage { return t.usage }
func (t *translator) Terminated() bool     { return t.done }
func (t *translator) ParserOf() **fastjson.Parser {
	return &t.parser
}

// streamContext is what translating a stream needs besides its events.
type streamContext struct {
	jsonTool  string
	created   int64
	model     string // the requested model, until message_start names one
	wantUsage bool
	key       secret.Value
	// thinkingBlocks relays thinking, signatures and redacted thinking
	// (providers.Request.ThinkingBlocks).
	thinkingBlocks bool
}

// blockKind is what a content block of the stream becomes.
type blockKind uint8

const (
	blockOther blockKind = iota // text, thinking, …: deltas say what they are
	blockTool                   // a tool call
	blockJSON                   // the forced tool of JSON mode: its input is content
)

// streamBlock is a content block of the stream that needs state.
type streamBlock struct {
	index    int64 // Anthropic's block index
	kind     blockKind
	tool     int  // OpenAI's tool call index: counts tool blocks only
	sentArgs bool // some arguments were relayed
}

// translator turns Anthropic's SSE events into neutral llm.Events
// (nextEvents), which the shared encoder writes as OpenAI chunks (Next).
// It does not own its reader; its parser belongs to the caller.
type translator struct {
	sc     streamContext
	events *sse.Reader
	parser *fastjson.Parser
	enc    providers.ChunkEncoder
	batch  [3]llm.Event // the events nextEvents returned; reused
	blocks []streamBlock
	tools  int

	input, output, cacheRead, cacheCreation int64
	cacheWrite1h                            int64 // cache_creation.ephemeral_1h_input_tokens
	usage                                   llm.Usage

	pendingUsage bool  // the usage chunk is due
	done         bool  // message_stop was read
	err          error // sticky: io.EOF after message_stop, or why it broke
}

func (t *translator) init(r io.Reader, p *fastjson.Parser, sc streamContext) {
	*t = translator{sc: sc, events: sse.NewReader(r, providers.MaxStreamEvent), parser: p}
	t.enc.Encode(llm.Event{Kind: llm.EventStart, Model: []byte(sc.model), Created: sc.created})
}

// events1 returns the batch of the one event ev, in t.batch.
func (t *translator) events1(ev llm.Event) []llm.Event {
	t.batch[0] = ev
	return t.batch[:1]
}

func (t *translator) content(text []byte) []llm.Event {
	return t.events1(llm.Event{Kind: llm.EventText, Text: text})
}

func (t *translator) arguments(tool int, args []byte) []llm.Event {
	return t.events1(llm.Event{Kind: llm.EventToolCall, Tool: llm.ToolCallDelta{Index: tool, Arguments: args}})
}

func (t *translator) block(index int64) *streamBlock {
	for i := range t.blocks {
		if t.blocks[i].index == index {
			return &t.blocks[i]
		}
	}
	return nil
}

func (t *translator) readUsage(u *fastjson.Value) {
	if u == nil || u.Type() != fastjson.TypeObject {
		return
	}
	for _, f := range []struct {
		key string
		dst *int64
	}{{"input_tokens", &t.input}, {"output_tokens", &t.output},
		{"cache_read_input_tokens", &t.cacheRead}, {"cache_creation_input_tokens", &t.cacheCreation}} {
		if n := u.Get(f.key); n != nil && n.Type() == fastjson.TypeNumber {
			*f.dst = max(n.GetInt64(), 0)
		}
	}
	if n := u.Get("cache_creation", "ephemeral_1h_input_tokens"); n != nil && n.Type() == fastjson.TypeNumber {
		t.cacheWrite1h = max(n.GetInt64(), 0)
	}
	t.usage = usageOf(t.input, t.output, t.cacheRead, t.cacheCreation)
	t.usage.CacheWrite1hTokens = min(t.cacheWrite1h, t.cacheCreation)
}

// Next returns the next chunk: the next batch of events, as the shared
// OpenAI encoder writes it.
func (t *translator) Next() ([]byte, error) {
	for {
		evs, err := t.nextEvents()
		if err != nil {
			return nil, err
		}
		if out := t.enc.Encode(evs...); out != nil {
			return out, nil
		}
	}
}

// nextEvents returns the events of the next upstream event that has some;
// they are valid until the next call. Events that carry nothing for an
// OpenAI client (ping, content_block_stop, an empty text block start,
// thinking unless the door asked for it) are skipped; an error event ends the stream with an *Error
// whose status is the one its type stands for.
func (t *translator) nextEvents() ([]llm.Event, error) {
	if t.err != nil {
		return nil, t.err
	}
	if t.pendingUsage {
		t.pendingUsage = false
		return t.events1(llm.Event{Kind: llm.EventUsage, Usage: t.usage}), nil
	}
	for {
		ev, err := t.events.Next()
		if err != nil {
			t.err = t.broken(err)
			return nil, t.err
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			continue
		}
		v, err := t.parser.ParseBytes(data)
		if err != nil || v.Type() != fastjson.TypeObject {
			t.err = &providers.Error{Status: http.StatusBadGateway, Message: "upstream sent an invalid stream event"}
			return nil, t.err
		}
		typ := v.GetStringBytes("type")
		if len(typ) == 0 {
			typ = ev.Name
		}
		switch string(typ) {
		case "message_start":
			m := v.Get("message")
			if m == nil {
				continue
			}
			t.readUsage(m.Get("usage"))
			// Without a model, the requested one (the init's) stays.
			t.batch[0] = llm.Event{Kind: llm.EventStart, ID: m.GetStringBytes("id"), Model: m.GetStringBytes("model"), Created: t.sc.created}
			t.batch[1] = llm.Event{Kind: llm.EventRole, Role: llm.RoleAssistant}
			t.batch[2] = llm.Event{Kind: llm.EventText}
			return t.batch[:3], nil
		case "content_block_start":
			if c := t.blockStart(v); c != nil || t.err != nil {
				return c, t.err
			}
		case "content_block_delta":
			if c := t.blockDelta(v); c != nil {
				return c, nil
			}
		case "content_block_stop":
			// A tool call whose arguments never came gets "{}", so that the
			// client can parse them.
			if blk := t.block(v.GetInt64("index")); blk != nil && !blk.sentArgs && blk.kind != blockOther {
				blk.sentArgs = true
				if blk.kind == blockJSON {
					return t.content(emptyArgs), nil
				}
				return t.arguments(blk.tool, emptyArgs), nil
			}
		case "message_delta":
			t.readUsage(v.Get("usage"))
			t.pendingUsage = t.sc.wantUsage && t.usage.Present
			reason := v.GetStringBytes("delta", "stop_reason")
			finish := finish(reason, t.sc.jsonTool != "")
			return t.events1(llm.Event{Kind: llm.EventFinish, Finish: llm.FinishReason(finish),
				Text: stopSequence(reason, v.GetStringBytes("delta", "stop_sequence"))}), nil
		case "message_stop":
			t.done, t.err = true, io.EOF
			return nil, io.EOF
		case "error":
			t.err = providers.ReportedError(errorStatus(v.GetStringBytes("error", "type")), providers.ErrorMessage(data), t.sc.key)
			return nil, t.err
		}
		// ping and unknown events: nothing to relay
	}
}

// emptyArgs are the arguments of a tool call whose arguments never came.
var emptyArgs = []byte("{}")

// blockStart handles content_block_start; nil means nothing to relay.
func (t *translator) blockStart(v *fastjson.Value) []llm.Event {
	cb := v.Get("content_block")
	if cb == nil {
		return nil
	}
	index := v.GetInt64("index")
	switch string(cb.GetStringBytes("type")) {
	case "text":
		if text := cb.GetStringBytes("text"); len(text) > 0 {
			return t.content(text)
		}
	case "thinking":
		if text := cb.GetStringBytes("thinking"); len(text) > 0 && t.sc.thinkingBlocks {
			return t.events1(llm.Event{Kind: llm.EventThinking, Text: text})
		}
	case "redacted_thinking":
		if t.sc.thinkingBlocks {
			return t.events1(llm.Event{Kind: llm.EventRedactedThinking, Text: cb.GetStringBytes("data")})
		}
	case "tool_use":
		if len(t.blocks) == maxAnthropicBlocks {
			t.err = &providers.Error{Status: http.StatusBadGateway,
				Message: fmt.Sprintf("upstream opened more than %d tool blocks", maxAnthropicBlocks)}
			return nil
		}
		name := cb.GetStringBytes("name")
		if t.sc.jsonTool != "" && string(name) == t.sc.jsonTool {
			t.blocks = append(t.blocks, streamBlock{index: index, kind: blockJSON})
			return nil
		}
		t.blocks = append(t.blocks, streamBlock{index: index, kind: blockTool, tool: t.tools})
		t.tools++
		return t.events1(llm.Event{Kind: llm.EventToolCall, Tool: llm.ToolCallDelta{Index: t.tools - 1, First: true,
			ID: cb.GetStringBytes("id"), Name: name}})
	}
	return nil
}

// blockDelta handles content_block_delta; nil means nothing to relay.
func (t *translator) blockDelta(v *fastjson.Value) []llm.Event {
	d := v.Get("delta")
	if d == nil {
		return nil
	}
	switch string(d.GetStringBytes("type")) {
	case "text_delta":
		if text := d.GetStringBytes("text"); len(text) > 0 {
			return t.content(text)
		}
	case "thinking_delta":
		if text := d.GetStringBytes("thinking"); len(text) > 0 && t.sc.thinkingBlocks {
			return t.events1(llm.Event{Kind: llm.EventThinking, Text: text})
		}
	case "signature_delta":
		if t.sc.thinkingBlocks {
			return t.events1(llm.Event{Kind: llm.EventThinkingSignature, Text: d.GetStringBytes("signature")})
		}
	case "input_json_delta":
		part := d.GetStringBytes("partial_json")
		blk := t.block(v.GetInt64("index"))
		if len(part) == 0 || blk == nil {
			return nil
		}
		blk.sentArgs = true
		switch blk.kind {
		case blockTool:
			return t.arguments(blk.tool, part)
		case blockJSON:
			return t.content(part)
		}
	}
	return nil // citations (and thinking unless asked): not part of OpenAI chunks
}

// errorStatus is the HTTP status an error type stands for
// (Anthropic's list), with overloaded_error (529) as 503.
func errorStatus(typ []byte) int {
	switch string(typ) {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "api_error":
		return http.StatusInternalServerError
	case "overloaded_error":
		return http.StatusServiceUnavailable
	}
	return http.StatusBadGateway
}

// broken maps the error that ended the events before message_stop. A
// stream cut short is an error, never a clean end: the client would take
// a truncated answer for a whole one.
func (t *translator) broken(err error) error {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &providers.Error{Message: "the stream ended before message_stop", Err: io.ErrUnexpectedEOF}
	case errors.Is(err, sse.ErrEventTooLarge):
		return &providers.Error{Status: http.StatusBadGateway,
			Message: fmt.Sprintf("upstream sent a stream event larger than %d bytes", providers.MaxStreamEvent)}
	case providers.AsError(err) != nil:
		return err
	}
	return &providers.Error{Err: providers.ScrubError(err, t.sc.key)}
}
