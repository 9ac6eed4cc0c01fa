package openai

import (
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
)

// OpenAI's Responses API, passed through (the native /openai/responses
// door of CONTRACT §12): the client's body goes to {base}/responses with
// "model" replaced, and the answer, plain or streamed, comes back as it
// came; only the usage is read.

// encodeResponsesBody writes the Responses body of req into a pooled
// buffer: the client's body with the provider's model and, when the
// gateway caps the output (Request.MaxOutputTokens) and the body sets no
// max_output_tokens, that cap.
func encodeResponsesBody(req *providers.Request) (providers.Encoded, error) {
	bp := providers.BodyBufs.Get().(*[]byte)
	body, err := providers.PassThroughBody((*bp)[:0], req.Body, req.Model, "max_output_tokens", req.MaxOutputTokens)
	*bp = body
	enc := providers.Encoded{Buf: bp}
	if err != nil {
		return enc, err
	}
	enc.HTTP = providers.HTTPRequest{Traceparent: req.Traceparent, Header: req.Header, Body: body, Deadline: req.Deadline}
	return enc, nil
}

// responsesWire reads the Responses API's answers and events.
type responsesWire struct{}

var _ providers.NativeWire = responsesWire{}

// Usage reads a response object's usage: input_tokens (cached ones
// included), output_tokens (reasoning ones included),
// input_tokens_details.cached_tokens and
// output_tokens_details.reasoning_tokens.
func (responsesWire) Usage(v *fastjson.Value, u *llm.Usage) {
	uv := v.Get("usage")
	if uv == nil || uv.Type() != fastjson.TypeObject {
		return
	}
	*u = llm.Usage{
		Present:          true,
		PromptTokens:     providers.Count(uv, "input_tokens"),
		CompletionTokens: providers.Count(uv, "output_tokens"),
		CachedTokens:     providers.Count(uv, "input_tokens_details", "cached_tokens"),
		// The spec (2026) adds cache writes beside the reads.
		CacheCreationTokens: providers.Count(uv, "input_tokens_details", "cache_write_tokens"),
		ReasoningTokens:     providers.Count(uv, "output_tokens_details", "reasoning_tokens"),
	}
	if uv.Exists("total_tokens") {
		u.TotalTokens = providers.Count(uv, "total_tokens")
	} else {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
}

// Failed reports an error object sent with a 2xx status: {"error":{…}}
// without a response object, or an "error" event.
func (responsesWire) Failed(v *fastjson.Value) bool {
	if string(v.GetStringBytes("type")) == "error" {
		return true
	}
	e := v.Get("error")
	return e != nil && e.Type() == fastjson.TypeObject && v.Get("object") == nil && v.Get("type") == nil
}

// UsageEvent: the events that end a response carry it with its usage.
func (responsesWire) UsageEvent(name []byte) bool { return responsesTerminal(name) }

// EventUsage reads the usage of the response an ending event carries.
func (w responsesWire) EventUsage(_ []byte, v *fastjson.Value, u *llm.Usage) {
	if r := v.Get("response"); r != nil {
		w.Usage(r, u)
	}
}

// Terminal: response.completed, response.incomplete and response.failed
// end a response.
func (responsesWire) Terminal(name []byte) bool { return responsesTerminal(name) }

func responsesTerminal(name []byte) bool {
	switch string(name) {
	case "response.completed", "response.incomplete", "response.failed":
		return true
	}
	return false
}
