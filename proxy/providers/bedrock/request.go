package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
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

// chatIn is the neutral chat request plus the OpenAI fields whose
// features Converse cannot serve: a non-default value is a 400. Other
// fields (stream, stream_options, metadata, store, parallel_tool_calls, …)
// do not change what Bedrock is asked.
type chatIn struct {
	*llm.Request
	extras
	call call
}

// extras are the OpenAI fields chatIn reads besides the neutral model.
// MaxCompletionTokens only tells which of the two maximum fields the
// client set, for the message that names it.
type extras struct {
	MaxCompletionTokens json.RawMessage `json:"max_completion_tokens"`
	N                   json.RawMessage `json:"n"`
	Seed                json.RawMessage `json:"seed"`
	Logprobs            *bool           `json:"logprobs"`
	TopLogprobs         json.RawMessage `json:"top_logprobs"`
	LogitBias           json.RawMessage `json:"logit_bias"`
	FrequencyPenalty    *float64        `json:"frequency_penalty"`
	PresencePenalty     *float64        `json:"presence_penalty"`
	Audio               json.RawMessage `json:"audio"`
	Modalities          []string        `json:"modalities"`
	Prediction          json.RawMessage `json:"prediction"`
	Functions           json.RawMessage `json:"functions"`
	FunctionCall        json.RawMessage `json:"function_call"`
}

// The Converse request.
type converseReq struct {
	Messages        []msg             `json:"messages"`
	System          []system          `json:"system,omitempty"`
	InferenceConfig *inference        `json:"inferenceConfig,omitempty"`
	ToolConfig      *toolConfig       `json:"toolConfig,omitempty"`
	RequestMetadata map[string]string `json:"requestMetadata,omitempty"`
	// AdditionalModelRequestFields carries what Converse passes to the
	// model as is: Claude's thinking budget and beta features.
	AdditionalModelRequestFields *additionalFields `json:"additionalModelRequestFields,omitempty"`
	// AdditionalModelResponseFieldPaths asks for model fields of the
	// answer: Claude's stop_sequence, which says which stop sequence
	// ended it.
	AdditionalModelResponseFieldPaths []string `json:"additionalModelResponseFieldPaths,omitempty"`
}

// additionalFields are the model fields of a Converse request.
type additionalFields struct {
	Thinking      *thinking `json:"thinking,omitempty"`
	AnthropicBeta []string  `json:"anthropic_beta,omitempty"`
}

// cachePointBlock is Converse's prompt cache breakpoint,
// {"cachePoint":{"type":"default"}}: everything before it in the tools,
// the system or the messages is cached.
type cachePointBlock struct {
	Type string `json:"type"` // default
}

// cachePoint is the one breakpoint every block and tool shares.
var cachePoint = &cachePointBlock{Type: "default"}

// thinking enables Claude's extended thinking with a token budget.
type thinking struct {
	Type         string `json:"type"` // enabled
	BudgetTokens int64  `json:"budget_tokens"`
}

// system is a system block: a text, or a cache point after the texts
// before it.
type system struct {
	Text       *string          `json:"text,omitempty"`
	CachePoint *cachePointBlock `json:"cachePoint,omitempty"`
}

type msg struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a content block: exactly one field is set.
type block struct {
	Text       *string     `json:"text,omitempty"`
	Image      *image      `json:"image,omitempty"`
	ToolUse    *toolUse    `json:"toolUse,omitempty"`
	ToolResult *toolResult `json:"toolResult,omitempty"`
	// ReasoningContent is an earlier answer's reasoning, sent back with
	// its signature (Claude's thinking).
	ReasoningContent *reasoningContent `json:"reasoningContent,omitempty"`
	// CachePoint is a prompt cache breakpoint after the blocks before
	// it (a cache_control on the part before).
	CachePoint *cachePointBlock `json:"cachePoint,omitempty"`
}

// reasoningContent is {"reasoningText":{text,signature}} or
// {"redactedContent": base64}.
type reasoningContent struct {
	ReasoningText *struct {
		Text      string `json:"text"`
		Signature string `json:"signature,omitempty"`
	} `json:"reasoningText,omitempty"`
	RedactedContent string `json:"redactedContent,omitempty"`
}

type image struct {
	Format string `json:"format"`
	Source struct {
		// Bytes is the image, base64-encoded as Converse's JSON wants
		// blobs: the data URL's payload passes through undecoded.
		Bytes string `json:"bytes"`
	} `json:"source"`
}

type toolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type toolResult struct {
	ToolUseID string  `json:"toolUseId"`
	Content   []block `json:"content"`
	// Status is "error" for a result that is an error
	// (llm.Message.IsError), else left out.
	Status string `json:"status,omitempty"`
}

type inference struct {
	MaxTokens     *int64          `json:"maxTokens,omitempty"`
	Temperature   json.RawMessage `json:"temperature,omitempty"`
	TopP          json.RawMessage `json:"topP,omitempty"`
	StopSequences []string        `json:"stopSequences,omitempty"`
}

type toolConfig struct {
	Tools      []tool      `json:"tools"`
	ToolChoice *toolChoice `json:"toolChoice,omitempty"`
}

// tool is a tool definition, or a cache point after the tools before it.
type tool struct {
	ToolSpec *toolSpec `json:"toolSpec,omitempty"`
	// CachePoint is a breakpoint after the tool before it.
	CachePoint *cachePointBlock `json:"cachePoint,omitempty"`
}

type toolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	InputSchema struct {
		JSON json.RawMessage `json:"json"`
	} `json:"inputSchema"`
}

// toolChoice is {"auto":{}}, {"any":{}} or {"tool":{"name":…}}.
type toolChoice struct {
	Auto *struct{}    `json:"auto,omitempty"`
	Any  *struct{}    `json:"any,omitempty"`
	Tool *toolChoiceN `json:"tool,omitempty"`
}

type toolChoiceN struct {
	Name string `json:"name"`
}

// emptySchema is the input schema of a tool without parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// call is what the translation needs to know of the call besides the
// request: the model (Claude and Nova take cache points, Claude beta
// features and gives its stop sequence), the gateway's cap on the output
// (providers.Request.MaxOutputTokens), whether the call is streamed and
// the client's anthropic-beta (providers.Request.AnthropicBeta).
type call struct {
	model  string
	capOut int64
	stream bool
	beta   string
}

// claude reports whether the model is Anthropic's Claude (a model id,
// an inference profile or an ARN naming one).
func (t call) claude() bool { return strings.Contains(t.model, "anthropic.claude") }

// caches reports whether the model takes Converse cache points: Claude
// and Amazon Nova (Bedrock refuses them for other models).
func (t call) caches() bool { return t.claude() || strings.Contains(t.model, "amazon.nova") }

// converseBody translates an OpenAI chat request body into the body
// of a Converse (or ConverseStream) request; t.capOut, when positive, is
// the gateway's cap, sent as inferenceConfig.maxTokens when the request
// sets no maximum. A feature Converse cannot express is an *Error with
// status 400.
//
// neutral, when set, is the request a translating door decoded
// (providers.Request.Neutral), encoded in place of body's decoding: its
// thinking parts go back as reasoningContent blocks with their
// signatures, its thinking budget as additionalModelRequestFields.thinking
// (Claude on Bedrock), its tool results' error flags as toolResult status
// and its tools' cache_control as cache points.
func converseBody(body []byte, neutral *llm.Request, t call) ([]byte, error) {
	r := neutral
	if r == nil {
		var err error
		if r, err = llm.DecodeOpenAIChat(body); err != nil {
			return nil, decodeError(err)
		}
	} else {
		c := *neutral // the door's request serves every attempt: no writes
		r = &c
	}
	in := chatIn{Request: r, call: t}
	if err := json.Unmarshal(body, &in.extras); err != nil {
		return nil, decodeError(err)
	}
	if in.MaxOutputTokens == nil && t.capOut > 0 {
		in.MaxOutputTokens = &t.capOut
	}
	out, err := converse(&in)
	if err != nil {
		return nil, err
	}
	b, err := providers.MarshalJSON(out) // text goes upstream as the client wrote it
	if err != nil {
		return nil, bedrockError("cannot encode the request: %v", err)
	}
	return b, nil
}

// decodeError words a decoding failure without Go type names.
func decodeError(err error) *providers.Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return bedrockError("cannot read the request: %s has the wrong type (%s)", te.Field, te.Value)
	}
	return bedrockError("cannot read the request: it does not fit the chat completions schema")
}

