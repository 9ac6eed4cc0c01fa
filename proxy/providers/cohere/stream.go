package cohere

import (
	"bytes"
	"encoding/json"
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

// stream is a v2 Chat event stream presented as OpenAI chunks;
// Close before message-end closes the connection, so that Cohere stops
// generating. Cohere reports the usage at message-end.
type stream = providers.TranslatedStream[translator, *translator]

// SeenUsage, Terminated and ParserOf serve providers.TranslatedStream.
func (t *translator) SeenUsage() llm.Usage { return t.usage }
func (t *translator) Terminated() bool     { return t.ended }
func (t *translator) ParserOf() **fastjson.Parser {
	return &t.parser
}

// streamContext is what translating a stream needs besides its events.
type streamContext struct {
	created   int64
	model     string
	wantUsage bool
	key       secret.Value
}

// translator turns Cohere's SSE events into neutral llm.Events
// (nextEvents), which the shared encoder writes as OpenAI chunks (Next).
// It does not own its reader; its parser belongs to the caller.
type translator struct {
	sc     streamContext
	events *sse.Reader
	parser *fastjson.Parser
	enc    providers.ChunkEncoder
	batch  [3]llm.Event // the events nextEvents returned; reused
	tools  []int64      // Cohere's index of each tool call begun; position is OpenAI's index
	usage  llm.Usage

	pendingUsage bool  // the usage chunk is due
	ended        bool  // message-end was read
	err          error // sticky: io.EOF after message-end, or why it broke
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

// toolCall is the event of a tool call: with its id and name when it
// begins, with arguments only after.
func (t *translator) toolCall(index int, id, name, args []byte, begin bool) []llm.Event {
	return t.events1(llm.Event{Kind: llm.EventToolCall, Tool: llm.ToolCallDelta{Index: index, First: begin,
		ID: id, Name: name, Arguments: args}})
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

// nextEvents returns the events of the next upstream event that has
// some; they are valid until the next call. Events that carry nothing for
// an OpenAI client (content-end, tool-call-end, citations, unknown events)
// are skipped. A message-end with finish_reason ERROR, or an error object,
// ends the stream with a 502 *Error.
func (t *translator) nextEvents() ([]llm.Event, error) {
	if t.err != nil {
		return nil, t.err
	}
	if t.pendingUsage {
		t.pendingUsage = false
		return t.events1(llm.Event{Kind: llm.EventUsage, Usage: t.usage}), nil
	}
	if t.ended {
		t.err = io.EOF
		return nil, io.EOF
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
		if c := t.event(string(typ), v); c != nil || t.err != nil {
			return c, t.err
		}
	}
}

// event translates one event; nil (without t.err set) means nothing to relay.
func (t *translator) event(typ string, v *fastjson.Value) []llm.Event {
	switch typ {
	case "message-start":
		// Cohere names no model: the requested one (the init's) stays.
		t.batch[0] = llm.Event{Kind: llm.EventStart, ID: v.GetStringBytes("id"), Created: t.sc.created}
		t.batch[1] = llm.Event{Kind: llm.EventRole, Role: llm.RoleAssistant}
		t.batch[2] = llm.Event{Kind: llm.EventText}
		return t.batch[:3]
	case "content-start", "content-delta":
		// Thinking blocks carry "thinking", not "text": not part of OpenAI chunks.
		if text := v.GetStringBytes("delta", "message", "content", "text"); len(text) > 0 {
			return t.content(text)
		}
	case "tool-plan-delta":
		if plan := v.GetStringBytes("delta", "message", "tool_plan"); len(plan) > 0 {
			return t.content(plan)
		}
	case "tool-call-start":
		tc := v.Get("delta", "message", "tool_calls")
		if tc == nil {
			return nil
		}
		if len(t.tools) == maxCohereToolCalls {
			t.err = &providers.Error{Status: http.StatusBadGateway,
				Message: fmt.Sprintf("upstream began more than %d tool calls", maxCohereToolCalls)}
			return nil
		}
		t.tools = append(t.tools, v.GetInt64("index"))
		return t.toolCall(len(t.tools)-1, tc.GetStringBytes("id"), tc.GetStringBytes("function", "name"),
			tc.GetStringBytes("function", "arguments"), true)
	case "tool-call-delta":
		args := v.GetStringBytes("delta", "message", "tool_calls", "function", "arguments")
		if len(args) == 0 || len(t.tools) == 0 {
			return nil
		}
		i := len(t.tools) - 1 // the call begun last, unless the index names another
		for j, index := range t.tools {
			if index == v.GetInt64("index") {
				i = j
			}
		}
		return t.toolCall(i, nil, nil, args, false)
	case "message-end":
		d := v.Get("delta")
		var u usage
		if uv := d.Get("usage"); uv != nil && uv.Type() == fastjson.TypeObject {
			_ = json.Unmarshal(uv.MarshalTo(nil), &u)
			t.usage = u.usage()
		}
		finish, failed := finish(d.GetStringBytes("finish_reason"))
		if failed {
			t.err = cohereFailed(d.GetStringBytes("error"), t.sc.key)
			return nil
		}
		t.ended = true
		t.pendingUsage = t.sc.wantUsage && t.usage.Present
		return t.events1(llm.Event{Kind: llm.EventFinish, Finish: llm.FinishReason(finish)})
	case "":
		// An error object in place of an event.
		if msg := v.GetStringBytes("message"); len(msg) > 0 {
			t.err = &providers.Error{Status: http.StatusBadGateway, Message: providers.Scrub(string(msg), t.sc.key)}
		}
	}
	return nil // content-end, tool-call-end, citation-start, citation-end, …
}

// broken maps the error that ended the events before message-end. A
// stream cut short is an error, never a clean end: the client would take
// a truncated answer for a whole one.
func (t *translator) broken(err error) error {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &providers.Error{Message: "the stream ended before message-end", Err: io.ErrUnexpectedEOF}
	case errors.Is(err, sse.ErrEventTooLarge):
		return &providers.Error{Status: http.StatusBadGateway,
			Message: fmt.Sprintf("upstream sent a stream event larger than %d bytes", providers.MaxStreamEvent)}
	case providers.AsError(err) != nil:
		return err
	}
	return &providers.Error{Err: providers.ScrubError(err, t.sc.key)}
}
