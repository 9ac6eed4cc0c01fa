package proxy

import (
	"net/http"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/jsonstr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/rules"
)

// The native doors of CONTRACT §12: a client's body goes to a provider of
// its own wire, passed through but for "model" — OpenAI's Responses API
// on /openai/responses and Anthropic's Messages API on
// /anthropic/v1/messages (and /count_tokens). The door sets the
// body's wire (inbound.wire); the provider's codec of that wire sends the
// body on and relays the answer as it came, stream events included
// (providers.NativeStream hands each event over framed as SSE), reading
// only the usage. So the encoders here are the identity; only the errors
// the gateway writes itself are in the door's shape.

// responsesDoor is the native OpenAI Responses door. Errors are in the
// shape of CONTRACT §3, as OpenAI's own.
type responsesDoor struct{}

var _ door = responsesDoor{}

func (responsesDoor) decode(p *fastjson.Parser, body []byte, op llm.Operation) (inbound, *apierr.Error) {
	in, e := parseBody(p, body, op)
	in.wire = llm.WireOpenAIResponses
	return in, e
}

func (responsesDoor) answer(body []byte) []byte { return body }

// appendChunk appends an upstream event, already framed as SSE.
func (responsesDoor) appendChunk(dst, chunk []byte) []byte { return append(dst, chunk...) }

// appendEnd appends nothing at a clean end (the upstream's
// response.completed was relayed; the Responses API sends no [DONE]),
// else an "error" event: the Responses API's fields (code, message,
// param) with the §3 error object beside them, which the OpenAI SDKs
// raise as an APIError.
func (responsesDoor) appendEnd(dst []byte, e *apierr.Error) []byte {
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

func (responsesDoor) errorBody(e *apierr.Error) []byte { return e.Body() }

// messagesDoor is the native Anthropic Messages door, with its token
// count. Errors are in Anthropic's shape.
type messagesDoor struct{}

var _ door = messagesDoor{}

func (messagesDoor) decode(p *fastjson.Parser, body []byte, op llm.Operation) (inbound, *apierr.Error) {
	in, e := parseBody(p, body, op)
	in.wire = llm.WireAnthropicMessages
	return in, e
}

func (messagesDoor) answer(body []byte) []byte { return body }

// appendChunk appends an upstream event, already framed as SSE.
func (messagesDoor) appendChunk(dst, chunk []byte) []byte { return append(dst, chunk...) }

// appendEnd appends nothing at a clean end (the upstream's message_stop
// was relayed), else Anthropic's "error" event, which its SDKs raise.
func (messagesDoor) appendEnd(dst []byte, e *apierr.Error) []byte {
	if e == nil {
		return dst
	}
	dst = append(dst, "event: error\ndata: "...)
	return append(appendNativeAnthropicError(dst, e), "\n\n"...)
}

func (messagesDoor) errorBody(e *apierr.Error) []byte {
	return appendNativeAnthropicError(make([]byte, 0, 96+len(e.Message)), e)
}

// appendNativeAnthropicError appends e in Anthropic's error shape
// {"type":"error","error":{"type":…,"message":…}}, with the error type
// CONTRACT §12 pins for its status and the gateway's code in error.code.
func appendNativeAnthropicError(dst []byte, e *apierr.Error) []byte {
	dst = append(dst, `{"type":"error","error":{"type":`...)
	dst = jsonstr.Append(dst, nativeAnthropicErrorType(e))
	dst = append(dst, `,"message":`...)
	dst = jsonstr.Append(dst, e.Message)
	dst = append(dst, `,"code":`...)
	dst = jsonstr.Append(dst, e.Code)
	if e.Param != "" {
		dst = append(dst, `,"param":`...)
		dst = jsonstr.Append(dst, e.Param)
	}
	return append(dst, "}}"...)
}

// nativeAnthropicErrorType is Anthropic's error.type for e's HTTP status
// (CONTRACT §12), or, for the error event that ends a stream (no status:
// the answer's status was sent), for its type.
func nativeAnthropicErrorType(e *apierr.Error) string {
	status := e.Status
	if status == 0 {
		switch {
		case e.Code == apierr.CodeShuttingDown:
			return "overloaded_error"
		case e.Type == apierr.TypeAPI:
			return "api_error"
		case e.Type == apierr.TypeRateLimit:
			return "rate_limit_error"
		}
	}
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable:
		return "overloaded_error"
	}
	if status >= http.StatusInternalServerError {
		return "api_error"
	}
	return "invalid_request_error"
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

// nativeRulesCheck refuses a streamed request on a native door when
// response rules apply to the gateway: the stream filter reads OpenAI
// chat chunks, and a stream the rules cannot read must not go out
// unchecked. Non-streamed answers are walked like any other (every
// string of the body is scanned).
func (h *Inference) nativeRulesCheck(c *call) *apierr.Error {
	if c.in.wire == llm.WireOpenAIChat || !c.in.stream {
		return nil
	}
	if set := h.ruleSet(c); set.Applies(rules.Response) {
		return apierr.New(http.StatusBadRequest, apierr.CodeUnsupportedFeature,
			"this gateway's response rules cannot be applied to a stream on the native %q door yet; send the request without stream",
			c.route.op.String()).WithParam("stream")
	}
	return nil
}
