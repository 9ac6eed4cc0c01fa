package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/llm"
)

// The OpenAI chat schema as the translating adapters (Anthropic, Gemini,
// Bedrock, Cohere) need it: the request decoded into structs, because a
// translation needs its structure, and the answer they build. The
// OpenAI-wire adapter never decodes a body this way; it passes raw bytes.

// OpenAIChatRequest is the part of an OpenAI chat completion request that
// translating adapters read. Numbers that are only passed on are kept as
// raw JSON so that their text is not changed.
type OpenAIChatRequest struct {
	Model               string                `json:"model"`
	Messages            []OpenAIChatMessage   `json:"messages"`
	MaxTokens           *int64                `json:"max_tokens"`
	MaxCompletionTokens *int64                `json:"max_completion_tokens"`
	Temperature         json.RawMessage       `json:"temperature"`
	TopP                json.RawMessage       `json:"top_p"`
	Stop                openAIStop            `json:"stop"`
	User                string                `json:"user"`
	Tools               []OpenAITool          `json:"tools"`
	ToolChoice          json.RawMessage       `json:"tool_choice"`
	ParallelToolCalls   *bool                 `json:"parallel_tool_calls"`
	ResponseFormat      *openAIResponseFormat `json:"response_format"`
	Stream              bool                  `json:"stream"`
}

// OpenAIChatMessage is one message of a chat request.
type OpenAIChatMessage struct {
	Role       string           `json:"role"`
	Content    OpenAIContent    `json:"content"`
	Name       string           `json:"name"`
	ToolCalls  []OpenAIToolCall `json:"tool_calls"`
	ToolCallID string           `json:"tool_call_id"`
}

// OpenAIContent is a message's content as parts: a string content is one
// text part, null or absent is none.
type OpenAIContent []openAIPart

// UnmarshalJSON accepts a string, an array of content parts or null.
func (c *OpenAIContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*c = nil
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = OpenAIContent{{Type: "text", Text: s}}
		return nil
	case b[0] == '[':
		var parts []openAIPart
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		*c = parts
		return nil
	}
	return errors.New("content must be a string, an array of content parts or null")
}

// openAIPart is one content part: text, image_url, input_audio, file or
// refusal. CacheControl is the cache_control extension some clients add
// for providers with prompt caching.
type openAIPart struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	Refusal      string          `json:"refusal"`
	ImageURL     openAIImageURL  `json:"image_url"`
	CacheControl json.RawMessage `json:"cache_control"`
}

// openAIImageURL is an image_url part's target; the object form
// {"url","detail"} is the standard, a bare string is accepted too.
type openAIImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail"`
}

// UnmarshalJSON accepts {"url":…,"detail":…} or a bare URL string.
func (u *openAIImageURL) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*u = openAIImageURL{}
		return json.Unmarshal(b, &u.URL)
	}
	type plain openAIImageURL
	return json.Unmarshal(b, (*plain)(u))
}

// OpenAITool is one entry of "tools".
type OpenAITool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

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

// openAIResponseFormat is "response_format".
type openAIResponseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
	} `json:"json_schema"`
}

// openAIStop is "stop": a string, an array of strings or null.
type openAIStop []string

// UnmarshalJSON accepts a string, an array of strings or null.
func (s *openAIStop) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = openAIStop{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("stop must be a string or an array of strings")
	}
	*s = many
	return nil
}

// DecodeOpenAIChat decodes a chat request body. A body that does not fit
// the schema is an *Error with status 400 naming the provider, since the
// gateway has only checked that it is JSON.
func DecodeOpenAIChat(provider string, body []byte) (*OpenAIChatRequest, error) {
	var r OpenAIChatRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, &Error{Status: http.StatusBadRequest, Message: provider + ": " + (&llm.SchemaError{Err: err}).Error()}
	}
	return &r, nil
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
