// Package anthropic is the codec of Anthropic's Messages API: OpenAI chat
// Requests are translated into Messages requests, and the answers, plain
// and streamed, back into OpenAI chat completions and chunks.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
)

const (
	// version is the Messages API version the adapter speaks,
	// sent as the anthropic-version header.
	version = "2023-06-01"
	// baseURL is the base URL of Anthropic's SDKs; the adapter
	// appends /v1/messages to it, as they do.
	baseURL = "https://api.anthropic.com"
	// DefaultMaxTokens is the max_tokens sent to Anthropic when the
	// client gives neither max_completion_tokens nor max_tokens: the
	// Messages API requires one, and 4096 is the output limit of the
	// smallest current model (Claude Haiku 3), so it is valid for all of
	// them. Clients that want longer answers must ask for them.
	DefaultMaxTokens = 4096
	// jsonTool names the tool that stands in for a json_object
	// response_format, or for a json_schema one without a usable name.
	jsonTool = "json_response"
	// maxAnthropicBlocks bounds the tool blocks a stream may open. A real
	// answer has a handful; the bound keeps a hostile upstream from making
	// the per-delta block lookup (a linear search) expensive.
	maxAnthropicBlocks = 1024
)

// Anthropic is the adapter for Anthropic's Messages API
// (POST {base}/v1/messages). It translates OpenAI chat requests into
// Messages requests and the answers, plain and streamed, back into OpenAI
// chat completions and chunks.
//
// It serves chat only: Anthropic has neither embeddings nor a legacy
// completions endpoint, so it implements neither Embedder nor Completer.
// Request features Anthropic lacks are refused by Validate with a 400 that
// names them, never dropped.
type Anthropic struct {
	c   *providers.Client
	now func() time.Time // the "created" of answers; a field so tests can fix it
}

var (
	_ providers.Provider  = (*Anthropic)(nil)
	_ providers.Validator = (*Anthropic)(nil)
	_ providers.Codec     = (*Anthropic)(nil)
)

// New returns the anthropic adapter, which sends its calls
// through c.
func New(c *providers.Client) providers.Provider { return &Anthropic{c: c, now: time.Now} }

// Name returns "anthropic".
func (a *Anthropic) Name() string { return "anthropic" }

// Validate refuses request features Anthropic cannot serve (n > 1,
// logprobs, penalties, seed, …) with a 400 *Error naming the feature.
// Requests that are not chat are left to the capability check.
func (a *Anthropic) Validate(req *providers.Request) error {
	if req.Op != llm.OpChat {
		return nil
	}
	return unsupported(req.Body, hasBudget(req.Neutral))
}

// hasBudget reports whether a door's neutral request carries a thinking
// budget (providers.Request.Neutral).
func hasBudget(n *llm.Request) bool {
	return n != nil && n.Reasoning != nil && n.Reasoning.BudgetTokens != nil
}

// Chat sends a chat completion and waits for the whole answer.
func (a *Anthropic) Chat(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return providers.Call(ctx, a.c, a, req, llm.OpChat)
}

// ChatStream sends a streamed chat completion. The stream's chunks are
// OpenAI chat.completion.chunk objects; the usage chunk ("choices":[])
// follows the finish chunk only when the client asked for usage.
func (a *Anthropic) ChatStream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return providers.OpenStream(ctx, a.c, a, req, llm.OpChat)
}

// EncodeRequest translates a chat request into a Messages request. Its
// State is the name of the tool that stands in for a JSON mode ("" for
// none), which the answer is translated back from.
func (a *Anthropic) EncodeRequest(_ context.Context, req *providers.Request, _ llm.Operation, stream bool) (providers.Encoded, error) {
	if req.Wire == llm.WireAnthropicMessages {
		return encodeNative(req) // native.go
	}
	body, jsonTool, err := requestBody(req.Body, req.Neutral, req.Model, stream, req.MaxOutputTokens)
	if err != nil {
		return providers.Encoded{}, err
	}
	return providers.Encoded{HTTP: httpRequest(req, body), State: jsonTool}, nil
}

