package llm

import (
	"encoding/json"
	"strconv"
)

// EncodeOpenAIChat encodes r as an OpenAI chat completions body: what a
// door of another wire (Anthropic Messages) hands the pipeline, so that
// every codec — the OpenAI-wire ones that pass the body on, and the
// translating ones that decode it with DecodeOpenAIChat — can send it.
//
// System parts become a leading system message; tool calls inside the
// content (PartToolCall) become the message's tool_calls; tool results
// inside a user message (PartToolResult) become tool messages, in their
// place, before the rest of that message. Thinking parts of earlier
// assistant turns have no place in the OpenAI chat wire and are left out
// (the model's own reasoning, which providers do not read back except
// Anthropic's; CarryThinking carries them beside the body for those). A reasoning budget becomes
// reasoning_effort: below 4096 tokens low, below 16384 medium, else high.
// A streamed request asks for the usage chunk. Parts the wire cannot
// carry are an *UnsupportedError naming them.
func EncodeOpenAIChat(r *Request) ([]byte, error) {
	out := openAIChatOut{Model: r.Model, MaxTokens: r.MaxOutputTokens, Temperature: r.Temperature,
		TopP: r.TopP, Stop: r.Stop, Stream: r.Stream, User: r.User, ParallelToolCalls: r.ParallelToolCalls,
		Logprobs: r.WantLogprobs, TopLogprobs: r.LogprobsTop, ServiceTier: r.ServiceTier}
	if r.Stream {
		out.StreamOptions = &struct {
			IncludeUsage bool `json:"include_usage"`
		}{true}
	}
	if len(r.System) > 0 {
		content, err := contentOut(r.System, "system")
		if err != nil {
			return nil, err
		}
		out.Messages = append(out.Messages, openAIMessageOut{Role: "system", Content: content})
	}
	for i := range r.Messages {
		msgs, err := messagesOut(&r.Messages[i], "messages["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		out.Messages = append(out.Messages, msgs...)
	}
	for _, t := range r.Tools {
		ot := openAIToolOut{Type: "function"}
		ot.Function.Name, ot.Function.Description, ot.Function.Parameters, ot.Function.Strict = t.Name, t.Description, t.Parameters, t.Strict
		out.Tools = append(out.Tools, ot)
	}
	if tc := r.ToolChoice; tc != nil {
		switch tc.Mode {
		case ToolChoiceAuto:
			out.ToolChoice = json.RawMessage(`"auto"`)
		case ToolChoiceNone:
			out.ToolChoice = json.RawMessage(`"none"`)
		case ToolChoiceRequired:
			out.ToolChoice = json.RawMessage(`"required"`)
		case ToolChoiceFunction:
			b, _ := json.Marshal(tc.Name)
			out.ToolChoice = json.RawMessage(`{"type":"function","function":{"name":` + string(b) + `}}`)
		default:
			return nil, &UnsupportedError{Param: "tool_choice", Message: "this tool_choice is not supported"}
		}
	}
	if rs := r.Reasoning; rs != nil {
		out.ReasoningEffort = rs.Effort
		if b := rs.BudgetTokens; b != nil {
			switch {
			case *b < 4096:
				out.ReasoningEffort = "low"
			case *b < 16384:
				out.ReasoningEffort = "medium"
			default:
				out.ReasoningEffort = "high"
			}
		}
	}
	if rf := r.ResponseFormat; rf != nil && (rf.Type == "json_object" || rf.Type == "json_schema") {
		b, err := responseFormatOut(rf)
		if err != nil {
			return nil, err
		}
		out.ResponseFormat = b
	}
	return json.Marshal(&out)
}

// responseFormatOut is rf as OpenAI chat's response_format.
func responseFormatOut(rf *ResponseFormat) (json.RawMessage, error) {
	if rf.Type == "json_object" {
		return json.RawMessage(`{"type":"json_object"}`), nil
	}
	var s struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Schema      json.RawMessage `json:"schema,omitempty"`
			Strict      *bool           `json:"strict,omitempty"`
		} `json:"json_schema"`
	}
	s.Type = "json_schema"
	s.JSONSchema.Name, s.JSONSchema.Description, s.JSONSchema.Schema, s.JSONSchema.Strict = rf.Name, rf.Description, rf.Schema, rf.Strict
	return json.Marshal(&s)
}

