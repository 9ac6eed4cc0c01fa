package proxy

import (
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
)

// A front door is a wire shape clients speak to the gateway: the OpenAI
// shape of /chat/completions, /completions and /embeddings (openAIDoor),
// the translated Anthropic Messages and OpenAI Responses doors on /compat
// (messagesDoor, responsesDoor) and the native pass-through doors
// (nativeMessagesDoor, nativeResponsesDoor). Every door shares the one
// pipeline (proxy/pipeline.go); a door only decodes the client's body into
// what the pipeline needs and encodes what goes back — answers, stream
// events and errors — in its own shape. A new door is another door
// implementation chosen by its path in doorFor, never a copy of the
// pipeline.

// door is a front door's decoder/encoder pair. Its methods must not
// retain their arguments; the OpenAI door passes raw bytes through and
// allocates nothing.
type door interface {
	// decode validates the client's body for op, with a pooled parser, and
	// returns what the pipeline reads of it; the body travels on as bytes.
	decode(p *fastjson.Parser, body []byte, op llm.Operation) (inbound, *apierr.Error)
	// answer encodes a non-streamed answer (an OpenAI-shaped body from
	// the providers) in the door's shape; it may return body itself.
	answer(body []byte) []byte
	// appendChunk appends one stream chunk (OpenAI-shaped JSON) to dst as
	// the door's event.
	appendChunk(dst, chunk []byte) []byte
	// appendEnd appends the last event of a stream to dst: its clean end
	// when e is nil, else the error e that cut it short.
	appendEnd(dst []byte, e *apierr.Error) []byte
	// errorBody is the body of an error answer.
	errorBody(e *apierr.Error) []byte
}

// doorFor returns the door of a parsed path: the Messages door on
// /compat (a new messagesDoor, which holds a stream's state), the native
// doors of CONTRACT §12 by their operation (proxy/door_native.go), else
// the OpenAI shape.
func doorFor(r route) door {
	switch r.kind {
	case kindMessages:
		return new(messagesDoor)
	case kindCountTokens:
		return &messagesDoor{count: true}
	case kindResponses:
		return new(responsesDoor)
	}
	switch r.op {
	case llm.OpResponses:
		return nativeResponsesDoor{}
	case llm.OpMessages, llm.OpCountTokens:
		return nativeMessagesDoor{}
	}
	return openAIDoor{}
}

// defaultDoor answers the requests refused before their path is known.
var defaultDoor door = openAIDoor{}