// DecodeResponse translates a Messages answer into a chat completion.
func (a *Anthropic) DecodeResponse(body []byte, req *providers.Request, state any) (*providers.Response, error) {
	if req.Wire == llm.WireAnthropicMessages {
		return decodeNative(body, req)
	}
	jsonTool, _ := state.(string)
	out, usage, model, err := answer(body, answerContext{
		jsonTool: jsonTool, created: a.now().Unix(), model: req.Model, key: req.Cred.Key, thinkingBlocks: req.ThinkingBlocks})
	if err != nil {
		return nil, err
	}
	return &providers.Response{Body: out, Usage: usage, Model: model}, nil
}

// DecodeStream translates a Messages event stream into chunks.
func (a *Anthropic) DecodeStream(sr *providers.StreamResponse, req *providers.Request, state any) (providers.Stream, error) {
	if req.Wire == llm.WireAnthropicMessages {
		return providers.NewNativeStream(messagesWire{}, sr, req.Cred.Key), nil
	}
	jsonTool, _ := state.(string)
	s := &stream{Resp: sr}
	s.Translator.init(sr, providers.BodyParsers.Get(), streamContext{
		jsonTool: jsonTool, created: a.now().Unix(), model: req.Model,
		wantUsage: req.ClientWantsUsage, key: req.Cred.Key, thinkingBlocks: req.ThinkingBlocks})
	return s, nil
}

// DecodeError maps Anthropic's 529 overloaded_error to 503, so that it is
// retried and counted like any overloaded upstream; the message keeps the
// real status.
func (a *Anthropic) DecodeError(err error, _ *providers.Request) error {
	if e := providers.AsError(err); e != nil && e.Status == 529 {
		e.Status = http.StatusServiceUnavailable
		e.Message += " (anthropic status 529)"
	}
	return err
}

// httpRequest describes the call: POST {base}/v1/messages with
// the key in x-api-key. A base URL that already ends in /v1 is not given a
// second one.
func httpRequest(req *providers.Request, body []byte) providers.HTTPRequest {
	base := strings.TrimRight(req.Cred.BaseURL, "/")
	if base == "" {
		base = baseURL
	}
	base = strings.TrimSuffix(base, "/v1")
	// req.Header is shared by every attempt: copy it before adding.
	h := make(http.Header, len(req.Header)+1)
	for k, v := range req.Header {
		h[k] = v
	}
	h.Set("Anthropic-Version", version)
	if req.AnthropicBeta != "" {
		h.Set("Anthropic-Beta", req.AnthropicBeta)
	}
	return providers.HTTPRequest{
		BaseURL:   base,
		Path:      "v1/messages",
		Key:       req.Cred.Key,
		KeyHeader: "x-api-key", // the key as it is, without "Bearer "
		Header:    h,
		// The trace context, sent as the traceparent header.
		Traceparent: req.Traceparent,
		Body:        body,
		Deadline:    req.Deadline,
	}
}

func refusal(feature string) *providers.Error {
	return providers.Refusal("anthropic does not support " + feature)
}

func invalid(format string, args ...any) *providers.Error {
	return &providers.Error{Status: http.StatusBadRequest, Message: "anthropic: " + fmt.Sprintf(format, args...)}
}

