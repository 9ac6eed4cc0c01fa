package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// DecodeOpenAIResponses decodes an OpenAI Responses body (POST
// /responses) into the neutral model, keeping the body as Raw, for the
// stateless translating door of CONTRACT §12.
//
// input is a string (one user message) or a list of items: messages
// (input_text, input_image, output_text and refusal content), function
// calls (merged into the assistant message before them, so parallel
// calls stay one turn) and function call outputs (tool messages).
// Reasoning items carrying signed thinking the door wrote become thinking
// parts of the assistant turn they precede; others are left out.
// instructions are System; function tools, tool_choice, text.format
// (ResponseFormat), reasoning.effort, max_output_tokens, temperature,
// top_p, parallel_tool_calls, user and metadata map to their neutral
// fields. What needs the provider's stored state or tools — a
// previous_response_id, a conversation, store: true, background mode,
// stored prompts, item references, built-in tools — is an
// *UnsupportedError naming the field; nothing is dropped silently. A body
// that does not fit the schema is a *SchemaError.
func DecodeOpenAIResponses(body []byte) (*Request, error) {
	in, err := readOpenAIResponses(body)
	if err != nil {
		return nil, err
	}
	switch {
	case in.PreviousResponseID != nil && *in.PreviousResponseID != "":
		return nil, unsupported("previous_response_id", "previous_response_id is not supported: the compat Responses door is stateless; send the whole conversation as input")
	case number(in.Conversation) != nil:
		return nil, unsupported("conversation", "conversation is not supported: the compat Responses door is stateless")
	case in.Store != nil && *in.Store:
		return nil, unsupported("store", "store: true is not supported: the compat Responses door stores nothing")
	case in.Background != nil && *in.Background:
		return nil, unsupported("background", "background mode is not supported on the compat Responses door")
	case number(in.Prompt) != nil:
		return nil, unsupported("prompt", "stored prompts are not supported on the compat Responses door")
	}
	r := &Request{
		Wire: WireOpenAIResponses, Raw: body, Model: in.Model,
		Temperature: number(in.Temperature), TopP: number(in.TopP),
		Stream: in.Stream, MaxOutputTokens: in.MaxOutputTokens, User: in.User,
		ParallelToolCalls: in.ParallelToolCalls, Metadata: in.Metadata,
	}
	if in.Instructions != nil && *in.Instructions != "" {
		r.System = []Part{{Kind: PartText, WireType: "input_text", Text: *in.Instructions}}
	}
	msgs, err := in.Input.messages()
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, &SchemaError{Err: errors.New("input is required and must hold at least one message")}
	}
	r.Messages = msgs
	for i, t := range in.Tools {
		if t.Type != "function" {
			return nil, unsupported("tools["+strconv.Itoa(i)+"].type",
				"the tool type "+strconv.Quote(t.Type)+" is not supported on the compat Responses door: only function tools")
		}
		if t.Name == "" {
			return nil, &SchemaError{Err: fmt.Errorf("tools[%d].name is required", i)}
		}
		r.Tools = append(r.Tools, Tool{Type: "function", Name: t.Name, Description: t.Description, Parameters: number(t.Parameters), Strict: t.Strict})
	}
	if tc := number(in.ToolChoice); tc != nil {
		c, err := responsesToolChoice(tc)
		if err != nil {
			return nil, err
		}
		r.ToolChoice = c
	}
	if in.Text != nil && in.Text.Format != nil {
		f := in.Text.Format
		switch f.Type {
		case "text", "":
		case "json_object":
			r.ResponseFormat = &ResponseFormat{Type: "json_object"}
		case "json_schema":
			if f.Name == "" {
				return nil, &SchemaError{Err: errors.New("text.format.name is required for json_schema")}
			}
			r.ResponseFormat = &ResponseFormat{Type: "json_schema", Name: f.Name, Description: f.Description,
				Schema: number(f.Schema), Strict: f.Strict}
		default:
			return nil, unsupported("text.format.type", "text.format.type "+strconv.Quote(f.Type)+" is not supported")
		}
	}
	if err := in.options(r); err != nil {
		return nil, err
	}
	if rs := in.Reasoning; rs != nil && rs.Effort != nil && *rs.Effort != "" {
		switch e := *rs.Effort; e {
		case "minimal", "low", "medium", "high":
			r.Reasoning = &Reasoning{Effort: e}
		case "none":
		default:
			return nil, unsupported("reasoning.effort", "reasoning.effort "+strconv.Quote(e)+" is not supported")
		}
	}
	return r, nil
}

