package llm

import (
	"bytes"
	"encoding/json"
	"errors"
)

// DecodeOpenAIChat decodes an OpenAI chat completions body, the front
// door's wire, into the neutral model: the one decoder of that wire,
// which every translating codec reads through. The body is kept as Raw.
//
// It is as lenient as the OpenAI API where clients differ (a content
// string or parts, an image_url object or bare string, a stop string or
// list) and leaves judging what a provider can serve to the codecs: parts
// it does not know are PartOther, a tool_choice it does not know is
// ToolChoiceOther. A body that does not fit the schema is a *SchemaError.
func DecodeOpenAIChat(body []byte) (*Request, error) {
	var in openAIChat
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, &SchemaError{Err: err}
	}
	r := &Request{
		Wire: WireOpenAIChat, Raw: body, Model: in.Model,
		ParallelToolCalls: in.ParallelToolCalls,
		Temperature:       number(in.Temperature), TopP: number(in.TopP),
		Stop: in.Stop, Stream: in.Stream, User: in.User,
		MaxOutputTokens: in.MaxCompletionTokens,
	}
	if r.MaxOutputTokens == nil {
		r.MaxOutputTokens = in.MaxTokens
	}
	// metadata and reasoning_effort are read leniently: no codec refused
	// a body for their shape before they were part of the model.
	var effort string
	if json.Unmarshal(in.ReasoningEffort, &effort) == nil && effort != "" {
		r.Reasoning = &Reasoning{Effort: effort}
	}
	var metadata map[string]string
	if json.Unmarshal(in.Metadata, &metadata) == nil && len(metadata) > 0 {
		r.Metadata = metadata
	}
	if len(in.Messages) > 0 {
		r.Messages = make([]Message, len(in.Messages))
	}
	for i, m := range in.Messages {
		msg := Message{Role: Role(m.Role), Name: m.Name, ToolCallID: m.ToolCallID}
		if len(m.Content) > 0 {
			msg.Parts = make([]Part, len(m.Content))
			for j, p := range m.Content {
				msg.Parts[j] = p.part()
			}
		}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Type: tc.Type, Name: tc.Function.Name,
				Arguments: tc.Function.Arguments, Signature: thoughtSignature(tc.ExtraContent)})
		}
		r.Messages[i] = msg
	}
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, Tool{Type: t.Type, Name: t.Function.Name, Description: t.Function.Description,
			Parameters: number(t.Function.Parameters)})
	}
	r.ToolChoice = toolChoice(in.ToolChoice)
	if rf := in.ResponseFormat; rf != nil {
		r.ResponseFormat = &ResponseFormat{Type: rf.Type}
		if s := rf.JSONSchema; s != nil {
			r.ResponseFormat.Name, r.ResponseFormat.Description = s.Name, s.Description
			r.ResponseFormat.Schema, r.ResponseFormat.Strict = number(s.Schema), s.Strict
		}
	}
	return r, nil
}

// SchemaError is a body that does not fit the chat completions schema.
type SchemaError struct{ Err error }

// Error names the field of the wrong type when encoding/json says which.
func (e *SchemaError) Error() string {
	msg := e.Err.Error()
	var te *json.UnmarshalTypeError
	if errors.As(e.Err, &te) && te.Field != "" {
		msg = "the field " + te.Field + " has the wrong type"
	}
	return "the request does not fit the chat completions schema: " + msg
}

func (e *SchemaError) Unwrap() error { return e.Err }