func converse(in *chatIn) (*converseReq, error) {
	if err := unsupported(in); err != nil {
		return nil, err
	}
	out := &converseReq{Messages: make([]msg, 0, len(in.Messages))}
	toolBlocks := false
	cache := in.call.caches()
	for i := range in.Messages {
		m := &in.Messages[i]
		switch m.Role {
		case llm.RoleSystem, llm.RoleDeveloper:
			blocks, err := content(m.Parts, i, false, cache)
			if err != nil {
				return nil, err
			}
			for _, b := range blocks {
				out.System = append(out.System, system{Text: b.Text, CachePoint: b.CachePoint})
			}
		case llm.RoleUser:
			blocks, err := content(m.Parts, i, true, cache)
			if err != nil {
				return nil, err
			}
			out.add("user", blocks)
		case llm.RoleAssistant:
			blocks, err := content(m.Parts, i, false, cache)
			if err != nil {
				return nil, err
			}
			for j := range m.ToolCalls {
				b, err := toolUseBlock(&m.ToolCalls[j], i, j)
				if err != nil {
					return nil, err
				}
				blocks = append(blocks, b)
				toolBlocks = true
			}
			out.add("assistant", blocks)
		case llm.RoleTool:
			b, err := toolResultBlock(m, i, cache)
			if err != nil {
				return nil, err
			}
			out.add("user", b)
			toolBlocks = true
		case "function":
			return nil, bedrockRefusal("does not support the legacy function role (messages[%d]); use tool messages", i)
		default:
			return nil, bedrockRefusal("does not support the message role %q (messages[%d])", m.Role, i)
		}
	}
	ic, err := inferenceOf(in)
	if err != nil {
		return nil, err
	}
	out.InferenceConfig = ic
	if out.ToolConfig, err = toolsOf(in, toolBlocks); err != nil {
		return nil, err
	}
	if in.User != "" {
		if !metadataOK(in.User) {
			return nil, bedrockError("carries user as request metadata, which takes at most 256 of the characters a-z A-Z 0-9 space : _ @ $ # = / + , - .")
		}
		out.RequestMetadata = map[string]string{"user": in.User}
	}
	if in.call.claude() {
		claudeFields(in, out)
	}
	return out, nil
}

// claudeFields sets the model fields of a request to Claude: the thinking
// budget, the client's beta features that Bedrock knows
// (bedrockBetas), and, when the request has stop sequences, the path of
// the answer's stop_sequence (/delta/stop_sequence in a stream, as
// Claude's message_delta has it).
func claudeFields(in *chatIn, out *converseReq) {
	var f additionalFields
	if rs := in.Reasoning; rs != nil && rs.BudgetTokens != nil {
		f.Thinking = &thinking{Type: "enabled", BudgetTokens: *rs.BudgetTokens}
	}
	for _, b := range strings.Split(in.call.beta, ",") {
		if b = strings.TrimSpace(b); bedrockBetas[b] {
			f.AnthropicBeta = append(f.AnthropicBeta, b)
		}
	}
	if f.Thinking != nil || len(f.AnthropicBeta) > 0 {
		out.AdditionalModelRequestFields = &f
	}
	if len(in.Stop) > 0 {
		path := "/stop_sequence"
		if in.call.stream {
			path = "/delta/stop_sequence"
		}
		out.AdditionalModelResponseFieldPaths = []string{path}
	}
}

// bedrockBetas are the anthropic-beta features Claude on Bedrock takes
// (Bedrock's Claude Messages reference): the others a client such as
// Claude Code sends (claude-code-…, oauth-…, fine-grained-tool-streaming-…)
// Bedrock refuses, so they are left out rather than failing the call.
var bedrockBetas = map[string]bool{
	"computer-use-2024-10-22": true, "computer-use-2025-01-24": true,
	"token-efficient-tools-2025-02-19": true, "interleaved-thinking-2025-05-14": true,
	"output-128k-2025-02-19": true, "dev-full-thinking-2025-05-14": true,
	"context-1m-2025-08-07": true, "context-management-2025-06-27": true,
	"effort-2025-11-24": true, "tool-search-tool-2025-10-19": true, "tool-examples-2025-10-29": true,
}

// add appends blocks as a message of role, merged into the previous
// message when that has the same role. Empty messages are left out.
func (r *converseReq) add(role string, blocks []block) {
	if len(blocks) == 0 {
		return
	}
	if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
		r.Messages[n-1].Content = append(r.Messages[n-1].Content, blocks...)
		return
	}
	r.Messages = append(r.Messages, msg{Role: role, Content: blocks})
}

