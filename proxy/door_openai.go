package proxy

import (
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/sse"
)

// openAIDoor is the OpenAI-shaped front door: the providers already
// answer in its shape, so bodies and chunks pass through as bytes.
type openAIDoor struct{}

var _ door = openAIDoor{}

func (openAIDoor) decode(p *fastjson.Parser, body []byte, op llm.Operation) (inbound, *apierr.Error) {
	return parseBody(p, body, op)
}

func (openAIDoor) answer(body []byte) []byte { return body }

func (openAIDoor) appendChunk(dst, chunk []byte) []byte { return appendEvent(dst, chunk) }

// appendEnd appends [DONE], or an error event (and no [DONE]: OpenAI's
// SDKs raise it).
func (openAIDoor) appendEnd(dst []byte, e *apierr.Error) []byte {
	if e == nil {
		return append(dst, sse.Done...)
	}
	return sse.AppendError(dst, e.Type, e.Code, e.Message)
}

func (openAIDoor) errorBody(e *apierr.Error) []byte { return e.Body() }

// appendEvent appends chunk as one SSE data event. An upstream may split
// an event's data over several "data:" lines, which the SSE reader joins
// with LF; relayed as is, the line breaks would cut the client's event
// apart. The chunk is JSON, where a raw CR or LF can only be whitespace
// between tokens, so they become spaces.
func appendEvent(dst, chunk []byte) []byte {
	start := len(dst)
	dst = sse.AppendData(dst, chunk)
	data := dst[start+len("data: ") : len(dst)-len("\n\n")]
	for i, c := range data {
		if c == '\r' || c == '\n' {
			data[i] = ' '
		}
	}
	return dst
}
