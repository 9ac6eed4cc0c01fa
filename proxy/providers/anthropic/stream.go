package anthropic

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/jsonstr"
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

// translator turns Anthropic's SSE events into OpenAI chunks. It
// does not own its reader; its parser belongs to the caller.
type translator struct {
	sc     streamContext
	events *sse.Reader
	parser *fastjson.Parser
	head   []byte // `{"id":…,"object":…,"created":…,"model":…,`
	out    []byte // the chunk Next returned; reused
	blocks []streamBlock
	tools  int

	input, output, cacheRead, cacheCreation int64
	usage                                   llm.Usage

	pendingUsage bool  // the usage chunk is due
	done         bool  // message_stop was read
	err          error // sticky: io.EOF after message_stop, or why it broke
}

func (t *translator) init(r io.Reader, p *fastjson.Parser, sc streamContext) {
	*t = translator{sc: sc, events: sse.NewReader(r, providers.MaxStreamEvent), parser: p}
	t.setHead(nil, []byte(sc.model))
}

func (t *translator) setHead(id, model []byte) {
	if len(model) == 0 {
		model = []byte(t.sc.model)
	}
	b := append(t.head[:0], `{"id":`...)
	b = jsonstr.Append(b, id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, t.sc.created, 10)
	b = append(b, `,"model":`...)
	b = jsonstr.Append(b, model)
	t.head = append(b, ',')
}

// begin starts a chunk with one choice, up to its delta.
func (t *translator) begin() []byte {
	b := append(t.out[:0], t.head...)
	return append(b, `"choices":[{"index":0,"delta":`...)
}

// end finishes a chunk begun by begin; finish "" is null.
func (t *translator) end(b []byte, finish string) []byte {
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = append(b, finish...)
		b = append(b, '"')
	}
	t.out = append(b, "}]}"...)
	return t.out
}

func (t *translator) content(text []byte) []byte {
	b := append(t.begin(), `{"content":`...)
	b = jsonstr.Append(b, text)
	return t.end(append(b, '}'), "")
}

func (t *translator) arguments(tool int, args []byte) []byte {
	b := append(t.begin(), `{"tool_calls":[{"index":`...)
	b = strconv.AppendInt(b, int64(tool), 10)
	b = append(b, `,"function":{"arguments":`...)
	b = jsonstr.Append(b, args)
	return t.end(append(b, "}}]}"...), "")
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
	t.usage = usageOf(t.input, t.output, t.cacheRead, t.cacheCreation)
}

// Next returns the next chunk. Events that carry nothing for an OpenAI
// client (ping, content_block_stop, an empty text block start, thinking)
// are skipped; an error event ends the stream with an *Error whose status
// is the one its type stands for.
func (t *translator) Next() ([]byte, error) {
	if t.err != nil {
		return nil, t.err
	}
	if t.pendingUsage {
		t.pendingUsage = false
		b := append(t.out[:0], t.head...)
		b = append(b, `"choices":[],"usage":`...)
		t.out = append(providers.AppendUsageJSON(b, t.usage), '}')
		return t.out, nil
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
			t.setHead(m.GetStringBytes("id"), m.GetStringBytes("model"))
			t.readUsage(m.Get("usage"))
			return t.end(append(t.begin(), `{"role":"assistant","content":""}`...), ""), nil
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
					return t.content([]byte("{}")), nil
				}
				return t.arguments(blk.tool, []byte("{}")), nil
			}
		case "message_delta":
			t.readUsage(v.Get("usage"))
			t.pendingUsage = t.sc.wantUsage && t.usage.Present
			finish := finish(v.GetStringBytes("delta", "stop_reason"), t.sc.jsonTool != "")
			return t.end(append(t.begin(), "{}"...), finish), nil
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

// blockStart handles content_block_start; nil means nothing to relay.
func (t *translator) blockStart(v *fastjson.Value) []byte {
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
		b := append(t.begin(), `{"tool_calls":[{"index":`...)
		b = strconv.AppendInt(b, int64(t.tools), 10)
		b = append(b, `,"id":`...)
		b = jsonstr.Append(b, cb.GetStringBytes("id"))
		b = append(b, `,"type":"function","function":{"name":`...)
		b = jsonstr.Append(b, name)
		b = append(b, `,"arguments":""}}]}`...)
		t.tools++
		return t.end(b, "")
	}
	return nil
}

// blockDelta handles content_block_delta; nil means nothing to relay.
func (t *translator) blockDelta(v *fastjson.Value) []byte {
	d := v.Get("delta")
	if d == nil {
		return nil
	}
	switch string(d.GetStringBytes("type")) {
	case "text_delta":
		if text := d.GetStringBytes("text"); len(text) > 0 {
			return t.content(text)
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
	return nil // thinking, signatures, citations: not part of OpenAI chunks
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
