// Package cohere is the codec of Cohere's v2 API: /v2/chat, plain and
// streamed, and /v2/embed, translated from and to the OpenAI schema.
package cohere

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/proxy/providers"
)

const (
	// baseURL is the base URL of Cohere's SDKs; the adapter appends
	// /v2/chat and /v2/embed to it, as they do.
	baseURL = "https://api.cohere.com"
	// maxTexts is the most texts /v2/embed takes in one call.
	maxTexts = 96
	// maxCohereToolCalls bounds the tool calls a stream may open. A real
	// answer has a handful; the bound keeps a hostile upstream from making
	// the per-delta lookup (a linear search) expensive.
	maxCohereToolCalls = 1024
)

// Cohere is the adapter for Cohere's v2 API: chat (POST {base}/v2/chat,
// plain and streamed) and embeddings (POST {base}/v2/embed), with the key
// as a bearer token. It translates OpenAI requests into Cohere's and the
// answers back into OpenAI chat completions, chunks and embedding lists.
//
// Cohere has no legacy completions endpoint, so Cohere is no Completer.
// Request features the v2 API lacks are refused by Validate with a 400
// that names them, never dropped.
type Cohere struct {
	c   *providers.Client
	now func() time.Time // the "created" of answers; a field so tests can fix it
}

var (
	_ providers.Codec     = (*Cohere)(nil)
	_ providers.Provider  = (*Cohere)(nil)
	_ providers.Embedder  = (*Cohere)(nil)
	_ providers.Validator = (*Cohere)(nil)
)

// New returns the cohere adapter, which sends its calls through c.
func New(c *providers.Client) providers.Provider { return &Cohere{c: c, now: time.Now} }

// Name returns "cohere".
func (co *Cohere) Name() string { return "cohere" }

// Validate refuses chat request features Cohere cannot serve (n > 1,
// logprobs, a tool_choice naming a function, …) with a 400 *Error naming
// the feature. Other operations are left to the capability check.
func (co *Cohere) Validate(req *providers.Request) error {
	if req.Op != llm.OpChat {
		return nil
	}
	var x chatExtras
	if json.Unmarshal(req.Body, &x) != nil {
		return nil // the translation reports it
	}
	return x.unsupported()
}

// Chat sends a chat completion and waits for the whole answer.
func (co *Cohere) Chat(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return providers.Call(ctx, co.c, co, req, llm.OpChat)
}

// ChatStream sends a streamed chat completion. Its chunks are OpenAI
// chat.completion.chunk objects; the usage chunk ("choices":[]) follows
// the finish chunk only when the client asked for usage.
func (co *Cohere) ChatStream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return providers.OpenStream(ctx, co.c, co, req, llm.OpChat)
}

// Embed sends /v2/embed with input_type search_document (what OpenAI's
// embeddings are used for most) and float embeddings. The input must be
// a string or an array of strings: Cohere takes no token arrays. The
// Usage is Cohere's billed input tokens.
func (co *Cohere) Embed(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return providers.Call(ctx, co.c, co, req, llm.OpEmbeddings)
}

// EncodeRequest translates a chat request into /v2/chat, or an
// embeddings request into /v2/embed (its State is then the
// *embedCall the answer is read against).
func (co *Cohere) EncodeRequest(_ context.Context, req *providers.Request, op llm.Operation, stream bool) (providers.Encoded, error) {
	if op == llm.OpEmbeddings {
		body, e, err := embedBody(req)
		if err != nil {
			return providers.Encoded{}, err
		}
		return providers.Encoded{HTTP: httpRequest(req, "v2/embed", body), State: e}, nil
	}
	body, err := chatBody(req.Body, req.Model, stream, req.MaxOutputTokens)
	if err != nil {
		return providers.Encoded{}, err
	}
	return providers.Encoded{HTTP: httpRequest(req, "v2/chat", body)}, nil
}

