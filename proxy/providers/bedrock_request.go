package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
)

// The OpenAI chat request → Bedrock Converse request translation.
//
// Mapping: system and developer messages → system; user → user; assistant
// text and tool_calls → assistant text and toolUse blocks; tool messages →
// user toolResult blocks; consecutive messages of one role are merged,
// since Converse wants the roles to alternate. Images must be base64 data:
// URLs (Converse takes image bytes, not URLs). max_tokens,
// temperature, top_p and stop → inferenceConfig; tools and tool_choice →
// toolConfig; user → requestMetadata. What Converse has no way to express
// is refused with a 400 naming the feature, never dropped in silence.

// bedrockChatIn is the shared OpenAI chat request plus the fields whose
// features Converse cannot serve: a non-default value is a 400. Other
// fields (stream, stream_options, metadata, store, parallel_tool_calls, …)
// do not change what Bedrock is asked.
type bedrockChatIn struct {
	openAIChatRequest
	N                json.RawMessage `json:"n"`
	Seed             json.RawMessage `json:"seed"`
	Logprobs         *bool           `json:"logprobs"`
	TopLogprobs      json.RawMessage `json:"top_logprobs"`
	LogitBias        json.RawMessage `json:"logit_bias"`
	FrequencyPenalty *float64        `json:"frequency_penalty"`
	PresencePenalty  *float64        `json:"presence_penalty"`
	Audio            json.RawMessage `json:"audio"`
	Modalities       []string        `json:"modalities"`
	Prediction       json.RawMessage `json:"prediction"`
	Functions        json.RawMessage `json:"functions"`
	FunctionCall     json.RawMessage `json:"function_call"`
}

// The Converse request.
type bedrockConverseReq struct {
	Messages        []bedrockMsg       `json:"messages"`
	System          []bedrockSystem    `json:"system,omitempty"`
	InferenceConfig *bedrockInference  `json:"inferenceConfig,omitempty"`
	ToolConfig      *bedrockToolConfig `json:"toolConfig,omitempty"`
	RequestMetadata map[string]string  `json:"requestMetadata,omitempty"`
}

type bedrockSystem struct {
	Text string `json:"text"`
}

type bedrockMsg struct {
	Role    string         `json:"role"`
	Content []bedrockBlock `json:"content"`
}

// bedrockBlock is a content block: exactly one field is set.
type bedrockBlock struct {
	Text       *string            `json:"text,omitempty"`
	Image      *bedrockImage      `json:"image,omitempty"`
	ToolUse    *bedrockToolUse    `json:"toolUse,omitempty"`
	ToolResult *bedrockToolResult `json:"toolResult,omitempty"`
}

type bedrockImage struct {
	Format string `json:"format"`
	Source struct {
		// Bytes is the image, base64-encoded as Converse's JSON wants
		// blobs: the data URL's payload passes through undecoded.
		Bytes string `json:"bytes"`
	} `json:"source"`
}

type bedrockToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type bedrockToolResult struct {
	ToolUseID string         `json:"toolUseId"`
	Content   []bedrockBlock `json:"content"`
}

type bedrockInference struct {
	MaxTokens     *int64          `json:"maxTokens,omitempty"`
	Temperature   json.RawMessage `json:"temperature,omitempty"`
	TopP          json.RawMessage `json:"topP,omitempty"`
	StopSequences []string        `json:"stopSequences,omitempty"`
}

type bedrockToolConfig struct {
	Tools      []bedrockTool      `json:"tools"`
	ToolChoice *bedrockToolChoice `json:"toolChoice,omitempty"`
}

type bedrockTool struct {
	ToolSpec struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		InputSchema struct {
			JSON json.RawMessage `json:"json"`
		} `json:"inputSchema"`
	} `json:"toolSpec"`
}

// bedrockToolChoice is {"auto":{}}, {"any":{}} or {"tool":{"name":…}}.
type bedrockToolChoice struct {
	Auto *struct{}           `json:"auto,omitempty"`
	Any  *struct{}           `json:"any,omitempty"`
	Tool *bedrockToolChoiceN `json:"tool,omitempty"`
}

type bedrockToolChoiceN struct {
	Name string `json:"name"`
}

