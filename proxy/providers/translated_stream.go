package providers

import (
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
)

// EventTranslator is what a native adapter's stream translator gives the
// shared stream wrapper: the next OpenAI chunk (its llm.Events, written
// by its providers.ChunkEncoder), the usage seen so far,
// whether the upstream's terminal event was read, and its pooled parser.
type EventTranslator interface {
	Next() ([]byte, error)
	SeenUsage() llm.Usage
	Terminated() bool
	ParserOf() **fastjson.Parser
}

// TranslatedStream presents a translator as a Stream. T is the translator
// type held by value; PT is its pointer type, which has the methods.
type TranslatedStream[T any, PT interface {
	*T
	EventTranslator
}] struct {
	// Resp is the upstream answer whose body the translator reads.
	Resp *StreamResponse
	// Translator is the codec's translator, initialised by the codec.
	Translator T
	closed     bool
}

// Next returns the next OpenAI chunk; io.EOF after the terminal event.
func (s *TranslatedStream[T, PT]) Next() ([]byte, error) {
	if s.closed {
		return nil, &Error{Err: ErrStreamClosed}
	}
	return PT(&s.Translator).Next()
}

// Usage returns the usage seen so far.
func (s *TranslatedStream[T, PT]) Usage() llm.Usage { return PT(&s.Translator).SeenUsage() }

// Close releases the upstream connection: kept for reuse after the
// terminal event, closed before it (so that the provider stops generating).
func (s *TranslatedStream[T, PT]) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	t := PT(&s.Translator)
	if p := t.ParserOf(); *p != nil {
		BodyParsers.Put(*p)
		*p = nil
	}
	if t.Terminated() {
		return s.Resp.Finish()
	}
	return s.Resp.Close()
}