// DecodeResponse translates a /v2/chat answer, or a /v2/embed one.
func (co *Cohere) DecodeResponse(body []byte, req *providers.Request, state any) (*providers.Response, error) {
	if e, ok := state.(*embedCall); ok {
		return embedAnswer(body, e.texts, req.Model, e.base64)
	}
	out, usage, err := answer(body, co.now().Unix(), req.Model, req.Cred.Key)
	if err != nil {
		return nil, err
	}
	return &providers.Response{Body: out, Usage: usage}, nil
}

// DecodeStream translates a /v2/chat event stream into chunks.
func (co *Cohere) DecodeStream(sr *providers.StreamResponse, req *providers.Request, _ any) (providers.Stream, error) {
	s := &stream{Resp: sr}
	s.Translator.init(sr, providers.BodyParsers.Get(), streamContext{created: co.now().Unix(), model: req.Model,
		wantUsage: req.ClientWantsUsage, key: req.Cred.Key})
	return s, nil
}

// DecodeError maps Cohere's own statuses: 498 (invalid token, older
// API) to 401, and 499 (Cohere cancelled the request, which its docs say
// to retry) to 503. The message keeps the real status.
func (co *Cohere) DecodeError(err error, _ *providers.Request) error {
	e := providers.AsError(err)
	if e == nil {
		return err
	}
	switch e.Status {
	case 498:
		e.Status, e.Message, e.KeyRejected = http.StatusUnauthorized, e.Message+" (cohere status 498)", true
	case 499:
		e.Status, e.Message = http.StatusServiceUnavailable, e.Message+" (cohere status 499)"
	}
	return err
}

// httpRequest describes a call: POST {base}/{path} with the key as a
// bearer token. A base URL that already ends in /v2 (or /v1) is not given
// a second version.
func httpRequest(req *providers.Request, path string, body []byte) providers.HTTPRequest {
	base := strings.TrimRight(req.Cred.BaseURL, "/")
	if base == "" {
		base = baseURL
	}
	base = strings.TrimSuffix(strings.TrimSuffix(base, "/v2"), "/v1")
	return providers.HTTPRequest{BaseURL: base, Path: path, Key: req.Cred.Key, Traceparent: req.Traceparent, Header: req.Header, Body: body, Deadline: req.Deadline}
}

func refusal(feature string) *providers.Error {
	return providers.Refusal("cohere does not support " + feature)
}

func invalid(format string, args ...any) *providers.Error {
	return &providers.Error{Status: http.StatusBadRequest, Message: "cohere: " + fmt.Sprintf(format, args...)}
}

// Request translation.

// chatExtras are the fields of an OpenAI chat request that the
// shared schema (openaischema.go) does not read: those Cohere has an
// equivalent for, and those that are refused. "user", "store" and
// "metadata" concern OpenAI's own records and are ignored.
type chatExtras struct {
	N                 *int64          `json:"n"`
	Seed              json.RawMessage `json:"seed"`
	FrequencyPenalty  json.RawMessage `json:"frequency_penalty"`
	PresencePenalty   json.RawMessage `json:"presence_penalty"`
	ToolChoice        json.RawMessage `json:"tool_choice"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`

	Logprobs         *bool           `json:"logprobs"`
	TopLogprobs      *int64          `json:"top_logprobs"`
	LogitBias        map[string]any  `json:"logit_bias"`
	Modalities       []string        `json:"modalities"`
	Audio            json.RawMessage `json:"audio"`
	Prediction       json.RawMessage `json:"prediction"`
	WebSearchOptions json.RawMessage `json:"web_search_options"`
	Functions        json.RawMessage `json:"functions"`
	FunctionCall     json.RawMessage `json:"function_call"`
	ReasoningEffort  string          `json:"reasoning_effort"`
}

