package providers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/proxy/sse"
)

// The native pass-through (CONTRACT §12's native doors): a request whose
// Wire is the codec's own API — OpenAI Responses to the OpenAI codec,
// Anthropic Messages to the Anthropic codec — goes out as the client
// sent it but for "model" (and an output cap the gateway may add), and
// the answer comes back as it came. Only the usage is read. A codec
// describes its API's events with a NativeWire; the stream it returns
// hands each upstream event over framed as SSE, ready to be relayed.

// NativeWire is what the shared pass-through needs to know of an API's
// answers and events.
type NativeWire interface {
	// Usage reads the usage of a complete answer v into u.
	Usage(v *fastjson.Value, u *llm.Usage)
	// Failed reports whether a 2xx answer or event v is an error report
	// (Anthropic's {"type":"error"}, a Responses "error" event).
	Failed(v *fastjson.Value) bool
	// UsageEvent reports whether events of this name may carry usage:
	// only those are parsed.
	UsageEvent(name []byte) bool
	// EventUsage reads the usage an event v of that name carries into u
	// (over what earlier events gave).
	EventUsage(name []byte, v *fastjson.Value, u *llm.Usage)
	// Terminal reports whether an event of this name ends the answer
	// (response.completed, message_stop): the upstream's end of stream is
	// clean only after one.
	Terminal(name []byte) bool
}

// PassThroughBody appends to dst body with "model" set to model and, when
// capN is positive and the body sets capField to nothing (absent or
// null), capField set to capN. Everything else is re-serialised as it
// came: key order, number text and string escapes are preserved.
func PassThroughBody(dst, body []byte, model, capField string, capN int64) ([]byte, error) {
	p := BodyParsers.Get()
	defer BodyParsers.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil {
		return dst, fmt.Errorf("parse request body: %w", err)
	}
	if v.Type() != fastjson.TypeObject {
		return dst, errors.New("request body is not a JSON object")
	}
	a := nativeArenas.Get()
	defer nativeArenas.Put(a)
	v.Set("model", a.NewString(model))
	if capN > 0 && capField != "" {
		if x := v.Get(capField); x == nil || x.Type() == fastjson.TypeNull {
			v.Set(capField, a.NewNumberInt(int(capN)))
		}
	}
	return v.MarshalTo(dst), nil
}

var nativeArenas fastjson.ArenaPool

// NativeAnswer reads the usage and model of a complete native answer,
// which is relayed as it came. An answer that is not a JSON object, or
// that reports an error with a 2xx status, is a 502 *Error.
func NativeAnswer(w NativeWire, body []byte, key secret.Value) (*Response, error) {
	p := BodyParsers.Get()
	defer BodyParsers.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil || v.Type() != fastjson.TypeObject {
		return nil, &Error{Status: http.StatusBadGateway, Message: ErrInvalidResponse}
	}
	if w.Failed(v) {
		return nil, ReportedError(http.StatusBadGateway, ErrorMessage(body), key)
	}
	resp := &Response{Body: body, Model: string(v.GetStringBytes("model"))}
	w.Usage(v, &resp.Usage)
	return resp, nil
}

// NewNativeStream presents a native event stream: each Next is one
// upstream event framed as SSE ("event: …\ndata: …\n\n"), with the usage
// read from the events that carry it. An error event is not relayed: it
// ends the stream with an *Error (502) carrying its message, which the
// front door writes as its own error event.
func NewNativeStream(w NativeWire, sr *StreamResponse, key secret.Value) Stream {
	return &nativeStream{w: w, resp: sr, events: sse.NewReader(sr, MaxStreamEvent),
		parser: BodyParsers.Get(), key: key}
}

// NewNativeReader is NewNativeStream over any reader of an event stream,
// which Close does not close: for golden tests and fuzzing of a codec's
// NativeWire.
func NewNativeReader(w NativeWire, r io.Reader, key secret.Value) Stream {
	return &nativeStream{w: w, events: sse.NewReader(r, MaxStreamEvent), parser: BodyParsers.Get(), key: key}
}

type nativeStream struct {
	w      NativeWire
	resp   *StreamResponse // nil for NewNativeReader
	events *sse.Reader
	parser *fastjson.Parser // from BodyParsers; returned by Close
	key    secret.Value
	usage  llm.Usage
	buf    []byte // the framed event, reused
	ended  bool   // a terminal event was relayed
	done   bool   // the upstream ended cleanly after it
	err    error  // sticky
}

var errorEvent = []byte("error")

func (s *nativeStream) Next() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.parser == nil {
		return nil, &Error{Err: ErrStreamClosed}
	}
	for {
		ev, err := s.events.Next()
		if err != nil {
			s.err = s.broken(err)
			return nil, s.err
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			continue // a comment or keep-alive
		}
		name := ev.Name
		if bytes.Equal(name, errorEvent) || s.w.UsageEvent(name) || len(name) == 0 {
			v, perr := s.parser.ParseBytes(data)
			if perr != nil {
				s.err = &Error{Status: http.StatusBadGateway, Message: ErrInvalidResponse}
				return nil, s.err
			}
			if bytes.Equal(name, errorEvent) || s.w.Failed(v) {
				s.err = ReportedError(http.StatusBadGateway, ErrorMessage(data), s.key)
				return nil, s.err
			}
			if len(name) == 0 {
				name = v.GetStringBytes("type")
			}
			if s.w.UsageEvent(name) {
				s.w.EventUsage(name, v, &s.usage)
			}
		}
		s.ended = s.ended || s.w.Terminal(name)
		s.buf = AppendNativeEvent(s.buf[:0], ev.Name, data) // as it came: no name added
		return s.buf, nil
	}
}

// AppendNativeEvent frames one event as SSE: its name, then its data,
// one "data:" line per line of it. The proxy frames the events it
// rewrites (content rules) the same way.
func AppendNativeEvent(dst, name, data []byte) []byte {
	if len(name) > 0 {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	for {
		line, rest, more := bytes.Cut(data, []byte("\n"))
		dst = append(dst, "data: "...)
		dst = append(dst, line...)
		dst = append(dst, '\n')
		if !more {
			break
		}
		data = rest
	}
	return append(dst, '\n')
}

// broken maps the error that ended the event stream: a clean end after a
// terminal event is io.EOF, any other end a broken stream.
func (s *nativeStream) broken(err error) error {
	switch {
	case errors.Is(err, io.EOF) && s.ended:
		s.done = true
		return io.EOF
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Message: "the stream ended before its last event", Err: io.ErrUnexpectedEOF}
	case errors.Is(err, sse.ErrEventTooLarge):
		return &Error{Status: http.StatusBadGateway,
			Message: fmt.Sprintf("upstream sent a stream event larger than %d bytes", MaxStreamEvent)}
	case AsError(err) != nil:
		return err
	}
	return &Error{Err: ScrubError(err, s.key)}
}

// Usage returns the usage seen so far.
func (s *nativeStream) Usage() llm.Usage { return s.usage }

// Close releases the upstream connection; before the clean end it closes
// it, so the upstream stops generating.
func (s *nativeStream) Close() error {
	if s.parser == nil {
		return nil
	}
	BodyParsers.Put(s.parser)
	s.parser = nil
	if s.err == nil {
		s.err = &Error{Err: ErrStreamClosed}
	}
	switch {
	case s.resp == nil:
		return nil
	case s.done:
		return s.resp.Finish()
	}
	return s.resp.Close()
}