// unsupported refuses the request fields the Messages API has
// no equivalent for. It reads only top-level fields, with a pooled
// parser, so running it before every attempt costs little.
//
// budget true means reasoning_effort stands for a thinking budget the
// request carries besides (providers.Request.Neutral).
func unsupported(body []byte, budget bool) error {
	p := providers.BodyParsers.Get()
	defer providers.BodyParsers.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil || v.Type() != fastjson.TypeObject {
		return nil // the translation reports it
	}
	// given reports whether key is set to something other than null, and
	// not to one of the values that mean "off".
	given := func(key string) bool {
		f := v.Get(key)
		if f == nil {
			return false
		}
		switch f.Type() {
		case fastjson.TypeNull, fastjson.TypeFalse:
			return false
		case fastjson.TypeNumber:
			return f.GetFloat64() != 0
		case fastjson.TypeObject:
			return f.GetObject().Len() > 0
		case fastjson.TypeArray:
			return len(f.GetArray()) > 0
		}
		return true
	}
	switch {
	case v.GetFloat64("n") > 1:
		return refusal("n > 1 (several choices per request)")
	case given("logprobs"), given("top_logprobs"):
		return refusal("logprobs")
	case given("presence_penalty"):
		return refusal("presence_penalty")
	case given("frequency_penalty"):
		return refusal("frequency_penalty")
	case given("logit_bias"):
		return refusal("logit_bias")
	case v.Exists("seed") && v.Get("seed").Type() != fastjson.TypeNull:
		return refusal("seed (reproducible sampling)")
	case given("audio") || wantsAudio(v.Get("modalities")):
		return refusal("audio output")
	case given("prediction"):
		return refusal("predicted outputs (prediction)")
	case given("functions"), given("function_call"):
		return refusal("the deprecated functions and function_call fields; use tools and tool_choice")
	case given("web_search_options"):
		return refusal("web_search_options")
	case given("reasoning_effort") && !budget:
		return refusal("reasoning_effort")
	}
	return nil
}

// wantsAudio reports whether a modalities array asks for audio.
func wantsAudio(v *fastjson.Value) bool {
	if v == nil || v.Type() != fastjson.TypeArray {
		return false
	}
	for _, m := range v.GetArray() {
		if string(m.GetStringBytes()) == "audio" {
			return true
		}
	}
	return false
}

// Request translation. The structs below are the Messages API request;
// encoding/json writes their fields in this order.

type request struct {
	Model         string           `json:"model"`
	MaxTokens     int64            `json:"max_tokens"`
	System        json.RawMessage  `json:"system,omitempty"`
	Messages      []message        `json:"messages"`
	Metadata      *metadata        `json:"metadata,omitempty"`
	StopSequences []string         `json:"stop_sequences,omitempty"`
	Stream        bool             `json:"stream,omitempty"`
	Temperature   json.RawMessage  `json:"temperature,omitempty"`
	TopP          json.RawMessage  `json:"top_p,omitempty"`
	Tools         []anthropicTool  `json:"tools,omitempty"`
	ToolChoice    *anthropicChoice `json:"tool_choice,omitempty"`
	Thinking      *thinking        `json:"thinking,omitempty"`
}

// thinking enables extended thinking with a token budget.
type thinking struct {
	Type         string `json:"type"` // enabled
	BudgetTokens int64  `json:"budget_tokens"`
}

type metadata struct {
	UserID string `json:"user_id"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a content block of a request: text, image, tool_use
// or tool_result; fields a type does not have stay empty and are omitted.
type block struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	Source       *source         `json:"source,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      json.RawMessage `json:"content,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
	// Thinking and Signature are a thinking block's; Data is a
	// redacted_thinking block's.
	Thinking  *string `json:"thinking,omitempty"`
	Signature string  `json:"signature,omitempty"`
	Data      string  `json:"data,omitempty"`
	// IsError marks a tool_result whose content is an error.
	IsError bool `json:"is_error,omitempty"`
}