// messagesOut is m in OpenAI messages: one, or, for a user message with
// tool results, a tool message per result and the rest.
func messagesOut(m *Message, at string) ([]openAIMessageOut, error) {
	var msgs []openAIMessageOut
	rest := make([]Part, 0, len(m.Parts))
	var calls []openAIToolCallOut
	for _, p := range m.Parts {
		switch p.Kind {
		case PartToolResult:
			if m.Role != RoleUser {
				return nil, &UnsupportedError{Param: at, Message: "tool results belong in user messages"}
			}
			id := ""
			if p.ToolCall != nil {
				id = p.ToolCall.ID
			}
			// A cache_control on the tool_result rides on its text, so
			// that the cache breakpoint reaches Anthropic (as the text
			// block closing the tool_result's content).
			text, err := contentOut([]Part{{Kind: PartText, Text: p.Text, CacheControl: p.CacheControl}}, at)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, openAIMessageOut{Role: "tool", ToolCallID: id, Content: text})
		case PartToolCall:
			if m.Role != RoleAssistant {
				return nil, &UnsupportedError{Param: at, Message: "tool calls belong in assistant messages"}
			}
			c := openAIToolCallOut{ID: p.ToolCall.ID, Type: "function"}
			c.Function.Name, c.Function.Arguments = p.ToolCall.Name, p.ToolCall.Arguments
			calls = append(calls, c)
		case PartThinking, PartRedactedThinking:
			// Left out: see EncodeOpenAIChat.
		default:
			rest = append(rest, p)
		}
	}
	for _, tc := range m.ToolCalls {
		c := openAIToolCallOut{ID: tc.ID, Type: "function"}
		c.Function.Name, c.Function.Arguments = tc.Name, tc.Arguments
		calls = append(calls, c)
	}
	if len(rest) == 0 && len(calls) == 0 && len(msgs) > 0 {
		return msgs, nil
	}
	content, err := contentOut(rest, at)
	if err != nil {
		return nil, err
	}
	if content == nil && len(calls) == 0 {
		content = json.RawMessage(`""`)
	}
	return append(msgs, openAIMessageOut{Role: string(m.Role), Name: m.Name, Content: content,
		ToolCalls: calls, ToolCallID: m.ToolCallID}), nil
}

// contentOut is parts as an OpenAI content: a string for one plain text
// part, else an array of parts; nil for none.
func contentOut(parts []Part, at string) (json.RawMessage, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	if len(parts) == 1 && parts[0].Kind == PartText && parts[0].CacheControl == nil {
		return json.Marshal(parts[0].Text)
	}
	out := make([]openAIPartOut, 0, len(parts))
	for j, p := range parts {
		op := openAIPartOut{CacheControl: p.CacheControl}
		switch p.Kind {
		case PartText:
			op.Type, op.Text = "text", &p.Text
		case PartImage:
			op.Type = "image_url"
			op.ImageURL = &openAIImageURLOut{URL: p.ImageURL, Detail: p.ImageDetail}
		default:
			return nil, &UnsupportedError{Param: at + ".content[" + strconv.Itoa(j) + "]",
				Message: "content blocks of type " + strconv.Quote(p.WireType) + " are not supported on the translating Messages door"}
		}
		out = append(out, op)
	}
	return json.Marshal(out)
}

// The OpenAI chat request as EncodeOpenAIChat writes it.
type (
	openAIChatOut struct {
		Model         string             `json:"model"`
		Messages      []openAIMessageOut `json:"messages"`
		MaxTokens     *int64             `json:"max_tokens,omitempty"`
		Temperature   json.RawMessage    `json:"temperature,omitempty"`
		TopP          json.RawMessage    `json:"top_p,omitempty"`
		Stop          []string           `json:"stop,omitempty"`
		Stream        bool               `json:"stream,omitempty"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options,omitempty"`
		User              string          `json:"user,omitempty"`
		Tools             []openAIToolOut `json:"tools,omitempty"`
		ToolChoice        json.RawMessage `json:"tool_choice,omitempty"`
		ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
		ReasoningEffort   string          `json:"reasoning_effort,omitempty"`
		ResponseFormat    json.RawMessage `json:"response_format,omitempty"`
		Logprobs          bool            `json:"logprobs,omitempty"`
		TopLogprobs       *int64          `json:"top_logprobs,omitempty"`
		ServiceTier       string          `json:"service_tier,omitempty"`
	}
	openAIMessageOut struct {
		Role       string              `json:"role"`
		Name       string              `json:"name,omitempty"`
		Content    json.RawMessage     `json:"content"`
		ToolCalls  []openAIToolCallOut `json:"tool_calls,omitempty"`
		ToolCallID string              `json:"tool_call_id,omitempty"`
	}
	openAIPartOut struct {
		Type         string             `json:"type"`
		Text         *string            `json:"text,omitempty"`
		ImageURL     *openAIImageURLOut `json:"image_url,omitempty"`
		CacheControl json.RawMessage    `json:"cache_control,omitempty"`
	}
	openAIImageURLOut struct {
		URL    string `json:"url"`
		Detail string `json:"detail,omitempty"`
	}
	openAIToolOut struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters,omitempty"`
			Strict      *bool           `json:"strict,omitempty"`
		} `json:"function"`
	}
	openAIToolCallOut struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
)