// unsupported refuses the first feature the v2 Chat API has no equivalent for.
func (x *chatExtras) unsupported() error {
	switch {
	case x.N != nil && *x.N > 1:
		return refusal("n > 1 (several choices per request)")
	case x.Logprobs != nil && *x.Logprobs, x.TopLogprobs != nil && *x.TopLogprobs > 0:
		return refusal("logprobs")
	case len(x.LogitBias) > 0:
		return refusal("logit_bias")
	case providers.RawNumber(x.Audio) != nil || strings.Contains(strings.Join(x.Modalities, ","), "audio"):
		return refusal("audio output")
	case providers.RawNumber(x.Prediction) != nil:
		return refusal("predicted outputs (prediction)")
	case providers.RawNumber(x.WebSearchOptions) != nil:
		return refusal("web_search_options")
	case providers.RawNumber(x.Functions) != nil, providers.RawNumber(x.FunctionCall) != nil:
		return refusal("the deprecated functions and function_call fields; use tools and tool_choice")
	case x.ReasoningEffort != "":
		return refusal("reasoning_effort")
	case x.ParallelToolCalls != nil && !*x.ParallelToolCalls:
		return refusal("parallel_tool_calls: false (it may always call several tools at once)")
	}
	_, err := toolChoice(x.ToolChoice)
	return err
}

// toolChoice maps tool_choice: auto (or none given) is Cohere's
// default, "" here; required and none are REQUIRED and NONE. The v2 API
// cannot force one named function.
func toolChoice(raw json.RawMessage) (string, error) {
	raw = providers.RawNumber(raw)
	if raw == nil {
		return "", nil
	}
	var name string
	if json.Unmarshal(raw, &name) != nil {
		var obj struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &obj) == nil && obj.Type == "function" {
			return "", refusal("a tool_choice naming a function (the v2 Chat API can only require some tool call, or none)")
		}
		return "", refusal("this tool_choice (only auto, none or required)")
	}
	switch name {
	case "auto":
		return "", nil
	case "required":
		return "REQUIRED", nil
	case "none":
		return "NONE", nil
	}
	return "", refusal("tool_choice " + strconv.Quote(name))
}

// The v2 Chat request; encoding/json writes its fields in this order.
type (
	request struct {
		Model            string          `json:"model"`
		Messages         []message       `json:"messages"`
		Tools            []tool          `json:"tools,omitempty"`
		ToolChoice       string          `json:"tool_choice,omitempty"`
		MaxTokens        *int64          `json:"max_tokens,omitempty"`
		Temperature      json.RawMessage `json:"temperature,omitempty"`
		P                json.RawMessage `json:"p,omitempty"`
		StopSequences    []string        `json:"stop_sequences,omitempty"`
		Seed             json.RawMessage `json:"seed,omitempty"`
		FrequencyPenalty json.RawMessage `json:"frequency_penalty,omitempty"`
		PresencePenalty  json.RawMessage `json:"presence_penalty,omitempty"`
		ResponseFormat   *responseFormat `json:"response_format,omitempty"`
		Stream           bool            `json:"stream,omitempty"`
	}
	// message is a system, user, assistant or tool message; Content
	// is a string or an array of parts.
	message struct {
		Role       string                     `json:"role"`
		Content    json.RawMessage            `json:"content,omitempty"`
		ToolPlan   string                     `json:"tool_plan,omitempty"`
		ToolCalls  []providers.OpenAIToolCall `json:"tool_calls,omitempty"`
		ToolCallID string                     `json:"tool_call_id,omitempty"`
	}
	part struct {
		Type     string    `json:"type"`
		Text     string    `json:"text,omitempty"`
		ImageURL *imageURL `json:"image_url,omitempty"`
	}
	imageURL struct {
		URL    string `json:"url"`
		Detail string `json:"detail,omitempty"`
	}
	tool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	responseFormat struct {
		Type       string          `json:"type"`
		JSONSchema json.RawMessage `json:"json_schema,omitempty"`
	}
)

