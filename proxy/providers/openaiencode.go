package providers

import (
	"strconv"

	"github.com/sluicehq/sluice/internal/jsonstr"
	"github.com/sluicehq/sluice/internal/llm"
)

// The one OpenAI chat encoder of the neutral answer model: every
// translating codec decodes its provider's answer into an llm.Response
// (or, streamed, llm.Events) and relays what these functions write.
// They append into a caller's buffer, without reflection, so that a
// stream can reuse one buffer for all its chunks.

// OpenAIOptions are the choices the OpenAI encoder leaves to a codec:
// where its answers have always differed and the neutral model has no
// say.
type OpenAIOptions struct {
	// ReasoningDetails writes usage.completion_tokens_details with
	// Usage.ReasoningTokens, zero included (Gemini's answers, as Google's
	// own OpenAI compatibility layer writes them).
	ReasoningDetails bool
}

// EncodeOpenAIResponse is the chat.completion of r. Each choice's message
// content is the concatenation of its text parts, null when it has none
// (a codec adds an empty text part for an empty answer that is not null);
// its refusal is null (no provider of the gateway's gives one apart);
// tool calls carry their signature as extra_content.google.
// thought_signature. The usage object is there when the provider
// reported usage (Usage.Present).
func EncodeOpenAIResponse(r *llm.Response) ([]byte, error) {
	n := 256
	for i := range r.Choices {
		for _, p := range r.Choices[i].Message.Parts {
			n += len(p.Text)
		}
		for _, tc := range r.Choices[i].Message.ToolCalls {
			n += 128 + len(tc.Arguments)
		}
	}
	return AppendOpenAIResponse(make([]byte, 0, n), r, OpenAIOptions{}), nil
}

// AppendOpenAIResponse appends the chat.completion of r to dst, as
// EncodeOpenAIResponse writes it with the options opts.
func AppendOpenAIResponse(dst []byte, r *llm.Response, opts OpenAIOptions) []byte {
	dst = appendOpenAIHead(dst, r.ID, "chat.completion", r.Created, r.Model)
	dst = append(dst, `"choices":[`...)
	for i := range r.Choices {
		c := &r.Choices[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"index":`...)
		dst = strconv.AppendInt(dst, int64(c.Index), 10)
		dst = append(dst, `,"message":{"role":"assistant","content":`...)
		dst = appendTextContent(dst, c.Message.Parts)
		dst = append(dst, `,"refusal":null`...)
		if len(c.Message.ToolCalls) > 0 {
			dst = append(dst, `,"tool_calls":[`...)
			for j := range c.Message.ToolCalls {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendToolCall(dst, -1, &c.Message.ToolCalls[j])
			}
			dst = append(dst, ']')
		}
		dst = append(dst, `},"logprobs":null,"finish_reason":"`...)
		dst = append(dst, c.Finish...)
		dst = append(dst, `"}`...)
	}
	dst = append(dst, ']')
	if r.Usage.Present {
		dst = append(dst, `,"usage":`...)
		dst = appendUsage(dst, r.Usage, opts)
	}
	return append(dst, '}')
}

// appendOpenAIHead appends the fields an answer or chunk starts with,
// up to and including the comma before "choices".
func appendOpenAIHead(dst []byte, id, object string, created int64, model string) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonstr.Append(dst, id)
	dst = append(dst, `,"object":"`...)
	dst = append(dst, object...)
	dst = append(dst, `","created":`...)
	dst = strconv.AppendInt(dst, created, 10)
	dst = append(dst, `,"model":`...)
	dst = jsonstr.Append(dst, model)
	return append(dst, ',')
}

// appendTextContent appends the text parts of a message joined, as one
// JSON string, or null when there are none.
func appendTextContent(dst []byte, parts []llm.Part) []byte {
	found := false
	for i := range parts {
		if parts[i].Kind != llm.PartText {
			continue
		}
		if !found {
			dst = append(dst, '"')
			found = true
		}
		dst = jsonstr.AppendEscaped(dst, parts[i].Text)
	}
	if !found {
		return append(dst, "null"...)
	}
	return append(dst, '"')
}

// appendToolCall appends one tool call; index, when not negative, is a
// stream delta's index of the call. A call without ID and Name is a
// delta's later piece: only its arguments are written.
func appendToolCall(dst []byte, index int, tc *llm.ToolCall) []byte {
	dst = append(dst, '{')
	if index >= 0 {
		dst = append(dst, `"index":`...)
		dst = strconv.AppendInt(dst, int64(index), 10)
		dst = append(dst, ',')
	}
	dst = append(dst, `"id":`...)
	dst = jsonstr.Append(dst, tc.ID)
	dst = append(dst, `,"type":"function","function":{"name":`...)
	dst = jsonstr.Append(dst, tc.Name)
	dst = append(dst, `,"arguments":`...)
	dst = jsonstr.Append(dst, tc.Arguments)
	dst = append(dst, '}')
	if tc.Signature != "" {
		dst = append(dst, `,"extra_content":{"google":{"thought_signature":`...)
		dst = jsonstr.Append(dst, tc.Signature)
		dst = append(dst, "}}"...)
	}
	return append(dst, '}')
}

// AppendUsageJSON appends u as OpenAI's usage object.
func AppendUsageJSON(dst []byte, u llm.Usage) []byte {
	return appendUsage(dst, u, OpenAIOptions{})
}

// appendUsage appends u as OpenAI's usage object, with
// completion_tokens_details when opts asks for it.
func appendUsage(dst []byte, u llm.Usage, opts OpenAIOptions) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, u.PromptTokens, 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, u.CompletionTokens, 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, u.TotalTokens, 10)
	dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
	dst = strconv.AppendInt(dst, u.CachedTokens, 10)
	dst = append(dst, '}')
	if opts.ReasoningDetails {
		dst = append(dst, `,"completion_tokens_details":{"reasoning_tokens":`...)
		dst = strconv.AppendInt(dst, u.ReasoningTokens, 10)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}