type source struct {
	Type      string `json:"type"` // base64 or url
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type anthropicTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

type anthropicChoice struct {
	Type                   string `json:"type"` // auto, any, tool, none
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

// emptySchema is the input_schema of a function without parameters:
// Anthropic requires one.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// toolName is what Anthropic accepts as a tool name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// requestBody translates the OpenAI chat request body into a
// Messages API request for model. jsonTool is the tool that stands in for
// a JSON response_format, "" when there is none.
//
// The mapping: system and developer messages become the top-level system
// (in order; one text becomes a string); user and assistant messages
// become content blocks, consecutive messages of one role are merged (the
// API requires alternation), tool calls become tool_use blocks and "tool"
// messages tool_result blocks of a user message, placed first as the API
// requires. max_tokens is max_completion_tokens, else max_tokens, else
// capOut (the gateway's cap, Request.MaxOutputTokens) when positive, else
// DefaultMaxTokens. A json_schema or json_object response_format
// becomes a forced tool whose input is the answer, since the Messages API
// has no JSON mode of its own.
//
// neutral, when set, is the request a translating door decoded
// (providers.Request.Neutral): it is encoded in place of body's
// decoding, so that thinking blocks with their signatures go back as the
// client sent them and a thinking budget is thinking (body's
// reasoning_effort, which stands for it, is then no refusal).
func requestBody(body []byte, neutral *llm.Request, model string, stream bool, capOut int64) ([]byte, string, error) {
	budget := hasBudget(neutral)
	if err := unsupported(body, budget); err != nil {
		return nil, "", err
	}
	in := neutral
	if in == nil {
		var err error
		if in, err = providers.DecodeChat("anthropic", body); err != nil {
			return nil, "", err
		}
	}
	var err error
	out := request{Model: model, MaxTokens: DefaultMaxTokens, Stream: stream,
		Temperature: in.Temperature, TopP: in.TopP}
	switch {
	case in.MaxOutputTokens != nil:
		out.MaxTokens = *in.MaxOutputTokens
	case capOut > 0:
		out.MaxTokens = capOut
	}
	if len(in.Stop) > 0 {
		out.StopSequences = in.Stop
	}
	if budget {
		out.Thinking = &thinking{Type: "enabled", BudgetTokens: *neutral.Reasoning.BudgetTokens}
	}
	if in.User != "" {
		out.Metadata = &metadata{UserID: in.User}
	}
	var system []block
	for i, m := range in.Messages {
		var blocks []block
		role := string(m.Role)
		switch m.Role {
		case llm.RoleSystem, llm.RoleDeveloper:
			for _, p := range m.Parts {
				if p.Kind != llm.PartText {
					return nil, "", invalid("messages[%d]: a %s message may hold only text", i, m.Role)
				}
				if strings.TrimSpace(p.Text) != "" {
					system = append(system, block{Type: "text", Text: p.Text, CacheControl: p.CacheControl})
				}
			}
			continue
		case llm.RoleUser, llm.RoleAssistant:
			if blocks, err = content(m.Parts, i); err != nil {
				return nil, "", err
			}
			if m.Role == llm.RoleAssistant {
				for j, tc := range m.ToolCalls {
					use, err := toolUse(tc, i, j)
					if err != nil {
						return nil, "", err
					}
					blocks = append(blocks, use)
				}
			}
		case llm.RoleTool:
			role = "user"
			res, err := toolResult(m, i)
			if err != nil {
				return nil, "", err
			}
			blocks = []block{res}
		case "function":
			return nil, "", refusal("the deprecated function role; use tool messages")
		default:
			return nil, "", invalid("messages[%d]: unknown role %q", i, m.Role)
		}
		if len(blocks) == 0 {
			continue // Anthropic refuses empty content
		}
		if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == role {
			out.Messages[n-1].Content = append(out.Messages[n-1].Content, blocks...)
		} else {
			out.Messages = append(out.Messages, message{Role: role, Content: blocks})
		}
	}
	if len(out.Messages) == 0 {
		return nil, "", invalid("the request needs at least one user or assistant message with content")
	}
	for i := range out.Messages {
		toolResultsFirst(out.Messages[i].Content)
	}
	if out.System, err = anthropicSystem(system); err != nil {
		return nil, "", err
	}
	if err := tools(in, &out); err != nil {
		return nil, "", err
	}
	jsonTool, err := responseFormat(in, &out)
	if err != nil {
		return nil, "", err
	}
	b, err := providers.MarshalJSON(&out)
	if err != nil {
		return nil, "", invalid("%v", err)
	}
	return b, jsonTool, nil
}

// anthropicSystem is the system field: a string for a single plain text,
// else text blocks (which can carry cache_control).
func anthropicSystem(blocks []block) (json.RawMessage, error) {
	switch {
	case len(blocks) == 0:
		return nil, nil
	case len(blocks) == 1 && blocks[0].CacheControl == nil:
		return providers.MarshalJSON(blocks[0].Text)
	}
	return providers.MarshalJSON(blocks)
}

// toolResultsFirst moves tool_result blocks to the front of a message,
// keeping their order and that of the rest: the API wants a user
// message's tool results before anything else in it.
func toolResultsFirst(blocks []block) {
	var results, rest []block
	for _, b := range blocks {
		if b.Type == "tool_result" {
			results = append(results, b)
		} else {
			rest = append(rest, b)
		}
	}
	if len(results) > 0 && len(rest) > 0 {
		copy(blocks, append(results, rest...))
	}
}

// content converts the content parts of a user or assistant
// message. Empty texts are skipped: the API refuses them.
func content(parts []llm.Part, i int) ([]block, error) {
	var blocks []block
	for _, p := range parts {
		switch p.Kind {
		case llm.PartThinking:
			// Thinking without a signature (another provider's
			// reasoning, given back by the Messages door unsigned) is
			// left out: Anthropic refuses a thinking block it cannot
			// verify.
			if p.Signature != "" {
				blocks = append(blocks, block{Type: "thinking", Thinking: &p.Text, Signature: p.Signature})
			}
			continue
		case llm.PartRedactedThinking:
			blocks = append(blocks, block{Type: "redacted_thinking", Data: p.Data})
			continue
		}
		switch p.WireType {
		case "text", "refusal":
			if strings.TrimSpace(p.Text) != "" {
				blocks = append(blocks, block{Type: "text", Text: p.Text, CacheControl: p.CacheControl})
			}
		case "image_url":
			src, err := image(p.ImageURL, i)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, block{Type: "image", Source: src, CacheControl: p.CacheControl})
		case "input_audio":
			return nil, refusal("audio input (input_audio content parts)")
		case "file":
			return nil, refusal("file content parts")
		default:
			return nil, invalid("messages[%d]: unknown content part type %q", i, p.WireType)
		}
	}
	return blocks, nil
}

// image is the source of an image: a base64 data URL or an
// http(s) URL, which Anthropic fetches itself.
func image(u string, i int) (*source, error) {
	if mediaType, data, ok := providers.ParseDataURL(u); ok {
		return &source{Type: "base64", MediaType: mediaType, Data: data}, nil
	}
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return &source{Type: "url", URL: u}, nil
	}
	return nil, invalid("messages[%d]: an image_url must be an http(s) URL or a base64 data URL", i)
}