// emptySchema is the parameters of a function that declares none.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// chatBody translates an OpenAI chat request body into a v2 Chat
// request for model, or returns a 400 *Error naming what cannot be.
//
// The mapping: system and developer messages become one system message,
// first (Cohere wants the system turn first); user, assistant and tool
// messages keep their role, with text and image_url parts; an assistant's
// text next to tool calls becomes its tool_plan; tool messages keep their
// tool_call_id. max_completion_tokens (else max_tokens, else capOut when
// positive: the gateway's cap, Request.MaxOutputTokens) is max_tokens,
// top_p is p, stop is stop_sequences; a json_schema response_format is
// Cohere's json_object with that schema.
func chatBody(body []byte, model string, stream bool, capOut int64) ([]byte, error) {
	in, err := providers.DecodeChat("cohere", body)
	if err != nil {
		return nil, err
	}
	var x chatExtras
	if err := json.Unmarshal(body, &x); err != nil {
		return nil, invalid("the request does not fit the chat completions schema: %v", err)
	}
	if err := x.unsupported(); err != nil {
		return nil, err
	}
	out := request{Model: model, Stream: stream, Temperature: in.Temperature, P: in.TopP,
		Seed: providers.RawNumber(x.Seed), FrequencyPenalty: providers.RawNumber(x.FrequencyPenalty), PresencePenalty: providers.RawNumber(x.PresencePenalty)}
	out.MaxTokens = in.MaxOutputTokens
	if out.MaxTokens == nil && capOut > 0 {
		out.MaxTokens = &capOut
	}
	if len(in.Stop) > 0 {
		out.StopSequences = in.Stop
	}
	if out.Messages, err = messages(in.Messages); err != nil {
		return nil, err
	}
	for _, t := range in.Tools {
		if t.Type != "function" {
			return nil, refusal("tools of type " + strconv.Quote(t.Type))
		}
		ct := tool{Type: "function"}
		ct.Function.Name, ct.Function.Description = t.Name, t.Description
		if ct.Function.Parameters = t.Parameters; ct.Function.Parameters == nil {
			ct.Function.Parameters = emptySchema
		}
		out.Tools = append(out.Tools, ct)
	}
	if len(out.Tools) > 0 {
		out.ToolChoice, _ = toolChoice(x.ToolChoice) // checked by unsupported
	}
	if rf := in.ResponseFormat; rf != nil && rf.Type != "" && rf.Type != "text" {
		switch rf.Type {
		case "json_object":
			out.ResponseFormat = &responseFormat{Type: "json_object"}
		case "json_schema":
			if rf.Schema == nil {
				return nil, invalid("response_format json_schema needs json_schema.schema")
			}
			out.ResponseFormat = &responseFormat{Type: "json_object", JSONSchema: rf.Schema}
		default:
			return nil, refusal("response_format " + strconv.Quote(rf.Type))
		}
	}
	b, err := providers.MarshalJSON(&out)
	if err != nil {
		return nil, invalid("%v", err)
	}
	return b, nil
}

