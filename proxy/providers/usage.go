package providers

import (
	"bytes"
	"net/http"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
)

// ErrInvalidResponse is the message for an answer that is not the JSON it
// should be (an HTML page from a load balancer, a truncated body).
const ErrInvalidResponse = "upstream sent an invalid response"

// ReadOpenAIUsage reads an OpenAI usage object: prompt_tokens,
// completion_tokens, total_tokens, prompt_tokens_details.cached_tokens
// (DeepSeek's prompt_cache_hit_tokens when there is none),
// prompt_tokens_details.cache_write_tokens or cache_creation_tokens (the
// servers that report cache writes; the gateway's own encoder) and completion_tokens_details.reasoning_tokens (embeddings have
// only the prompt and total). An explicit zero stays zero; a missing total
// is the sum. Negative or non-integer counts read as zero.
func ReadOpenAIUsage(v *fastjson.Value) llm.Usage {
	u := llm.Usage{
		Present:             true,
		PromptTokens:        Count(v, "prompt_tokens"),
		CompletionTokens:    Count(v, "completion_tokens"),
		CachedTokens:        Count(v, "prompt_tokens_details", "cached_tokens"),
		CacheCreationTokens: Count(v, "prompt_tokens_details", "cache_write_tokens"),
		ReasoningTokens:     Count(v, "completion_tokens_details", "reasoning_tokens"),
	}
	if !v.Exists("prompt_tokens_details", "cached_tokens") {
		u.CachedTokens = Count(v, "prompt_cache_hit_tokens")
	}
	if u.CacheCreationTokens == 0 { // the name the gateway's own encoder writes
		u.CacheCreationTokens = Count(v, "prompt_tokens_details", "cache_creation_tokens")
	}
	if v.Exists("total_tokens") {
		u.TotalTokens = Count(v, "total_tokens")
	} else {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u
}

// Count reads a non-negative integer at keys of v; anything else is 0.
func Count(v *fastjson.Value, keys ...string) int64 {
	return max(v.GetInt64(keys...), 0)
}

// usageOf returns the usage object of a chunk or answer, or nil when it
// has none (absent or null).
func usageOf(v *fastjson.Value) *fastjson.Value {
	if u := v.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		return u
	}
	return nil
}

// upstreamError returns the *Error for an {"error":…} object, or nil when
// v carries none. The message is scrubbed of key.
func upstreamError(v *fastjson.Value, raw []byte, key secret.Value) *Error {
	e := v.Get("error")
	if e == nil || e.Type() == fastjson.TypeNull {
		return nil
	}
	msg := ErrorMessage(raw)
	if msg == "" {
		msg = "the upstream reported an error"
	}
	return &Error{Status: http.StatusBadGateway, Message: Scrub(msg, key)}
}

// InspectAnswer parses a complete OpenAI answer (chat completion, text
// completion or embeddings list) with p and returns its usage and model.
// An answer that is not a JSON object, or that is an error object sent
// with a 2xx status, is an *Error with status 502.
func InspectAnswer(p *fastjson.Parser, body []byte, key secret.Value) (llm.Usage, string, error) {
	v, err := p.ParseBytes(body)
	if err != nil || v.Type() != fastjson.TypeObject {
		return llm.Usage{}, "", &Error{Status: http.StatusBadGateway, Message: ErrInvalidResponse}
	}
	if e := upstreamError(v, body, key); e != nil {
		return llm.Usage{}, "", e
	}
	var u llm.Usage
	if uv := usageOf(v); uv != nil {
		u = ReadOpenAIUsage(uv)
	}
	return u, string(v.GetStringBytes("model")), nil
}

// chunk is what the gateway needs to know about one stream chunk.
type chunk struct {
	Usage     llm.Usage // Present when the chunk carried a usage object
	UsageOnly bool      // usage and no choices: the chunk include_usage adds
}

// InspectChunk parses the data of one OpenAI stream event with p. Usage
// is read from any chunk that has it, also one that still has choices
// (LiteLLM #36168). An {"error":…} event or data that is not a JSON
// object is an *Error with status 502.
func InspectChunk(p *fastjson.Parser, data []byte, key secret.Value) (chunk, error) {
	v, err := p.ParseBytes(data)
	if err != nil || v.Type() != fastjson.TypeObject {
		return chunk{}, &Error{Status: http.StatusBadGateway, Message: "upstream sent an invalid stream event"}
	}
	if e := upstreamError(v, data, key); e != nil {
		return chunk{}, e
	}
	uv := usageOf(v)
	if uv == nil {
		return chunk{}, nil
	}
	choices := v.Get("choices")
	empty := choices == nil || choices.Type() == fastjson.TypeNull ||
		choices.Type() == fastjson.TypeArray && len(choices.GetArray()) == 0
	return chunk{Usage: ReadOpenAIUsage(uv), UsageOnly: empty}, nil
}

var errorParsers fastjson.ParserPool

// ErrorMessage finds the human message in an upstream error body: the
// JSON error.message (OpenAI, Anthropic, Gemini), error (a string),
// message (Cohere, Bedrock) or detail; a short text body as it is; and ""
// for HTML or nothing usable.
func ErrorMessage(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] == '<' {
		return ""
	}
	if body[0] != '{' && body[0] != '[' {
		return string(body[:min(len(body), 4*MaxMessage)])
	}
	p := errorParsers.Get()
	defer errorParsers.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil {
		return ""
	}
	if v.Type() == fastjson.TypeArray { // Gemini sometimes wraps it in a list
		v = v.Get("0")
	}
	for _, path := range [][]string{{"error", "message"}, {"error"}, {"message"}, {"detail"}, {"error", "error", "message"}} {
		if s := v.Get(path...); s != nil && s.Type() == fastjson.TypeString {
			b, _ := s.StringBytes()
			return string(b)
		}
	}
	return ""
}