// toolUse converts an assistant's tool call; its arguments must
// be a JSON object (or empty, read as {}).
func toolUse(tc llm.ToolCall, i, j int) (block, error) {
	if tc.Type != "" && tc.Type != "function" {
		return block{}, refusal("tool calls of type " + strconv.Quote(tc.Type))
	}
	args := bytes.TrimSpace([]byte(tc.Arguments))
	if len(args) == 0 {
		args = []byte("{}")
	}
	var compact bytes.Buffer
	if args[0] != '{' || json.Compact(&compact, args) != nil {
		return block{}, invalid("messages[%d].tool_calls[%d]: the arguments are not a JSON object", i, j)
	}
	return block{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: compact.Bytes()}, nil
}

// toolResult converts a tool message: its text becomes the
// content of a tool_result block for the call it answers.
func toolResult(m llm.Message, i int) (block, error) {
	res := block{Type: "tool_result", ToolUseID: m.ToolCallID, IsError: m.IsError}
	if m.ToolCallID == "" {
		return res, invalid("messages[%d]: a tool message needs tool_call_id", i)
	}
	var texts []block
	for _, p := range m.Parts {
		if p.Kind != llm.PartText {
			return res, invalid("messages[%d]: a tool message may hold only text", i)
		}
		if p.Text != "" {
			texts = append(texts, block{Type: "text", Text: p.Text, CacheControl: p.CacheControl})
		}
	}
	var err error
	switch {
	case len(texts) == 1 && texts[0].CacheControl == nil:
		res.Content, err = providers.MarshalJSON(texts[0].Text)
	case len(texts) > 0:
		res.Content, err = providers.MarshalJSON(texts)
	}
	return res, err
}