// The include values of the compat Responses door: the ones it serves,
// and the ones it ignores because they add fields only to what it never
// answers (built-in tool calls, which it refuses, and input items, which
// it does not echo), so that they change nothing.
const (
	includeEncrypted = "reasoning.encrypted_content"
	includeLogprobs  = "message.output_text.logprobs"
)

var includeIgnored = []string{"message.input_image.image_url", "computer_call_output.output.image_url",
	"file_search_call.results", "web_search_call.results", "web_search_call.action.sources", "code_interpreter_call.outputs"}

// options reads include, top_logprobs, truncation and service_tier
// (docs/decisions.md, "The compat Responses door's optional fields"):
// logprobs, their alternatives and the service tier are carried to the
// OpenAI chat body (providers without them refuse logprobs and ignore the
// tier, which changes no answer); truncation "auto" is accepted and acts
// as "disabled", since the gateway never drops input (a prompt over the
// model's window is the provider's error, not a different answer).
func (in *openAIResponses) options(r *Request) error {
	for i, v := range in.Include {
		switch {
		case v == includeLogprobs:
			r.WantLogprobs = true
		case v == includeEncrypted, slices.Contains(includeIgnored, v):
		default:
			return &SchemaError{Err: fmt.Errorf("include[%d] %q is not one of the include values", i, v)}
		}
	}
	if n := in.TopLogprobs; n != nil {
		if *n < 0 || *n > 20 {
			return &SchemaError{Err: errors.New("top_logprobs must be an integer from 0 to 20")}
		}
		if *n > 0 {
			r.WantLogprobs, r.LogprobsTop = true, n
		}
	}
	if t := in.Truncation; t != nil && *t != "auto" && *t != "disabled" {
		return &SchemaError{Err: fmt.Errorf("truncation %q is not auto or disabled", *t)}
	}
	if t := in.ServiceTier; t != nil && *t != "" {
		switch *t {
		case "auto", "default", "flex", "priority", "scale":
			r.ServiceTier = *t
		case "fast":
			r.ServiceTier = "priority" // OpenAI's alias of priority
		default:
			return &SchemaError{Err: fmt.Errorf("service_tier %q is not one of auto, default, flex, scale, priority, fast", *t)}
		}
	}
	return nil
}

func unsupported(param, msg string) error { return &UnsupportedError{Param: param, Message: msg} }

// responsesToolChoice decodes tool_choice: "auto", "none", "required" or
// {"type":"function","name":…}; hosted tool choices are unsupported.
func responsesToolChoice(raw json.RawMessage) (*ToolChoice, error) {
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, &SchemaError{Err: err}
		}
		switch s {
		case "auto":
			return &ToolChoice{Mode: ToolChoiceAuto}, nil
		case "none":
			return &ToolChoice{Mode: ToolChoiceNone}, nil
		case "required":
			return &ToolChoice{Mode: ToolChoiceRequired}, nil
		}
		return nil, &SchemaError{Err: fmt.Errorf("tool_choice %q is not one of auto, none, required", s)}
	}
	var o struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, &SchemaError{Err: errors.New("tool_choice must be a string or an object")}
	}
	if o.Type != "function" {
		return nil, unsupported("tool_choice", "tool_choice of type "+strconv.Quote(o.Type)+" is not supported on the compat Responses door")
	}
	if o.Name == "" {
		return nil, &SchemaError{Err: errors.New("tool_choice.name is required")}
	}
	return &ToolChoice{Mode: ToolChoiceFunction, Name: o.Name, Raw: raw}, nil
}