// number returns raw unless it is absent or JSON null.
func number(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// toolChoice decodes tool_choice: "auto", "none", "required" or
// {"type":"function","function":{"name":…}}; anything else is
// ToolChoiceOther with the value as written.
func toolChoice(raw json.RawMessage) *ToolChoice {
	raw = number(raw)
	if raw == nil {
		return nil
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		switch s {
		case "auto":
			return &ToolChoice{Mode: ToolChoiceAuto}
		case "none":
			return &ToolChoice{Mode: ToolChoiceNone}
		case "required":
			return &ToolChoice{Mode: ToolChoiceRequired}
		}
		return &ToolChoice{Mode: ToolChoiceOther, Raw: raw}
	}
	var obj struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Type == "function" {
		return &ToolChoice{Mode: ToolChoiceFunction, Name: obj.Function.Name, Raw: raw}
	}
	return &ToolChoice{Mode: ToolChoiceOther, Raw: raw}
}

// The OpenAI chat request as the decoder reads it. Numbers that are only
// passed on are kept as raw JSON so that their text is not changed.
type (
	openAIChat struct {
		Model               string          `json:"model"`
		Messages            []openAIMessage `json:"messages"`
		MaxTokens           *int64          `json:"max_tokens"`
		MaxCompletionTokens *int64          `json:"max_completion_tokens"`
		Temperature         json.RawMessage `json:"temperature"`
		TopP                json.RawMessage `json:"top_p"`
		Stop                openAIStop      `json:"stop"`
		User                string          `json:"user"`
		Metadata            json.RawMessage `json:"metadata"`
		Tools               []openAITool    `json:"tools"`
		ToolChoice          json.RawMessage `json:"tool_choice"`
		ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
		ResponseFormat      *struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Schema      json.RawMessage `json:"schema"`
				Strict      *bool           `json:"strict"`
			} `json:"json_schema"`
		} `json:"response_format"`
		ReasoningEffort json.RawMessage `json:"reasoning_effort"`
		Stream          bool            `json:"stream"`
	}
	openAIMessage struct {
		Role       string           `json:"role"`
		Content    openAIContent    `json:"content"`
		Name       string           `json:"name"`
		ToolCalls  []openAIToolCall `json:"tool_calls"`
		ToolCallID string           `json:"tool_call_id"`
	}
	openAITool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	openAIToolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
		// ExtraContent is {"google":{"thought_signature":…}}, where
		// Google's OpenAI compatibility layer (and the gateway's Gemini
		// codec) carries a call's thought signature; read leniently.
		ExtraContent json.RawMessage `json:"extra_content"`
	}
	// openAIPart is one content part: text, image_url, input_audio, file
	// or refusal. CacheControl is the cache_control extension some
	// clients add for providers with prompt caching. InputAudio and File
	// are read leniently (a codec that cannot send them refuses the part
	// by its type, whatever their shape).
	openAIPart struct {
		Type         string          `json:"type"`
		Text         string          `json:"text"`
		Refusal      string          `json:"refusal"`
		ImageURL     openAIImageURL  `json:"image_url"`
		InputAudio   json.RawMessage `json:"input_audio"`
		File         json.RawMessage `json:"file"`
		CacheControl json.RawMessage `json:"cache_control"`
	}
)

// thoughtSignature reads extra_content.google.thought_signature, or "".
func thoughtSignature(raw json.RawMessage) string {
	if number(raw) == nil {
		return ""
	}
	var extra struct {
		Google struct {
			ThoughtSignature string `json:"thought_signature"`
		} `json:"google"`
	}
	_ = json.Unmarshal(raw, &extra)
	return extra.Google.ThoughtSignature
}

// part is p in the neutral model.
func (p openAIPart) part() Part {
	out := Part{WireType: p.Type, CacheControl: p.CacheControl}
	switch p.Type {
	case "text":
		out.Kind, out.Text = PartText, p.Text
	case "image_url":
		out.Kind, out.ImageURL, out.ImageDetail = PartImage, p.ImageURL.URL, p.ImageURL.Detail
	case "refusal":
		out.Kind, out.Text = PartRefusal, p.Refusal
	case "input_audio":
		var a struct {
			Data   string `json:"data"`
			Format string `json:"format"`
		}
		if number(p.InputAudio) != nil {
			_ = json.Unmarshal(p.InputAudio, &a)
		}
		out.Kind, out.Data, out.Format = PartAudio, a.Data, a.Format
	case "file":
		var f struct {
			FileData string `json:"file_data"`
			FileID   string `json:"file_id"`
			Filename string `json:"filename"`
		}
		if number(p.File) != nil {
			_ = json.Unmarshal(p.File, &f)
		}
		out.Kind, out.Data, out.FileID, out.Filename = PartFile, f.FileData, f.FileID, f.Filename
	default:
		out.Kind, out.Text = PartOther, p.Text
	}
	return out
}

// openAIContent is a message's content as parts: a string content is one
// text part, null or absent is none.
type openAIContent []openAIPart

// UnmarshalJSON accepts a string, an array of content parts or null.
func (c *openAIContent) UnmarshalJSON(b []byte) error {
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
		*c = openAIContent{{Type: "text", Text: s}}
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
