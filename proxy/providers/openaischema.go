package providers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/llm"
)

// The OpenAI chat schema as the translating codecs (Anthropic, Gemini,
// Bedrock, Cohere) need it: the request decoded into the neutral model
// (DecodeChat), because a translation needs its structure, and the
// answer they build. The OpenAI codec never decodes a body this way; it
// passes raw bytes.

// OpenAIToolCall is a tool call of an assistant message, in a request or
// an answer. Arguments is the JSON text of the arguments.
type OpenAIToolCall struct {
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Function OpenAIFunctionCall `json:"function"`
}

// OpenAIFunctionCall is the function of a tool call.
type OpenAIFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// DecodeChat decodes a chat request body into the neutral model
// (llm.DecodeOpenAIChat), for a translating codec to encode from. A body
// that does not fit the schema is an *Error with status 400 naming the
// provider, since the gateway has only checked that it is JSON.
func DecodeChat(provider string, body []byte) (*llm.Request, error) {
	r, err := llm.DecodeOpenAIChat(body)
	if err != nil {
		return nil, &Error{Status: http.StatusBadRequest, Message: provider + ": " + err.Error()}
	}
	return r, nil
}

// RawNumber returns raw unless it is absent or JSON null.
func RawNumber(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// ParseDataURL splits a base64 data URL ("data:image/png;base64,…") into
// its media type and data; ok is false for anything else.
func ParseDataURL(u string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	mediaType, params, _ := strings.Cut(meta, ";")
	if !strings.Contains(";"+params+";", ";base64;") || mediaType == "" {
		return "", "", false
	}
	return mediaType, data, true
}

// OpenAIChatCompletion is a chat.completion answer as translating
// adapters build it; encoded with encoding/json, its fields keep this
// order.
type OpenAIChatCompletion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []OpenAIChatChoice `json:"choices"`
	Usage   *openAIUsageJSON   `json:"usage,omitempty"`
}

// OpenAIChatChoice is one choice of an answer.
type OpenAIChatChoice struct {
	Index        int                 `json:"index"`
	Message      OpenAIAnswerMessage `json:"message"`
	Logprobs     json.RawMessage     `json:"logprobs"`
	FinishReason string              `json:"finish_reason"`
}

// OpenAIAnswerMessage is the assistant message of a choice; Content is
// null when the answer is only tool calls.
type OpenAIAnswerMessage struct {
	Role      string           `json:"role"`
	Content   *string          `json:"content"`
	Refusal   *string          `json:"refusal"`
	ToolCalls []OpenAIToolCall `json:"tool_calls,omitempty"`
}

// openAIUsageJSON is the usage object of an answer or of the final
// stream chunk.
type openAIUsageJSON struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// UsageJSON returns u as OpenAI's usage object.
func UsageJSON(u llm.Usage) *openAIUsageJSON {
	j := &openAIUsageJSON{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	j.PromptTokensDetails.CachedTokens = u.CachedTokens
	return j
}

// AppendUsageJSON appends u as OpenAI's usage object, for chunks built by
// appending.
func AppendUsageJSON(dst []byte, u llm.Usage) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, u.PromptTokens, 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, u.CompletionTokens, 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, u.TotalTokens, 10)
	dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
	dst = strconv.AppendInt(dst, u.CachedTokens, 10)
	return append(dst, "}}"...)
}

// MarshalJSON encodes v without escaping <, > and & (answers carry code
// and HTML, and OpenAI does not escape them either) and without the
// trailing newline of json.Encoder.
func MarshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// EncodeOpenAIResponse is the one OpenAI encoder of a neutral answer: the
// chat.completion a translating codec relays, from the llm.Response it
// decoded the provider's answer into. Each choice's message content is
// the concatenation of its text parts, null when there are none and the
// message has tool calls; the usage object is there when the provider
// reported usage (Usage.Present).
func EncodeOpenAIResponse(r *llm.Response) ([]byte, error) {
	out := OpenAIChatCompletion{ID: r.ID, Object: "chat.completion", Created: r.Created, Model: r.Model,
		Choices: make([]OpenAIChatChoice, len(r.Choices))}
	for i, c := range r.Choices {
		msg := OpenAIAnswerMessage{Role: "assistant"}
		var text strings.Builder
		for _, p := range c.Message.Parts {
			if p.Kind == llm.PartText {
				text.WriteString(p.Text)
			}
		}
		for _, tc := range c.Message.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, OpenAIToolCall{ID: tc.ID, Type: "function",
				Function: OpenAIFunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
		if s := text.String(); s != "" || len(msg.ToolCalls) == 0 {
			msg.Content = &s
		}
		out.Choices[i] = OpenAIChatChoice{Index: c.Index, Message: msg, FinishReason: string(c.Finish)}
	}
	if r.Usage.Present {
		out.Usage = UsageJSON(r.Usage)
	}
	return MarshalJSON(&out)
}