// messages returns the items as neutral messages.
//
// A reasoning item whose encrypted_content the door wrote
// (AppendThinkingContent) is the signed thinking of the assistant turn
// that follows it: a thinking part of the next assistant message (or
// function call), which EncodeOpenAIChat leaves out and CarryThinking
// brings back for Anthropic and Claude on Bedrock. Other reasoning items
// (a summary only, or another system's encrypted_content) are left out:
// no provider reads them back.
func (in responsesInput) messages() ([]Message, error) {
	out := make([]Message, 0, len(in))
	// thinking is the signed thinking waiting for its assistant turn.
	var thinking []Part
	for i, it := range in {
		at := "input[" + strconv.Itoa(i) + "]"
		switch it.Type {
		case "message", "":
			switch it.Role {
			case "user", "assistant", "system", "developer":
			default:
				return nil, &SchemaError{Err: fmt.Errorf("%s.role must be user, assistant, system or developer", at)}
			}
			parts, err := it.Content.parts(at + ".content")
			if err != nil {
				return nil, err
			}
			if it.Role == "assistant" && len(thinking) > 0 {
				parts, thinking = append(thinking, parts...), nil
			}
			out = append(out, Message{Role: Role(it.Role), Parts: parts})
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				return nil, &SchemaError{Err: fmt.Errorf("%s needs call_id and name", at)}
			}
			call := ToolCall{ID: it.CallID, Type: "function", Name: it.Name, Arguments: it.Arguments}
			// Calls join the assistant turn they follow: one turn may call
			// several tools.
			if n := len(out); n > 0 && out[n-1].Role == RoleAssistant {
				out[n-1].ToolCalls = append(out[n-1].ToolCalls, call)
				out[n-1].Parts = append(out[n-1].Parts, thinking...)
			} else {
				out = append(out, Message{Role: RoleAssistant, Parts: thinking, ToolCalls: []ToolCall{call}})
			}
			thinking = nil
		case "function_call_output":
			if it.CallID == "" {
				return nil, &SchemaError{Err: fmt.Errorf("%s.call_id is required", at)}
			}
			var text []byte
			for k, p := range it.Output {
				if p.Type != "input_text" && p.Type != "output_text" {
					return nil, unsupported(at+".output["+strconv.Itoa(k)+"]",
						"function call outputs with "+strconv.Quote(p.Type)+" parts are not supported on the compat Responses door")
				}
				text = append(text, p.Text...)
			}
			out = append(out, Message{Role: RoleTool, ToolCallID: it.CallID,
				Parts: []Part{{Kind: PartText, WireType: "input_text", Text: string(text)}}})
		case "reasoning":
			if it.EncryptedContent != nil {
				if p, ok := thinkingContent(*it.EncryptedContent); ok {
					thinking = append(thinking, p)
				}
			}
		default:
			return nil, unsupported(at+".type", "input items of type "+strconv.Quote(it.Type)+" are not supported on the compat Responses door")
		}
	}
	return out, nil
}

// parts returns the content as neutral parts; at names them in errors.
func (c responsesContent) parts(at string) ([]Part, error) {
	out := make([]Part, 0, len(c))
	for j, p := range c {
		switch p.Type {
		case "input_text", "output_text", "text":
			out = append(out, Part{Kind: PartText, WireType: p.Type, Text: p.Text})
		case "refusal":
			out = append(out, Part{Kind: PartText, WireType: p.Type, Text: p.Refusal})
		case "input_image":
			if p.ImageURL == nil || *p.ImageURL == "" {
				return nil, unsupported(at+"["+strconv.Itoa(j)+"]", "images by file_id are not supported on the compat Responses door: give image_url")
			}
			d := p.Detail
			if d == "auto" {
				d = ""
			}
			out = append(out, Part{Kind: PartImage, WireType: p.Type, ImageURL: *p.ImageURL, ImageDetail: d})
		default:
			return nil, unsupported(at+"["+strconv.Itoa(j)+"]",
				"content parts of type "+strconv.Quote(p.Type)+" are not supported on the compat Responses door")
		}
	}
	return out, nil
}
