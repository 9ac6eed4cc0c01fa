package bedrock

import (
	"net/http"
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/jsonstr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
)

// The Converse answer → OpenAI chat.completion translation, and the
// pieces the stream translation shares with it: usage and finish reasons.

// finishReason maps a Converse stopReason to an OpenAI
// finish_reason. Unknown reasons read as "stop".
func finishReason(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "guardrail_intervened", "content_filtered":
		return "content_filter"
	}
	return "stop" // end_turn, stop_sequence
}

// Usage reads a Converse usage object. Bedrock counts inputTokens
// apart from the tokens read from and written to the prompt cache; the
// OpenAI prompt_tokens includes them (with cached_tokens as the read
// part), so they are added, and the total is recomputed to match.
// Negative or non-integer counts read as zero.
func usage(v *fastjson.Value) llm.Usage {
	if v == nil || v.Type() != fastjson.TypeObject {
		return llm.Usage{}
	}
	read, write := providers.Count(v, "cacheReadInputTokens"), providers.Count(v, "cacheWriteInputTokens")
	u := llm.Usage{
		Present:             true,
		PromptTokens:        providers.Count(v, "inputTokens") + read + write,
		CompletionTokens:    providers.Count(v, "outputTokens"),
		CachedTokens:        read,
		CacheCreationTokens: write,
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// appendHead appends the fields an answer or chunk starts with, up
// to and including the comma before "choices".
func appendHead(b []byte, m meta, object string) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, []byte(m.id))
	b = append(b, `,"object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, m.created, 10)
	b = append(b, `,"model":`...)
	b = jsonstr.Append(b, []byte(m.model))
	return append(b, ',')
}

// chatAnswer translates a Converse answer into an OpenAI chat
// completion. An answer without output.message is an *Error 502.
func chatAnswer(p *fastjson.Parser, body []byte, m meta) ([]byte, llm.Usage, error) {
	v, err := p.ParseBytes(body)
	if err != nil || v.Type() != fastjson.TypeObject {
		return nil, llm.Usage{}, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
	}
	msg := v.Get("output", "message")
	if msg == nil || msg.Type() != fastjson.TypeObject {
		return nil, llm.Usage{}, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
	}
	var text []byte
	hasText := false
	var calls []*fastjson.Value
	for _, block := range msg.GetArray("content") {
		if t := block.Get("text"); t != nil && t.Type() == fastjson.TypeString {
			s, _ := t.StringBytes()
			text = append(text, s...)
			hasText = true
		} else if tu := block.Get("toolUse"); tu != nil && tu.Type() == fastjson.TypeObject {
			calls = append(calls, tu)
		}
		// Reasoning, citations and other blocks have no place in the
		// OpenAI message.
	}
	usage := usage(v.Get("usage"))

	out := make([]byte, 0, len(text)+256)
	out = appendHead(out, m, "chat.completion")
	out = append(out, `"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if !hasText && len(calls) > 0 {
		out = append(out, "null"...)
	} else {
		out = jsonstr.Append(out, text)
	}
	// Converse has no refusal text; OpenAI's schema requires the field.
	out = append(out, `,"refusal":null`...)
	if len(calls) > 0 {
		out = append(out, `,"tool_calls":[`...)
		for i, tu := range calls {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"id":`...)
			out = jsonstr.Append(out, tu.GetStringBytes("toolUseId"))
			out = append(out, `,"type":"function","function":{"name":`...)
			out = jsonstr.Append(out, tu.GetStringBytes("name"))
			out = append(out, `,"arguments":`...)
			args := []byte("{}")
			if in := tu.Get("input"); in != nil {
				args = in.MarshalTo(nil)
			}
			out = jsonstr.Append(out, args)
			out = append(out, "}}"...)
		}
		out = append(out, ']')
	}
	out = append(out, `},"logprobs":null,"finish_reason":`...)
	out = append(out, '"')
	out = append(out, finishReason(string(v.GetStringBytes("stopReason")))...)
	out = append(out, '"')
	out = append(out, "}]"...)
	if usage.Present {
		out = append(out, `,"usage":`...)
		out = providers.AppendUsageJSON(out, usage)
	}
	return append(out, '}'), usage, nil
}