// tools sets tools and tool_choice. Without tools, tool_choice
// and parallel_tool_calls mean nothing and are left out (Anthropic refuses
// a tool_choice without tools).
func tools(in *llm.Request, out *request) error {
	for _, t := range in.Tools {
		if t.Type != "function" {
			return refusal("tools of type " + strconv.Quote(t.Type))
		}
		schema := t.Parameters
		if schema == nil {
			schema = emptySchema
		}
		out.Tools = append(out.Tools, anthropicTool{Name: t.Name, Description: t.Description, InputSchema: schema, CacheControl: t.CacheControl})
	}
	if len(out.Tools) == 0 {
		return nil
	}
	choice := &anthropicChoice{Type: "auto"}
	if tc := in.ToolChoice; tc != nil {
		switch tc.Mode {
		case llm.ToolChoiceAuto:
		case llm.ToolChoiceNone:
			choice.Type = "none"
		case llm.ToolChoiceRequired:
			choice.Type = "any"
		case llm.ToolChoiceFunction:
			if tc.Name == "" {
				return refusal("this tool_choice (only auto, none, required or a named function)")
			}
			choice = &anthropicChoice{Type: "tool", Name: tc.Name}
		default:
			var name string
			if tc.Raw[0] != '"' || json.Unmarshal(tc.Raw, &name) != nil {
				return refusal("this tool_choice (only auto, none, required or a named function)")
			}
			if name != "" { // "" is taken as auto
				return refusal("tool_choice " + strconv.Quote(name))
			}
		}
	}
	if in.ParallelToolCalls != nil && !*in.ParallelToolCalls && choice.Type != "none" {
		choice.DisableParallelToolUse = true
	}
	if choice.Type != "auto" || choice.DisableParallelToolUse || in.ToolChoice != nil {
		out.ToolChoice = choice
	}
	return nil
}

// responseFormat turns a JSON response_format into a forced tool
// whose input schema is the wanted schema; the answer is that tool's
// input. It returns the tool's name, or "" when there is nothing to do.
func responseFormat(in *llm.Request, out *request) (string, error) {
	rf := in.ResponseFormat
	if rf == nil || rf.Type == "" || rf.Type == "text" {
		return "", nil
	}
	if rf.Type != "json_object" && rf.Type != "json_schema" {
		return "", refusal("response_format " + strconv.Quote(rf.Type))
	}
	if len(out.Tools) > 0 {
		return "", refusal("response_format " + rf.Type + " together with tools")
	}
	tool := anthropicTool{Name: jsonTool, Description: "Answer with a JSON object.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}
	if rf.Type == "json_schema" {
		if rf.Schema == nil {
			return "", invalid("response_format json_schema needs json_schema.schema")
		}
		var s struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(rf.Schema, &s) != nil || s.Type != "object" {
			return "", refusal("response_format json_schema with a schema whose type is not object")
		}
		tool.InputSchema = rf.Schema
		if toolName.MatchString(rf.Name) {
			tool.Name = rf.Name
		}
		if rf.Description != "" {
			tool.Description = rf.Description
		}
	}
	out.Tools = []anthropicTool{tool}
	out.ToolChoice = &anthropicChoice{Type: "tool", Name: tool.Name, DisableParallelToolUse: true}
	return tool.Name, nil
}
