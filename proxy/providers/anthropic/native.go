package anthropic

import (
	"bytes"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
)

// The Messages API passed through (the native /anthropic/v1/messages door
// of CONTRACT §12): the client's body goes to {base}/v1/messages (or
// /v1/messages/count_tokens) with "model" replaced, with the client's
// anthropic-version and anthropic-beta, and the answer, plain or
// streamed, comes back as it came; only the usage is read.

// encodeNative describes the pass-through call of req.
func encodeNative(req *providers.Request) (providers.Encoded, error) {
	bp := providers.BodyBufs.Get().(*[]byte)
	capOut := req.MaxOutputTokens
	if req.Op == llm.OpCountTokens {
		capOut = 0 // a count has no output, and no max_tokens
	}
	body, err := providers.PassThroughBody((*bp)[:0], req.Body, req.Model, "max_tokens", capOut)
	*bp = body
	enc := providers.Encoded{Buf: bp}
	if err != nil {
		return enc, err
	}
	enc.HTTP = httpRequest(req, body)
	if req.Op == llm.OpCountTokens {
		enc.HTTP.Path = "v1/messages/count_tokens"
	}
	if v := req.Header.Get("Anthropic-Version"); v != "" {
		enc.HTTP.Header.Set("Anthropic-Version", v) // the client's, over the adapter's
	}
	return enc, nil
}

// decodeNative reads the usage of an answer relayed as it came. A token
// count ({"input_tokens": n}) is no use of the model: its usage is an
// explicit zero, so it costs nothing.
func decodeNative(body []byte, req *providers.Request) (*providers.Response, error) {
	resp, err := providers.NativeAnswer(messagesWire{}, body, req.Cred.Key)
	if err == nil && req.Op == llm.OpCountTokens {
		resp.Usage = llm.Usage{Present: true}
	}
	return resp, err
}

// messagesWire reads the Messages API's answers and events.
type messagesWire struct{}

var _ providers.NativeWire = messagesWire{}

// Usage reads a message's usage: input_tokens (those neither read from
// nor written to the cache), cache_read_input_tokens,
// cache_creation_input_tokens (with cache_creation's one-hour part) and
// output_tokens.
func (messagesWire) Usage(v *fastjson.Value, u *llm.Usage) {
	uv := v.Get("usage")
	if uv == nil || uv.Type() != fastjson.TypeObject {
		return
	}
	*u = usageOf(providers.Count(uv, "input_tokens"), providers.Count(uv, "output_tokens"),
		providers.Count(uv, "cache_read_input_tokens"), providers.Count(uv, "cache_creation_input_tokens"))
	u.CacheWrite1hTokens = min(providers.Count(uv, "cache_creation", "ephemeral_1h_input_tokens"), u.CacheCreationTokens)
}

// Failed reports Anthropic's error object, {"type":"error",…}.
func (messagesWire) Failed(v *fastjson.Value) bool {
	return bytes.Equal(v.GetStringBytes("type"), []byte("error"))
}

// UsageEvent: message_start carries the input (and a first output
// count), message_delta the output so far.
func (messagesWire) UsageEvent(name []byte) bool {
	return string(name) == "message_start" || string(name) == "message_delta"
}

// EventUsage reads message_start's message.usage, then each
// message_delta's usage over it: a count a delta gives replaces the one
// before (output_tokens is cumulative).
func (messagesWire) EventUsage(name []byte, v *fastjson.Value, u *llm.Usage) {
	var uv *fastjson.Value
	if string(name) == "message_start" {
		uv = v.Get("message", "usage")
	} else {
		uv = v.Get("usage")
	}
	if uv == nil || uv.Type() != fastjson.TypeObject {
		return
	}
	input, read, write := u.PromptTokens-u.CachedTokens-u.CacheCreationTokens, u.CachedTokens, u.CacheCreationTokens
	output, write1h := u.CompletionTokens, u.CacheWrite1hTokens
	if uv.Exists("cache_creation", "ephemeral_1h_input_tokens") {
		write1h = providers.Count(uv, "cache_creation", "ephemeral_1h_input_tokens")
	}
	if uv.Exists("input_tokens") {
		input = providers.Count(uv, "input_tokens")
	}
	if uv.Exists("cache_read_input_tokens") {
		read = providers.Count(uv, "cache_read_input_tokens")
	}
	if uv.Exists("cache_creation_input_tokens") {
		write = providers.Count(uv, "cache_creation_input_tokens")
	}
	if uv.Exists("output_tokens") {
		output = providers.Count(uv, "output_tokens")
	}
	*u = usageOf(input, output, read, write)
	u.CacheWrite1hTokens = min(write1h, write)
}

// Terminal: message_stop ends a message.
func (messagesWire) Terminal(name []byte) bool { return string(name) == "message_stop" }