// unsupported refuses the request fields Converse has no
// equivalent for, when they ask for something.
func unsupported(in *chatIn) error {
	if !null(in.N) {
		var n float64
		if json.Unmarshal(in.N, &n) != nil {
			return bedrockError("cannot read the request: n must be a number")
		}
		if n > 1 {
			return bedrockRefusal("does not support n > 1 (several choices per request)")
		}
	}
	switch {
	case !null(in.Seed):
		return bedrockRefusal("does not support seed")
	case in.Logprobs != nil && *in.Logprobs, !null(in.TopLogprobs):
		return bedrockRefusal("does not support logprobs")
	case !null(in.LogitBias) && !bytes.Equal(bytes.Join(bytes.Fields(in.LogitBias), nil), []byte("{}")):
		return bedrockRefusal("does not support logit_bias")
	case in.FrequencyPenalty != nil && *in.FrequencyPenalty != 0:
		return bedrockRefusal("does not support frequency_penalty")
	case in.PresencePenalty != nil && *in.PresencePenalty != 0:
		return bedrockRefusal("does not support presence_penalty")
	case !null(in.Audio):
		return bedrockRefusal("does not support audio output")
	case !null(in.Prediction):
		return bedrockRefusal("does not support predicted outputs (prediction)")
	case !null(in.Functions), !null(in.FunctionCall):
		return bedrockRefusal("does not support the legacy functions and function_call fields; use tools and tool_choice")
	case in.ResponseFormat != nil && in.ResponseFormat.Type != "text":
		return bedrockRefusal("does not support response_format %q", in.ResponseFormat.Type)
	}
	for _, m := range in.Modalities {
		if m != "text" {
			return bedrockRefusal("does not support the output modality %q", m)
		}
	}
	return nil
}

// content turns a message content into blocks. Empty texts are
// left out (Converse refuses blank text blocks). Images are allowed only
// where images says so. With cache, a part's cache_control becomes a
// cache point after its block.
func content(content []llm.Part, i int, images, cache bool) ([]block, error) {
	if len(content) == 0 {
		return nil, nil
	}
	blocks := make([]block, 0, len(content))
	for j := range content {
		p := &content[j]
		switch p.Kind {
		case llm.PartThinking:
			if p.Signature == "" {
				// Unsigned thinking (another provider's reasoning) is
				// left out: Claude refuses what it cannot verify.
				continue
			}
			rc := &reasoningContent{}
			rc.ReasoningText = &struct {
				Text      string `json:"text"`
				Signature string `json:"signature,omitempty"`
			}{p.Text, p.Signature}
			blocks = append(blocks, block{ReasoningContent: rc})
			continue
		case llm.PartRedactedThinking:
			blocks = append(blocks, block{ReasoningContent: &reasoningContent{RedactedContent: p.Data}})
			continue
		}
		switch p.WireType {
		case "text", "refusal":
			t := p.Text
			if t != "" {
				blocks = append(blocks, block{Text: &t})
			}
		case "image_url":
			if !images {
				return nil, bedrockRefusal("does not support images in this message (messages[%d]); images go in user messages", i)
			}
			img, err := imageOf(p.ImageURL, i)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, block{Image: img})
		case "input_audio":
			return nil, bedrockRefusal("does not support audio input (messages[%d])", i)
		case "file":
			return nil, bedrockRefusal("does not support file content parts (messages[%d])", i)
		default:
			return nil, bedrockRefusal("does not support content parts of type %q (messages[%d])", p.WireType, i)
		}
		if cache && p.CacheControl != nil && len(blocks) > 0 {
			blocks = append(blocks, block{CachePoint: cachePoint})
		}
	}
	return blocks, nil
}

// imageOf turns an image URL into an image block. Only base64
// data: URLs of the four formats Converse reads are accepted: Bedrock
// does not fetch URLs.
func imageOf(u string, i int) (*image, error) {
	if !strings.HasPrefix(u, "data:") {
		return nil, bedrockRefusal("does not support image URLs (messages[%d]); send the image inline as a base64 data: URL", i)
	}
	mediaType, data, ok := providers.ParseDataURL(u)
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
		return nil, bedrockRefusal("does not support the image type %q (messages[%d]); use png, jpeg, gif or webp", mediaType, i)
	}
	img := &image{Format: format}
	img.Source.Bytes = data
	return img, nil
}

// toolUseBlock turns one assistant tool call into a toolUse block.
func toolUseBlock(tc *llm.ToolCall, i, j int) (block, error) {
	if tc.Type != "" && tc.Type != "function" {
		return block{}, bedrockError("supports only function tool calls, not %q (messages[%d].tool_calls[%d])", tc.Type, i, j)
	}
	if tc.ID == "" || tc.Name == "" {
		return block{}, bedrockError("needs an id and a function name in messages[%d].tool_calls[%d]", i, j)
	}
	args := strings.TrimSpace(tc.Arguments)
	if args == "" {
		args = "{}"
	}
	if !json.Valid([]byte(args)) {
		return block{}, bedrockError("needs JSON tool call arguments; messages[%d].tool_calls[%d].function.arguments is not JSON", i, j)
	}
	return block{ToolUse: &toolUse{ToolUseID: tc.ID, Name: tc.Name, Input: json.RawMessage(args)}}, nil
}

