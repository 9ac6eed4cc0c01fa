package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// DecodeAnthropicMessages decodes an Anthropic Messages body (POST
// /v1/messages) into the neutral model, keeping the body as Raw. The top
// level system is System; content blocks become parts: text, image
// (base64 as a data: URL, or url), tool_use (PartToolCall), tool_result
// (PartToolResult, its text joined), thinking (with its signature) and
// redacted_thinking. Blocks it does not know are PartOther, named by
// their type, for the encoder to refuse. Fields the neutral model has no
// place for and that would change the answer (top_k, server tools) are
// refused here with an *UnsupportedError naming them: nothing is dropped
// silently. A body that does not fit the schema is a *SchemaError.
func DecodeAnthropicMessages(body []byte) (*Request, error) {
	var in anthropicMessages
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, &SchemaError{Err: err}
	}
	if number(in.TopK) != nil {
		return nil, &UnsupportedError{Param: "top_k", Message: "top_k is not supported on the translating Messages door"}
	}
	// Fields that change the answer and that no translated target can
	// honour are refused rather than dropped (service_tier, which
	// changes latency and price only, is ignored).
	for _, f := range [...]struct {
		name string
		raw  json.RawMessage
	}{{"mcp_servers", in.MCPServers}, {"container", in.Container}, {"context_management", in.ContextManagement}} {
		if number(f.raw) != nil {
			return nil, unsupported(f.name, f.name+" is not supported on the translating Messages door; use /anthropic/v1/messages")
		}
	}
	if oc := in.OutputConfig; oc != nil && number(oc.Effort) != nil {
		return nil, unsupported("output_config.effort", "output_config.effort is not supported on the translating Messages door; use thinking.budget_tokens, or /anthropic/v1/messages")
	}
	r := &Request{
		Wire: WireAnthropicMessages, Raw: body, Model: in.Model,
		Temperature: number(in.Temperature), TopP: number(in.TopP),
		Stop: in.StopSequences, Stream: in.Stream, MaxOutputTokens: in.MaxTokens,
	}
	if in.Metadata != nil {
		r.User = in.Metadata.UserID
	}
	sys, err := in.System.parts("system")
	if err != nil {
		return nil, err
	}
	r.System = sys
	if len(in.Messages) > 0 {
		r.Messages = make([]Message, len(in.Messages))
	}
	for i, m := range in.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, &SchemaError{Err: fmt.Errorf("messages[%d].role must be \"user\" or \"assistant\"", i)}
		}
		parts, err := m.Content.parts("messages[" + strconv.Itoa(i) + "]")
		if err != nil {
			return nil, err
		}
		r.Messages[i] = Message{Role: Role(m.Role), Parts: parts}
	}
	for i, t := range in.Tools {
		if t.Type != "" && t.Type != "custom" {
			return nil, &UnsupportedError{Param: "tools[" + strconv.Itoa(i) + "].type",
				Message: "the tool type " + strconv.Quote(t.Type) + " is not supported on the translating Messages door"}
		}
		r.Tools = append(r.Tools, Tool{Type: "function", Name: t.Name, Description: t.Description,
			Parameters: number(t.InputSchema), CacheControl: number(t.CacheControl)})
	}
	if tc := in.ToolChoice; tc != nil {
		switch tc.Type {
		case "auto":
			r.ToolChoice = &ToolChoice{Mode: ToolChoiceAuto}
		case "any":
			r.ToolChoice = &ToolChoice{Mode: ToolChoiceRequired}
		case "none":
			r.ToolChoice = &ToolChoice{Mode: ToolChoiceNone}
		case "tool":
			r.ToolChoice = &ToolChoice{Mode: ToolChoiceFunction, Name: tc.Name}
		default:
			return nil, &SchemaError{Err: fmt.Errorf("tool_choice.type %q is not one of auto, any, tool, none", tc.Type)}
		}
		if tc.DisableParallelToolUse != nil && *tc.DisableParallelToolUse {
			f := false
			r.ParallelToolCalls = &f
		}
	}
	if th := in.Thinking; th != nil {
		switch th.Type {
		case "enabled":
			if th.BudgetTokens == nil {
				return nil, &SchemaError{Err: errors.New("thinking.budget_tokens is required when thinking is enabled")}
			}
			r.Reasoning = &Reasoning{BudgetTokens: th.BudgetTokens}
		case "disabled", "":
		default:
			return nil, &UnsupportedError{Param: "thinking.type", Message: "thinking.type " + strconv.Quote(th.Type) + " is not supported"}
		}
	}
	if oc := in.OutputConfig; oc != nil && oc.Format != nil {
		// Structured outputs: the answer's JSON schema, OpenAI's
		// response_format json_schema (named "output", as Anthropic names none).
		if oc.Format.Type != "json_schema" {
			return nil, &UnsupportedError{Param: "output_config.format.type",
				Message: "output_config.format.type " + strconv.Quote(oc.Format.Type) + " is not supported (json_schema is)"}
		}
		if number(oc.Format.Schema) == nil {
			return nil, &SchemaError{Err: errors.New("output_config.format.schema is required")}
		}
		r.ResponseFormat = &ResponseFormat{Type: "json_schema", Name: "output", Schema: oc.Format.Schema}
	}
	return r, nil
}