// bedrockEmptySchema is the input schema of a tool without parameters.
var bedrockEmptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// bedrockConverseBody translates an OpenAI chat request body into the body
// of a Converse (or ConverseStream) request; capOut, when positive, is the
// gateway's cap (Request.MaxOutputTokens), sent as inferenceConfig.maxTokens
// when the request sets no maximum. A feature Converse cannot express is
// an *Error with status 400.
func bedrockConverseBody(body []byte, capOut int64) ([]byte, error) {
	var in bedrockChatIn
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, bedrockDecodeError(err)
	}
	if in.MaxCompletionTokens == nil && in.MaxTokens == nil && capOut > 0 {
		in.MaxTokens = &capOut
	}
	out, err := bedrockConverse(&in)
	if err != nil {
		return nil, err
	}
	b, err := marshalJSON(out) // text goes upstream as the client wrote it
	if err != nil {
		return nil, bedrockError("cannot encode the request: %v", err)
	}
	return b, nil
}

// bedrockDecodeError words a decoding failure without Go type names.
func bedrockDecodeError(err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return bedrockError("cannot read the request: %s has the wrong type (%s)", te.Field, te.Value)
	}
	return bedrockError("cannot read the request: it does not fit the chat completions schema")
}

func bedrockConverse(in *bedrockChatIn) (*bedrockConverseReq, error) {
	if err := bedrockUnsupported(in); err != nil {
		return nil, err
	}
	out := &bedrockConverseReq{Messages: make([]bedrockMsg, 0, len(in.Messages))}
	toolBlocks := false
	for i := range in.Messages {
		m := &in.Messages[i]
		switch m.Role {
		case "system", "developer":
			blocks, err := bedrockContent(m.Content, i, false)
			if err != nil {
				return nil, err
			}
			for _, b := range blocks {
				out.System = append(out.System, bedrockSystem{Text: *b.Text})
			}
		case "user":
			blocks, err := bedrockContent(m.Content, i, true)
			if err != nil {
				return nil, err
			}
			out.add("user", blocks)
		case "assistant":
			blocks, err := bedrockContent(m.Content, i, false)
			if err != nil {
				return nil, err
			}
			for j := range m.ToolCalls {
				b, err := bedrockToolUseBlock(&m.ToolCalls[j], i, j)
				if err != nil {
					return nil, err
				}
				blocks = append(blocks, b)
				toolBlocks = true
			}
			out.add("assistant", blocks)
		case "tool":
			b, err := bedrockToolResultBlock(m, i)
			if err != nil {
				return nil, err
			}
			out.add("user", []bedrockBlock{b})
			toolBlocks = true
		case "function":
			return nil, bedrockError("does not support the legacy function role (messages[%d]); use tool messages", i)
		default:
			return nil, bedrockError("does not support the message role %q (messages[%d])", m.Role, i)
		}
	}
	ic, err := bedrockInferenceOf(in)
	if err != nil {
		return nil, err
	}
	out.InferenceConfig = ic
	if out.ToolConfig, err = bedrockToolsOf(in, toolBlocks); err != nil {
		return nil, err
	}
	if in.User != "" {
		if !bedrockMetadataOK(in.User) {
			return nil, bedrockError("carries user as request metadata, which takes at most 256 of the characters a-z A-Z 0-9 space : _ @ $ # = / + , - .")
		}
		out.RequestMetadata = map[string]string{"user": in.User}
	}
	return out, nil
}

// add appends blocks as a message of role, merged into the previous
// message when that has the same role. Empty messages are left out.
func (r *bedrockConverseReq) add(role string, blocks []bedrockBlock) {
	if len(blocks) == 0 {
		return
	}
	if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
		r.Messages[n-1].Content = append(r.Messages[n-1].Content, blocks...)
		return
	}
	r.Messages = append(r.Messages, bedrockMsg{Role: role, Content: blocks})
}

// bedrockUnsupported refuses the request fields Converse has no
// equivalent for, when they ask for something.
func bedrockUnsupported(in *bedrockChatIn) error {
	if !bedrockNull(in.N) {
		var n float64
		if json.Unmarshal(in.N, &n) != nil {
			return bedrockError("cannot read the request: n must be a number")
		}
		if n > 1 {
			return bedrockError("does not support n > 1 (several choices per request)")
		}
	}
	switch {
	case !bedrockNull(in.Seed):
		return bedrockError("does not support seed")
	case in.Logprobs != nil && *in.Logprobs, !bedrockNull(in.TopLogprobs):
		return bedrockError("does not support logprobs")
	case !bedrockNull(in.LogitBias) && !bytes.Equal(bytes.Join(bytes.Fields(in.LogitBias), nil), []byte("{}")):
		return bedrockError("does not support logit_bias")
	case in.FrequencyPenalty != nil && *in.FrequencyPenalty != 0:
		return bedrockError("does not support frequency_penalty")
	case in.PresencePenalty != nil && *in.PresencePenalty != 0:
		return bedrockError("does not support presence_penalty")
	case !bedrockNull(in.Audio):
		return bedrockError("does not support audio output")
	case !bedrockNull(in.Prediction):
		return bedrockError("does not support predicted outputs (prediction)")
	case !bedrockNull(in.Functions), !bedrockNull(in.FunctionCall):
		return bedrockError("does not support the legacy functions and function_call fields; use tools and tool_choice")
	case in.ResponseFormat != nil && in.ResponseFormat.Type != "text":
		return bedrockError("does not support response_format %q", in.ResponseFormat.Type)
	}
	for _, m := range in.Modalities {
		if m != "text" {
			return bedrockError("does not support the output modality %q", m)
		}
	}
	return nil
}

