package providers

import (
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
)

// eventTranslator is what a native adapter's stream translator gives the
// shared stream wrapper: the next OpenAI chunk, the usage seen so far,
// whether the upstream's terminal event was read, and its pooled parser.
type eventTranslator interface {
	next() ([]byte, error)
	seenUsage() llm.Usage
	terminated() bool
	parserOf() **fastjson.Parser
}

// translatedStream presents a translator as a Stream. T is the translator
// type held by value; PT is its pointer type, which has the methods.
type translatedStream[T any, PT interface {
	*T
	eventTranslator
}] struct {
	resp   *StreamResponse
	t      T
	closed bool
}

// Next returns the next OpenAI chunk; io.EOF after the terminal event.
func (s *translatedStream[T, PT]) Next() ([]byte, error) {
	if s.closed {
		return nil, &Error{Err: errStreamClosed}
	}
	return PT(&s.t).next()
}

// Usage returns the usage seen so far.
func (s *translatedStream[T, PT]) Usage() llm.Usage { return PT(&s.t).seenUsage() }

// Close releases the upstream connection: kept for reuse after the
// terminal event, closed before it (so that the provider stops generating).
func (s *translatedStream[T, PT]) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	t := PT(&s.t)
	if p := t.parserOf(); *p != nil {
		bodyParsers.Put(*p)
		*p = nil
	}
	if t.terminated() {
		return s.resp.Finish()
	}
	return s.resp.Close()
}