// UnsupportedError is a request feature a door or codec cannot carry;
// Param names the field.
type UnsupportedError struct {
	Param   string
	Message string
}

func (e *UnsupportedError) Error() string { return e.Message }

// The Anthropic Messages request as the decoder reads it.
type (
	anthropicMessages struct {
		Model         string             `json:"model"`
		Messages      []anthropicMessage `json:"messages"`
		System        anthropicContent   `json:"system"`
		MaxTokens     *int64             `json:"max_tokens"`
		Temperature   json.RawMessage    `json:"temperature"`
		TopP          json.RawMessage    `json:"top_p"`
		TopK          json.RawMessage    `json:"top_k"`
		StopSequences []string           `json:"stop_sequences"`
		Stream        bool               `json:"stream"`
		Metadata      *struct {
			UserID string `json:"user_id"`
		} `json:"metadata"`
		Tools      []anthropicTool `json:"tools"`
		ToolChoice *struct {
			Type                   string `json:"type"`
			Name                   string `json:"name"`
			DisableParallelToolUse *bool  `json:"disable_parallel_tool_use"`
		} `json:"tool_choice"`
		Thinking *struct {
			Type         string `json:"type"`
			BudgetTokens *int64 `json:"budget_tokens"`
		} `json:"thinking"`
		MCPServers        json.RawMessage `json:"mcp_servers"`
		Container         json.RawMessage `json:"container"`
		ContextManagement json.RawMessage `json:"context_management"`
		OutputConfig      *struct {
			Effort json.RawMessage `json:"effort"`
			Format *struct {
				Type   string          `json:"type"`
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		} `json:"output_config"`
	}
	anthropicMessage struct {
		Role    string           `json:"role"`
		Content anthropicContent `json:"content"`
	}
	anthropicTool struct {
		Type         string          `json:"type"`
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"input_schema"`
		CacheControl json.RawMessage `json:"cache_control"`
	}
	anthropicBlock struct {
		Type         string          `json:"type"`
		Text         string          `json:"text"`
		CacheControl json.RawMessage `json:"cache_control"`
		Source       *struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
			URL       string `json:"url"`
		} `json:"source"`
		ID        string           `json:"id"`
		Name      string           `json:"name"`
		Input     json.RawMessage  `json:"input"`
		ToolUseID string           `json:"tool_use_id"`
		Content   anthropicContent `json:"content"`
		IsError   bool             `json:"is_error"`
		Thinking  string           `json:"thinking"`
		Signature string           `json:"signature"`
		Data      string           `json:"data"`
	}
)

// anthropicContent is a string or an array of content blocks.
type anthropicContent []anthropicBlock

// UnmarshalJSON accepts a string (one text block), an array of blocks or
// null.
func (c *anthropicContent) UnmarshalJSON(b []byte) error {
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
		*c = anthropicContent{{Type: "text", Text: s}}
		return nil
	case b[0] == '[':
		var blocks []anthropicBlock
		if err := json.Unmarshal(b, &blocks); err != nil {
			return err
		}
		*c = blocks
		return nil
	}
	return errors.New("content must be a string or an array of content blocks")
}

// parts returns the blocks as neutral parts; at names them in errors.
func (c anthropicContent) parts(at string) ([]Part, error) {
	if len(c) == 0 {
		return nil, nil
	}
	out := make([]Part, 0, len(c))
	for j, b := range c {
		p := Part{WireType: b.Type, CacheControl: number(b.CacheControl)}
		switch b.Type {
		case "text":
			p.Kind, p.Text = PartText, b.Text
		case "image":
			if b.Source == nil {
				return nil, &SchemaError{Err: fmt.Errorf("%s.content[%d].source is required", at, j)}
			}
			switch b.Source.Type {
			case "base64":
				p.ImageURL = "data:" + b.Source.MediaType + ";base64," + b.Source.Data
			case "url":
				p.ImageURL = b.Source.URL
			default:
				return nil, &UnsupportedError{Param: at + ".content[" + strconv.Itoa(j) + "].source.type",
					Message: "image sources of type " + strconv.Quote(b.Source.Type) + " are not supported"}
			}
			p.Kind = PartImage
		case "tool_use":
			args := "{}"
			if in := number(b.Input); in != nil {
				args = string(in)
			}
			p.Kind, p.ToolCall = PartToolCall, &ToolCall{ID: b.ID, Type: "function", Name: b.Name, Arguments: args}
		case "tool_result":
			var text []byte
			for k, rb := range b.Content {
				if rb.Type != "text" {
					return nil, &UnsupportedError{Param: at + ".content[" + strconv.Itoa(j) + "].content[" + strconv.Itoa(k) + "]",
						Message: "tool results with " + strconv.Quote(rb.Type) + " blocks are not supported on the translating Messages door"}
				}
				if len(text) > 0 {
					text = append(text, '\n')
				}
				text = append(text, rb.Text...)
			}
			p.Kind, p.Text, p.ToolCall, p.IsError = PartToolResult, string(text), &ToolCall{ID: b.ToolUseID}, b.IsError
		case "thinking":
			p.Kind, p.Text, p.Signature = PartThinking, b.Thinking, b.Signature
		case "redacted_thinking":
			p.Kind, p.Data = PartRedactedThinking, b.Data
		default:
			p.Kind = PartOther
		}
		out = append(out, p)
	}
	return out, nil
}