// messages converts the messages. Messages left without content or
// tool calls are dropped (Cohere refuses empty turns), but tool messages,
// which answer a call.
func messages(msgs []llm.Message) ([]message, error) {
	var system []part
	out := make([]message, 0, len(msgs)+1)
	for i, m := range msgs {
		switch m.Role {
		case llm.RoleSystem, llm.RoleDeveloper:
			for _, p := range m.Parts {
				if p.Kind != llm.PartText {
					return nil, invalid("messages[%d]: a %s message may hold only text", i, m.Role)
				}
				if strings.TrimSpace(p.Text) != "" {
					system = append(system, part{Type: "text", Text: p.Text})
				}
			}
		case llm.RoleUser, llm.RoleAssistant:
			parts, err := parts(m.Parts, i, m.Role == llm.RoleUser)
			if err != nil {
				return nil, err
			}
			cm := message{Role: string(m.Role)}
			if m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0 {
				for j, tc := range m.ToolCalls {
					if tc.Type != "" && tc.Type != "function" {
						return nil, refusal("tool calls of type " + strconv.Quote(tc.Type))
					}
					if tc.Name == "" {
						return nil, invalid("messages[%d].tool_calls[%d]: the call names no function", i, j)
					}
					call := providers.OpenAIToolCall{ID: tc.ID, Type: "function",
						Function: providers.OpenAIFunctionCall{Name: tc.Name, Arguments: tc.Arguments}}
					if strings.TrimSpace(call.Function.Arguments) == "" {
						call.Function.Arguments = "{}"
					}
					cm.ToolCalls = append(cm.ToolCalls, call)
				}
				var plan strings.Builder
				for _, p := range parts {
					plan.WriteString(p.Text)
				}
				cm.ToolPlan = plan.String()
			} else if len(parts) == 0 {
				continue
			} else if cm.Content, err = content(parts); err != nil {
				return nil, err
			}
			out = append(out, cm)
		case llm.RoleTool:
			if m.ToolCallID == "" {
				return nil, invalid("messages[%d]: a tool message needs tool_call_id", i)
			}
			parts, err := parts(m.Parts, i, false)
			if err != nil {
				return nil, err
			}
			cm := message{Role: "tool", ToolCallID: m.ToolCallID, Content: json.RawMessage(`""`)}
			if len(parts) > 0 {
				if cm.Content, err = content(parts); err != nil {
					return nil, err
				}
			}
			out = append(out, cm)
		case "function":
			return nil, refusal("the deprecated function role; use tool messages")
		default:
			return nil, invalid("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	if len(out) == 0 {
		return nil, invalid("the request needs at least one user, assistant or tool message with content")
	}
	if len(system) > 0 {
		content, err := content(system)
		if err != nil {
			return nil, err
		}
		out = append([]message{{Role: "system", Content: content}}, out...)
	}
	return out, nil
}

// parts converts content parts: texts (refusals as text, empty
// ones dropped) and, where images is true, image_url parts, whose URL
// (http(s) or a base64 data URL) and detail Cohere takes as they are.
func parts(content []llm.Part, i int, images bool) ([]part, error) {
	var parts []part
	for _, p := range content {
		switch p.WireType {
		case "text", "refusal":
			if p.Text != "" {
				parts = append(parts, part{Type: "text", Text: p.Text})
			}
		case "image_url":
			if !images {
				return nil, invalid("messages[%d]: images are allowed only in user messages", i)
			}
			u := p.ImageURL
			if _, _, ok := providers.ParseDataURL(u); !ok && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
				return nil, invalid("messages[%d]: an image_url must be an http(s) URL or a base64 data URL", i)
			}
			parts = append(parts, part{Type: "image_url", ImageURL: &imageURL{URL: u, Detail: p.ImageDetail}})
		case "input_audio":
			return nil, refusal("audio input (input_audio content parts)")
		case "file":
			return nil, refusal("file content parts")
		default:
			return nil, invalid("messages[%d]: unknown content part type %q", i, p.WireType)
		}
	}
	return parts, nil
}

// content is a message's content: a string for one text, else the
// parts.
func content(parts []part) (json.RawMessage, error) {
	if len(parts) == 1 && parts[0].Type == "text" {
		return providers.MarshalJSON(parts[0].Text)
	}
	return providers.MarshalJSON(parts)
}

// Answer translation.

// answerJSON is the part of a v2 Chat answer the adapter reads.
// Message is raw: in an error body it is a string.
type answerJSON struct {
	ID           string          `json:"id"`
	FinishReason string          `json:"finish_reason"`
	Message      json.RawMessage `json:"message"`
	Usage        *usage          `json:"usage"`
}

type answerMessage struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	ToolPlan  string                     `json:"tool_plan"`
	ToolCalls []providers.OpenAIToolCall `json:"tool_calls"`
}

// Usage is Cohere's usage: tokens are the model's own count,
// billed_units what was billed (fewer for some models); tokens is read
// first. cached_tokens are prompt tokens served from Cohere's cache.
type usage struct {
	BilledUnits  *tokens `json:"billed_units"`
	Tokens       *tokens `json:"tokens"`
	CachedTokens count   `json:"cached_tokens"`
}