// toolResultBlock turns a tool message into a toolResult block (status
// "error" for an error), followed, with cache, by a cache point when one
// of its parts has a cache_control (a tool result's content takes none).
func toolResultBlock(m *llm.Message, i int, cache bool) ([]block, error) {
	if m.ToolCallID == "" {
		return nil, bedrockError("needs tool_call_id in the tool message messages[%d]", i)
	}
	blocks, err := content(m.Parts, i, false, false)
	if err != nil {
		return nil, err
	}
	if len(blocks) == 0 {
		empty := ""
		blocks = []block{{Text: &empty}}
	}
	res := &toolResult{ToolUseID: m.ToolCallID, Content: blocks}
	if m.IsError {
		res.Status = "error"
	}
	out := []block{{ToolResult: res}}
	if cache && cached(m.Parts) {
		out = append(out, block{CachePoint: cachePoint})
	}
	return out, nil
}

// cached reports whether one of parts has a cache_control.
func cached(parts []llm.Part) bool {
	for i := range parts {
		if parts[i].CacheControl != nil {
			return true
		}
	}
	return false
}

// inferenceOf maps max_tokens, temperature, top_p and stop.
// Temperature and top_p pass on as the client wrote them.
func inferenceOf(in *chatIn) (*inference, error) {
	var ic inference
	set := false
	maxTokens, name := in.MaxOutputTokens, "max_completion_tokens"
	if null(in.extras.MaxCompletionTokens) {
		name = "max_tokens"
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
		raw := f.raw
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

// toolsOf maps tools and tool_choice. Converse has no "none": when
// the conversation has no tool blocks the tools are left out instead;
// otherwise (Converse then requires the tool definitions) it is a 400.
func toolsOf(in *chatIn, toolBlocks bool) (*toolConfig, error) {
	var choice *toolChoice
	none := false
	if tc := in.ToolChoice; tc != nil {
		switch tc.Mode {
		case llm.ToolChoiceAuto:
			choice = &toolChoice{Auto: &struct{}{}}
		case llm.ToolChoiceRequired:
			choice = &toolChoice{Any: &struct{}{}}
		case llm.ToolChoiceNone:
			none = true
		case llm.ToolChoiceFunction:
			if tc.Name == "" {
				return nil, bedrockError("supports tool_choice \"auto\", \"required\", \"none\" or a named function only")
			}
			choice = &toolChoice{Tool: &toolChoiceN{Name: tc.Name}}
		default:
			var s string
			if tc.Raw[0] != '"' || json.Unmarshal(tc.Raw, &s) != nil {
				return nil, bedrockError("supports tool_choice \"auto\", \"required\", \"none\" or a named function only")
			}
			return nil, bedrockRefusal("does not support tool_choice %q", s)
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
	tc := &toolConfig{Tools: make([]tool, 0, len(in.Tools)), ToolChoice: choice}
	for j := range in.Tools {
		t := &in.Tools[j]
		if t.Type != "" && t.Type != "function" {
			return nil, bedrockError("supports only function tools, not %q (tools[%d])", t.Type, j)
		}
		if t.Name == "" {
			return nil, bedrockError("needs a name for every tool (tools[%d].function.name)", j)
		}
		schema := t.Parameters
		if null(schema) {
			schema = emptySchema
		} else if schema[0] != '{' {
			return nil, bedrockError("needs tools[%d].function.parameters to be a JSON schema object", j)
		}
		spec := &toolSpec{Name: t.Name, Description: t.Description}
		spec.InputSchema.JSON = json.RawMessage(schema)
		tc.Tools = append(tc.Tools, tool{ToolSpec: spec})
		if t.CacheControl != nil && in.call.caches() {
			tc.Tools = append(tc.Tools, tool{CachePoint: cachePoint})
		}
	}
	return tc, nil
}

// metadataOK reports whether s fits a Converse requestMetadata
// value: at most 256 characters of [a-zA-Z0-9\s:_@$#=/+,\-.].
func metadataOK(s string) bool {
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

// null reports whether a raw JSON value is absent or null.
func null(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}