// bedrockContent turns a message content into blocks. Empty texts are
// left out (Converse refuses blank text blocks). Images are allowed only
// where images says so.
func bedrockContent(content openAIContent, i int, images bool) ([]bedrockBlock, error) {
	if len(content) == 0 {
		return nil, nil
	}
	blocks := make([]bedrockBlock, 0, len(content))
	for j := range content {
		p := &content[j]
		switch p.Type {
		case "text", "refusal":
			t := p.Text
			if p.Type == "refusal" {
				t = p.Refusal
			}
			if t != "" {
				blocks = append(blocks, bedrockBlock{Text: &t})
			}
		case "image_url":
			if !images {
				return nil, bedrockError("does not support images in this message (messages[%d]); images go in user messages", i)
			}
			img, err := bedrockImageOf(p.ImageURL.URL, i)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, bedrockBlock{Image: img})
		case "input_audio":
			return nil, bedrockError("does not support audio input (messages[%d])", i)
		case "file":
			return nil, bedrockError("does not support file content parts (messages[%d])", i)
		default:
			return nil, bedrockError("does not support content parts of type %q (messages[%d])", p.Type, i)
		}
	}
	return blocks, nil
}

// bedrockImageOf turns an image URL into an image block. Only base64
// data: URLs of the four formats Converse reads are accepted: Bedrock
// does not fetch URLs.
func bedrockImageOf(u string, i int) (*bedrockImage, error) {
	if !strings.HasPrefix(u, "data:") {
		return nil, bedrockError("does not support image URLs (messages[%d]); send the image inline as a base64 data: URL", i)
	}
	mediaType, data, ok := parseDataURL(u)
	if !ok {
		return nil, bedrockError("needs images as base64 data: URLs (messages[%d])", i)
	}
	var format string
	switch strings.ToLower(mediaType) {
	case "image/png":
		format = "png"
	case "image/jpeg", "image/jpg":
		format = "jpeg"
	case "image/gif":
		format = "gif"
	case "image/webp":
		format = "webp"
	default:
		return nil, bedrockError("does not support the image type %q (messages[%d]); use png, jpeg, gif or webp", mediaType, i)
	}
	img := &bedrockImage{Format: format}
	img.Source.Bytes = data
	return img, nil
}

// bedrockToolUseBlock turns one assistant tool call into a toolUse block.
func bedrockToolUseBlock(tc *openAIToolCall, i, j int) (bedrockBlock, error) {
	if tc.Type != "" && tc.Type != "function" {
		return bedrockBlock{}, bedrockError("supports only function tool calls, not %q (messages[%d].tool_calls[%d])", tc.Type, i, j)
	}
	if tc.ID == "" || tc.Function.Name == "" {
		return bedrockBlock{}, bedrockError("needs an id and a function name in messages[%d].tool_calls[%d]", i, j)
	}
	args := strings.TrimSpace(tc.Function.Arguments)
	if args == "" {
		args = "{}"
	}
	if !json.Valid([]byte(args)) {
		return bedrockBlock{}, bedrockError("needs JSON tool call arguments; messages[%d].tool_calls[%d].function.arguments is not JSON", i, j)
	}
	return bedrockBlock{ToolUse: &bedrockToolUse{ToolUseID: tc.ID, Name: tc.Function.Name, Input: json.RawMessage(args)}}, nil
}

// bedrockToolResultBlock turns a tool message into a toolResult block.
func bedrockToolResultBlock(m *openAIChatMessage, i int) (bedrockBlock, error) {
	if m.ToolCallID == "" {
		return bedrockBlock{}, bedrockError("needs tool_call_id in the tool message messages[%d]", i)
	}
	blocks, err := bedrockContent(m.Content, i, false)
	if err != nil {
		return bedrockBlock{}, err
	}
	if len(blocks) == 0 {
		empty := ""
		blocks = []bedrockBlock{{Text: &empty}}
	}
	return bedrockBlock{ToolResult: &bedrockToolResult{ToolUseID: m.ToolCallID, Content: blocks}}, nil
}