type tokens struct {
	InputTokens  *count `json:"input_tokens"`
	OutputTokens *count `json:"output_tokens"`
}

// Count reads a non-negative number (Cohere's counts are integers,
// sometimes written as 12.0); anything else is zero, so that a strange
// Count never costs the answer.
type count int64

// UnmarshalJSON reads the count.
func (c *count) UnmarshalJSON(b []byte) error {
	*c = 0
	if f, err := strconv.ParseFloat(string(b), 64); err == nil && f > 0 && f < math.MaxInt64/2 {
		*c = count(f)
	}
	return nil
}

// Usage returns the usage, or one that is not Present when neither count
// set is there.
func (u *usage) usage() llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	t := u.Tokens
	if t == nil || t.InputTokens == nil && t.OutputTokens == nil {
		t = u.BilledUnits
	}
	if t == nil || t.InputTokens == nil && t.OutputTokens == nil {
		return llm.Usage{}
	}
	var in, out int64
	if t.InputTokens != nil {
		in = int64(*t.InputTokens)
	}
	if t.OutputTokens != nil {
		out = int64(*t.OutputTokens)
	}
	return llm.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out, CachedTokens: min(int64(u.CachedTokens), in), Present: true}
}

// finish maps a finish_reason to OpenAI's; failed is true for ERROR
// (the generation broke off), which is not an answer.
func finish(reason []byte) (finish string, failed bool) {
	switch string(reason) {
	case "MAX_TOKENS", "ERROR_LIMIT":
		return "length", false
	case "TOOL_CALL":
		return "tool_calls", false
	case "ERROR_TOXIC":
		return "content_filter", false
	case "ERROR":
		return "", true
	}
	return "stop", false // COMPLETE, STOP_SEQUENCE
}

// cohereFailed is the *Error of a generation that ended in ERROR: a 502,
// so that it is retried.
func cohereFailed(msg []byte, key secret.Value) *providers.Error {
	m := "cohere: the generation failed"
	if s := providers.Scrub(string(msg), key); s != "" {
		m += ": " + s
	}
	return &providers.Error{Status: http.StatusBadGateway, Message: m}
}

// answer translates a v2 Chat answer into an OpenAI chat completion
// and returns it with its usage. An answer that is not a message (an error
// object sent with 200, or not JSON) is an *Error with status 502.
func answer(body []byte, created int64, model string, key secret.Value) ([]byte, llm.Usage, error) {
	var a answerJSON
	var m answerMessage
	if err := json.Unmarshal(body, &a); err != nil || len(a.Message) == 0 || a.Message[0] != '{' {
		msg := ""
		if err == nil {
			msg = providers.Scrub(providers.ErrorMessage(body), key)
		}
		if msg == "" {
			msg = providers.ErrInvalidResponse
		}
		return nil, llm.Usage{}, &providers.Error{Status: http.StatusBadGateway, Message: msg}
	}
	if err := json.Unmarshal(a.Message, &m); err != nil {
		return nil, llm.Usage{}, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
	}
	finish, failed := finish([]byte(a.FinishReason))
	if failed {
		return nil, llm.Usage{}, cohereFailed(nil, key)
	}
	var text strings.Builder
	for _, c := range m.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	msg := llm.Message{Role: llm.RoleAssistant}
	for _, tc := range m.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: tc.ID, Type: "function", Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if text.Len() == 0 && len(msg.ToolCalls) > 0 {
		text.WriteString(m.ToolPlan) // the plan is the text of a tool-calling turn
	}
	if text.Len() > 0 || len(msg.ToolCalls) == 0 { // null content only beside tool calls
		msg.Parts = []llm.Part{{Kind: llm.PartText, Text: text.String()}}
	}
	out := llm.Response{ID: a.ID, Created: created, Model: model,
		Choices: []llm.Choice{{Message: msg, Finish: llm.FinishReason(finish)}}}
	usage := a.Usage.usage()
	out.Usage = usage
	b, err := providers.EncodeOpenAIResponse(&out)
	if err != nil {
		return nil, llm.Usage{}, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
	}
	return b, usage, nil
}

