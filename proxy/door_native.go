package proxy

import (
	"net/http"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/jsonstr"
	"github.com/sluicehq/sluice/internal/llm"
)

// The native doors of CONTRACT §12: a client's body goes to a provider of
// its own wire, passed through but for "model" — OpenAI's Responses API
// on /openai/responses and Anthropic's Messages API on
// /anthropic/v1/messages (and /count_tokens). The door sets the
// body's wire (inbound.wire); the provider's codec of that wire sends the
// body on and relays the answer as it came, stream events included
// (providers.NewNativeStream hands each event over framed as SSE, which
// appendChunk writes as it is), reading only the usage. So the encoders
// here are the identity; only the errors the gateway writes itself are in
// the door's shape. The response rules read the events too, and rewrite
// those whose text they redact (proxy/rulestream_native.go); the cache
// keeps an answer as it was sent (proxy/cache.go).

// nativeResponsesDoor is the native OpenAI Responses door. Errors are in the
// shape of CONTRACT §3, as OpenAI's own.
type nativeResponsesDoor struct{}

var _ door = nativeResponsesDoor{}

func (nativeResponsesDoor) decode(p *fastjson.Parser, body []byte, op llm.Operation) (inbound, *apierr.Error) {
	in, e := parseBody(p, body, op)
	in.wire = llm.WireOpenAIResponses
	return in, e
}

func (nativeResponsesDoor) answer(body []byte) []byte { return body }

// appendChunk appends an upstream event, already framed as SSE.
func (nativeResponsesDoor) appendChunk(dst, chunk []byte) []byte { return append(dst, chunk...) }

// appendEnd appends nothing at a clean end (the upstream's
// response.completed was relayed; the Responses API sends no [DONE]),
// else an "error" event: the Responses API's fields (code, message,
// param) with the §3 error object beside them, which the OpenAI SDKs
// raise as an APIError.
func (nativeResponsesDoor) appendEnd(dst []byte, e *apierr.Error) []byte {
	if e == nil {
		return dst
	}
	dst = append(dst, "event: error\ndata: {\"type\":\"error\",\"code\":"...)
	dst = jsonstr.Append(dst, e.Code)
	dst = append(dst, `,"message":`...)
	dst = jsonstr.Append(dst, e.Message)
	dst = append(dst, `,"param":null,"error":{"type":`...)
	dst = jsonstr.Append(dst, e.Type)
	dst = append(dst, `,"code":`...)
	dst = jsonstr.Append(dst, e.Code)
	dst = append(dst, `,"message":`...)
	dst = jsonstr.Append(dst, e.Message)
	return append(dst, `,"param":null}}`+"\n\n"...)
}

func (nativeResponsesDoor) errorBody(e *apierr.Error) []byte { return e.Body() }

// nativeMessagesDoor is the native Anthropic Messages door, with its token
// count. Errors are in Anthropic's shape.
type nativeMessagesDoor struct{}

var _ door = nativeMessagesDoor{}

func (nativeMessagesDoor) decode(p *fastjson.Parser, body []byte, op llm.Operation) (inbound, *apierr.Error) {
	in, e := parseBody(p, body, op)
	in.wire = llm.WireAnthropicMessages
	return in, e
}

func (nativeMessagesDoor) answer(body []byte) []byte { return body }

// appendChunk appends an upstream event, already framed as SSE.
func (nativeMessagesDoor) appendChunk(dst, chunk []byte) []byte { return append(dst, chunk...) }

// appendEnd appends nothing at a clean end (the upstream's message_stop
// was relayed), else Anthropic's "error" event, which its SDKs raise.
func (nativeMessagesDoor) appendEnd(dst []byte, e *apierr.Error) []byte {
	if e == nil {
		return dst
	}
	dst = append(dst, "event: error\ndata: "...)
	return append(appendMessagesError(dst, withStreamStatus(e)), "\n\n"...)
}

// errorBody is Anthropic's error shape, as on the /compat Messages door
// (appendMessagesError).
func (nativeMessagesDoor) errorBody(e *apierr.Error) []byte { return appendMessagesError(nil, e) }

// withStreamStatus gives the error that ends a stream, which has no
// status of its own (the answer's 200 was sent), the status its
// Anthropic error.type is chosen by: 503 (overloaded_error) for a
// shutdown, 429 for a rate limit, 502 (api_error) for any other gateway
// or upstream failure.
func withStreamStatus(e *apierr.Error) *apierr.Error {
	if e.Status != 0 {
		return e
	}
	c := *e
	switch {
	case e.Code == apierr.CodeShuttingDown:
		c.Status = http.StatusServiceUnavailable
	case e.Type == apierr.TypeRateLimit:
		c.Status = http.StatusTooManyRequests
	case e.Type == apierr.TypeInvalidRequest:
		c.Status = http.StatusBadRequest
	default:
		c.Status = http.StatusBadGateway
	}
	return &c
}

// forwardedAnthropicHeaders are the client's headers a native Messages
// request carries upstream: the API version it speaks and the beta
// features it asks for.
var forwardedAnthropicHeaders = [...]string{"anthropic-version", "anthropic-beta"}

// forwardAnthropicHeaders adds the client's anthropic-version and
// anthropic-beta to the headers sent upstream (up, the call's own map).
func forwardAnthropicHeaders(h *fasthttp.RequestHeader, up map[string][]string) {
	for _, name := range forwardedAnthropicHeaders {
		if v := h.Peek(name); len(v) > 0 {
			up[http.CanonicalHeaderKey(name)] = []string{string(v)}
		}
	}
}
