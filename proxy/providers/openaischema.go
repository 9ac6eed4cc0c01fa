package providers

import (
	"bytes"
	"encoding/json"
	"net/http"
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

// OpenAIUsage is the usage object of an answer or of the final stream
// chunk.
type OpenAIUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details,omitempty"`
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

// OpenAIChatCompletion is a chat.completion answer, for tests and
// readers; the codecs write answers with EncodeOpenAIResponse.
type OpenAIChatCompletion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []OpenAIChatChoice `json:"choices"`
	Usage   *OpenAIUsage       `json:"usage,omitempty"`
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