// bedrockInferenceOf maps max_tokens, temperature, top_p and stop.
// Temperature and top_p pass on as the client wrote them.
func bedrockInferenceOf(in *bedrockChatIn) (*bedrockInference, error) {
	var ic bedrockInference
	set := false
	maxTokens, name := in.MaxCompletionTokens, "max_completion_tokens"
	if maxTokens == nil {
		maxTokens, name = in.MaxTokens, "max_tokens"
	}
	if maxTokens != nil {
		if *maxTokens < 1 || *maxTokens > math.MaxInt32 {
			return nil, bedrockError("needs %s to be a positive integer", name)
		}
		ic.MaxTokens, set = maxTokens, true
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *json.RawMessage
	}{{"temperature", in.Temperature, &ic.Temperature}, {"top_p", in.TopP, &ic.TopP}} {
		raw := rawNumber(f.raw)
		if raw == nil {
			continue
		}
		var v float64
		if json.Unmarshal(raw, &v) != nil {
			return nil, bedrockError("cannot read the request: %s must be a number", f.name)
		}
		*f.dst, set = raw, true
	}
	if len(in.Stop) > 0 {
		ic.StopSequences, set = in.Stop, true
	}
	if !set {
		return nil, nil
	}
	return &ic, nil
}

// bedrockToolsOf maps tools and tool_choice. Converse has no "none": when
// the conversation has no tool blocks the tools are left out instead;
// otherwise (Converse then requires the tool definitions) it is a 400.
func bedrockToolsOf(in *bedrockChatIn, toolBlocks bool) (*bedrockToolConfig, error) {
	var choice *bedrockToolChoice
	none := false
	raw := bytes.TrimSpace(in.ToolChoice)
	if !bedrockNull(raw) {
		if raw[0] == '"' {
			var s string
			_ = json.Unmarshal(raw, &s)
			switch s {
			case "auto":
				choice = &bedrockToolChoice{Auto: &struct{}{}}
			case "required":
				choice = &bedrockToolChoice{Any: &struct{}{}}
			case "none":
				none = true
			default:
				return nil, bedrockError("does not support tool_choice %q", s)
			}
		} else {
			var obj struct {
				Type     string `json:"type"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			if json.Unmarshal(raw, &obj) != nil || obj.Type != "function" || obj.Function.Name == "" {
				return nil, bedrockError("supports tool_choice \"auto\", \"required\", \"none\" or a named function only")
			}
			choice = &bedrockToolChoice{Tool: &bedrockToolChoiceN{Name: obj.Function.Name}}
		}
	}
	if none {
		if toolBlocks {
			return nil, bedrockError("cannot honour tool_choice \"none\" in a conversation that has tool calls")
		}
		return nil, nil
	}
	if len(in.Tools) == 0 {
		if choice != nil && choice.Auto == nil {
			return nil, bedrockError("needs tools for this tool_choice")
		}
		return nil, nil
	}
	tc := &bedrockToolConfig{Tools: make([]bedrockTool, len(in.Tools)), ToolChoice: choice}
	for j := range in.Tools {
		t := &in.Tools[j]
		if t.Type != "" && t.Type != "function" {
			return nil, bedrockError("supports only function tools, not %q (tools[%d])", t.Type, j)
		}
		if t.Function.Name == "" {
			return nil, bedrockError("needs a name for every tool (tools[%d].function.name)", j)
		}
		schema := bytes.TrimSpace(t.Function.Parameters)
		if bedrockNull(schema) {
			schema = bedrockEmptySchema
		} else if schema[0] != '{' {
			return nil, bedrockError("needs tools[%d].function.parameters to be a JSON schema object", j)
		}
		spec := &tc.Tools[j].ToolSpec
		spec.Name, spec.Description = t.Function.Name, t.Function.Description
		spec.InputSchema.JSON = json.RawMessage(schema)
	}
	return tc, nil
}

// bedrockMetadataOK reports whether s fits a Converse requestMetadata
// value: at most 256 characters of [a-zA-Z0-9\s:_@$#=/+,\-.].
func bedrockMetadataOK(s string) bool {
	if len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte(" \t\n\r:_@$#=/+,-.", c) >= 0) {
			return false
		}
	}
	return true
}

// bedrockNull reports whether a raw JSON value is absent or null.
func bedrockNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}