// Embeddings.

// embedRequest is a /v2/embed request.
type embedRequest struct {
	Model           string   `json:"model"`
	Texts           []string `json:"texts"`
	InputType       string   `json:"input_type"`
	EmbeddingTypes  []string `json:"embedding_types"`
	OutputDimension *int64   `json:"output_dimension,omitempty"`
}

// embedCall is what reading a /v2/embed answer needs to know of
// the request: how many texts it sent and whether the client wants base64.
type embedCall struct {
	texts  int
	base64 bool
}

// embedBody translates an OpenAI embeddings request into /v2/embed.
func embedBody(req *providers.Request) ([]byte, *embedCall, error) {
	var in struct {
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     *int64          `json:"dimensions"`
	}
	if err := json.Unmarshal(req.Body, &in); err != nil {
		return nil, nil, invalid("the request does not fit the embeddings schema: %v", err)
	}
	out := embedRequest{Model: req.Model, InputType: "search_document", EmbeddingTypes: []string{"float"},
		OutputDimension: in.Dimensions}
	raw := bytes.TrimSpace(in.Input)
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		out.Texts = []string{s}
	case json.Unmarshal(raw, &out.Texts) == nil && out.Texts != nil:
	case len(raw) > 0 && raw[0] == '[':
		return nil, nil, refusal("token arrays as embeddings input (send text)")
	default:
		return nil, nil, invalid("input must be a string or an array of strings")
	}
	switch {
	case len(out.Texts) == 0:
		return nil, nil, invalid("input must not be empty")
	case len(out.Texts) > maxTexts:
		return nil, nil, invalid("at most %d inputs per embeddings request (got %d)", maxTexts, len(out.Texts))
	case in.EncodingFormat != "" && in.EncodingFormat != "float" && in.EncodingFormat != "base64":
		return nil, nil, refusal("encoding_format " + strconv.Quote(in.EncodingFormat))
	}
	body, err := providers.MarshalJSON(&out)
	if err != nil {
		return nil, nil, invalid("%v", err)
	}
	return body, &embedCall{texts: len(out.Texts), base64: in.EncodingFormat == "base64"}, nil
}

// embedAnswer translates a /v2/embed answer for n texts into an
// OpenAI embeddings list; vectors are copied as Cohere wrote them, or as
// base64 float32s when asked.
func embedAnswer(body []byte, n int, model string, asBase64 bool) (*providers.Response, error) {
	var in struct {
		Embeddings *struct {
			Float []json.RawMessage `json:"float"`
		} `json:"embeddings"`
		Meta struct {
			BilledUnits tokens `json:"billed_units"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.Embeddings == nil {
		return nil, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
	}
	if len(in.Embeddings.Float) != n {
		return nil, &providers.Error{Status: http.StatusBadGateway,
			Message: fmt.Sprintf("upstream answered %d embeddings for %d inputs", len(in.Embeddings.Float), n)}
	}
	vectors := make([]any, n)
	for i, v := range in.Embeddings.Float {
		if len(v) == 0 || v[0] != '[' {
			return nil, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
		}
		vectors[i] = v
		if asBase64 {
			var values []float64
			if err := json.Unmarshal(v, &values); err != nil {
				return nil, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
			}
			vectors[i] = providers.Base64Floats(values)
		}
	}
	var usage llm.Usage
	if t := in.Meta.BilledUnits.InputTokens; t != nil {
		usage = llm.Usage{PromptTokens: int64(*t), TotalTokens: int64(*t), Present: true}
	}
	b, err := providers.EmbeddingsAnswer(model, vectors, usage.PromptTokens)
	if err != nil {
		return nil, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
	}
	return &providers.Response{Body: b, Usage: usage, Model: model}, nil
}
