package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
)

// The translation of chat requests, from the neutral model, into the
// Gemini API's.

// chatIn is the neutral chat request plus the OpenAI fields only the
// Gemini codec reads: sampling settings Gemini has and the neutral model
// does not carry, and features Gemini lacks (each is a 400). Fields it
// does not know are ignored: "user", "store" and "metadata" concern
// OpenAI's own records and change nothing in the answer.
type chatIn struct {
	*llm.Request
	extras
}

// extras are the OpenAI fields chatIn reads besides the neutral model.
type extras struct {
	// FunctionCalls holds each message's deprecated function_call,
	// which becomes a tool call of the assistant message.
	FunctionCalls []struct {
		FunctionCall *functionIn `json:"function_call"`
	} `json:"messages"`
	N                *int64          `json:"n"`
	Seed             *int64          `json:"seed"`
	PresencePenalty  json.RawMessage `json:"presence_penalty"`
	FrequencyPenalty json.RawMessage `json:"frequency_penalty"`
	// ReasoningEffort is read for its type only: a reasoning_effort that
	// is no string is a 400, as it was before the neutral model carried
	// it (Request.Reasoning, which the decoder reads leniently).
	ReasoningEffort string `json:"reasoning_effort"`

	// Features the Gemini API lacks: each is a 400.
	Logprobs         *bool           `json:"logprobs"`
	TopLogprobs      *int64          `json:"top_logprobs"`
	LogitBias        map[string]any  `json:"logit_bias"`
	Modalities       []string        `json:"modalities"`
	Audio            json.RawMessage `json:"audio"`
	Prediction       json.RawMessage `json:"prediction"`
	WebSearchOptions json.RawMessage `json:"web_search_options"`
	Functions        json.RawMessage `json:"functions"`
}

// functionIn is a message's deprecated function_call.
type functionIn struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// isSet reports whether an optional raw field is present and not null.
func isSet(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// unsupported names the first feature of r the Gemini API lacks.
func (r *chatIn) unsupported(stream bool) string {
	switch {
	case r.Logprobs != nil && *r.Logprobs || r.TopLogprobs != nil && *r.TopLogprobs > 0:
		return "logprobs"
	case len(r.LogitBias) > 0:
		return "logit_bias"
	case stream && r.N != nil && *r.N > 1:
		return "n > 1 with stream"
	case slices.Contains(r.Modalities, "audio") || isSet(r.Audio):
		return "audio output"
	case isSet(r.Prediction):
		return "predicted outputs (prediction)"
	case isSet(r.WebSearchOptions):
		return "web_search_options"
	case r.ParallelToolCalls != nil && !*r.ParallelToolCalls:
		return "parallel_tool_calls: false (it may always call several tools at once)"
	case isSet(r.Functions):
		return "the deprecated functions parameter (use tools)"
	}
	return ""
}

// thinkingBudgets maps a reasoning effort to a thinking budget, as
// Google's own OpenAI compatibility layer does.
var thinkingBudgets = map[string]int64{"none": 0, "low": 1024, "medium": 8192, "high": 24576}

// skipSignature is the placeholder thought signature Google
// documents for function calls that Gemini did not produce (or whose
// signature the client dropped); Gemini 3 refuses a call without one.
const skipSignature = "skip_thought_signature_validator"

// chatBody translates a chat request into a GenerateContentRequest, or
// returns a 400 *Error naming what cannot be. It reads the neutral
// llm.Request (llm.DecodeOpenAIChat) and the extras.
func chatBody(req *providers.Request) ([]byte, error) {
	r, err := llm.DecodeOpenAIChat(req.Body)
	if err != nil {
		return nil, decodeError(err)
	}
	in := chatIn{Request: r}
	if err := decode(req.Body, &in.extras); err != nil {
		return nil, err
	}
	if f := in.unsupported(req.Stream); f != "" {
		return nil, unsupported(f)
	}
	if in.MaxOutputTokens == nil && req.MaxOutputTokens > 0 {
		capOut := req.MaxOutputTokens // the gateway's cap: generationConfig.maxOutputTokens
		in.MaxOutputTokens = &capOut
	}
	out := request{}
	if out.Contents, out.SystemInstruction, err = contents(&in, strings.HasPrefix(model(req.Model), "gemini-3")); err != nil {
		return nil, err
	}
	if out.Tools, err = tools(in.Tools); err != nil {
		return nil, err
	}
	if out.ToolConfig, err = toolChoice(in.ToolChoice); err != nil {
		return nil, err
	}
	if out.GenerationConfig, err = in.generationConfig(); err != nil {
		return nil, err
	}
	body, err := providers.MarshalJSON(out)
	if err != nil {
		return nil, invalid("%v", err)
	}
	return body, nil
}

// generationConfig gathers the sampling settings, or nil when none is set.
func (r *chatIn) generationConfig() (*generationConfig, error) {
	gc := generationConfig{
		Temperature: providers.RawNumber(r.Temperature), TopP: providers.RawNumber(r.TopP),
		MaxOutputTokens: r.MaxOutputTokens, StopSequences: r.Stop, CandidateCount: r.N,
		Seed: r.Seed, PresencePenalty: providers.RawNumber(r.PresencePenalty), FrequencyPenalty: providers.RawNumber(r.FrequencyPenalty),
	}
	for name, v := range map[string]json.RawMessage{"temperature": gc.Temperature, "top_p": gc.TopP,
		"presence_penalty": gc.PresencePenalty, "frequency_penalty": gc.FrequencyPenalty} {
		if v != nil && (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
			return nil, invalid("%s has the wrong type (want a number)", name)
		}
	}
	if rf := r.ResponseFormat; rf != nil {
		switch rf.Type {
		case "text", "":
		case "json_object":
			gc.ResponseMIMEType = "application/json"
		case "json_schema":
			gc.ResponseMIMEType = "application/json"
			gc.ResponseSchema = rf.Schema
		default:
			return nil, unsupported("response_format " + strconv.Quote(rf.Type))
		}
	}
	if rs := r.Reasoning; rs != nil {
		budget, ok := thinkingBudgets[rs.Effort]
		if rs.BudgetTokens != nil {
			budget, ok = *rs.BudgetTokens, true
		}
		if !ok {
			return nil, unsupported("reasoning_effort " + strconv.Quote(rs.Effort))
		}
		gc.ThinkingConfig = &thinkingConfig{ThinkingBudget: budget}
	}
	if gc.Temperature == nil && gc.TopP == nil && gc.MaxOutputTokens == nil && len(gc.StopSequences) == 0 &&
		gc.CandidateCount == nil && gc.Seed == nil && gc.PresencePenalty == nil && gc.FrequencyPenalty == nil &&
		gc.ResponseMIMEType == "" && gc.ThinkingConfig == nil {
		return nil, nil
	}
	return &gc, nil
}

// contents translates the messages: system and developer messages
// become the system instruction; user, assistant ("model") and tool
// results (user functionResponse parts) become contents, consecutive
// ones of the same role merged, as Gemini wants turns to alternate.
func contents(in *chatIn, needSignature bool) ([]content, *content, error) {
	contents := []content{}
	var system *content
	names := map[string]string{} // tool_call_id → function name
	add := func(role string, parts []part) {
		if len(parts) == 0 {
			return
		}
		if n := len(contents); n > 0 && contents[n-1].Role == role {
			contents[n-1].Parts = append(contents[n-1].Parts, parts...)
			return
		}
		contents = append(contents, content{Role: role, Parts: parts})
	}
	for i := range in.Request.Messages {
		m := &in.Request.Messages[i]
		switch m.Role {
		case llm.RoleSystem, llm.RoleDeveloper:
			text, err := messageText(m.Parts)
			if err != nil {
				return nil, nil, err
			}
			if system == nil {
				system = &content{}
			}
			if text != "" {
				system.Parts = append(system.Parts, part{Text: text})
			}
		case llm.RoleUser:
			parts, err := userParts(m.Parts, i)
			if err != nil {
				return nil, nil, err
			}
			add("user", parts)
		case llm.RoleAssistant:
			text, err := messageText(m.Parts)
			if err != nil {
				return nil, nil, err
			}
			var parts []part
			if text != "" {
				parts = append(parts, part{Text: text})
			}
			calls := m.ToolCalls
			if i < len(in.FunctionCalls) && in.FunctionCalls[i].FunctionCall != nil {
				fc := in.FunctionCalls[i].FunctionCall
				calls = append(slices.Clip(calls), llm.ToolCall{Type: "function", Name: fc.Name, Arguments: fc.Arguments})
			}
			for j, tc := range calls {
				p, err := callPart(tc, i)
				if err != nil {
					return nil, nil, err
				}
				if j == 0 && p.ThoughtSignature == "" && needSignature {
					p.ThoughtSignature = skipSignature
				}
				names[tc.ID] = tc.Name
				parts = append(parts, p)
			}
			add("model", parts)
		case llm.RoleTool, "function":
			name := m.Name
			if m.Role == llm.RoleTool {
				var ok bool
				if name, ok = names[m.ToolCallID]; !ok || m.ToolCallID == "" {
					return nil, nil, invalid("messages[%d]: tool_call_id %q matches no earlier tool call", i, m.ToolCallID)
				}
			}
			text, err := messageText(m.Parts)
			if err != nil {
				return nil, nil, err
			}
			add("user", []part{{FunctionResponse: &functionResponse{Name: name, Response: toolResult(text)}}})
		default:
			return nil, nil, invalid("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	if system != nil && len(system.Parts) == 0 {
		system = nil
	}
	return contents, system, nil
}

// callPart is the functionCall part of an assistant's tool call.
func callPart(tc llm.ToolCall, msg int) (part, error) {
	if tc.Type != "function" && tc.Type != "" {
		return part{}, unsupported("tool calls of type " + strconv.Quote(tc.Type))
	}
	args := json.RawMessage(strings.TrimSpace(tc.Arguments))
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) || args[0] != '{' {
		return part{}, invalid("messages[%d]: the arguments of tool call %q are not a JSON object", msg, tc.ID)
	}
	return part{FunctionCall: &functionCall{Name: tc.Name, Args: args}, ThoughtSignature: tc.Signature}, nil
}

// toolResult is a functionResponse's response: {"content": …}
// holding the tool's JSON object or array as it is, else its text.
func toolResult(text string) json.RawMessage {
	v := json.RawMessage(strings.TrimSpace(text))
	if len(v) == 0 || v[0] != '{' && v[0] != '[' || !json.Valid(v) {
		v, _ = json.Marshal(text)
	}
	out, _ := json.Marshal(struct {
		Content json.RawMessage `json:"content"`
	}{v})
	return out
}

// messageText is the text of a system, assistant or tool message: its
// text (and refusal) parts joined.
func messageText(parts []llm.Part) (string, error) {
	if len(parts) == 1 && parts[0].Kind == llm.PartText {
		return parts[0].Text, nil
	}
	var b strings.Builder
	for _, p := range parts {
		switch p.Kind {
		case llm.PartText, llm.PartRefusal:
			b.WriteString(p.Text)
		default:
			return "", unsupported("content parts of type " + strconv.Quote(p.WireType) + " outside user messages")
		}
	}
	return b.String(), nil
}

// userParts translates a user message: text, images (a data: URL
// inline, an http(s) URL as fileData), audio and file data.
func userParts(in []llm.Part, msg int) ([]part, error) {
	out := make([]part, 0, len(in))
	for _, p := range in {
		switch p.Kind {
		case llm.PartText:
			if p.Text != "" {
				out = append(out, part{Text: p.Text})
			}
		case llm.PartImage:
			part, err := imagePart(p.ImageURL, msg)
			if err != nil {
				return nil, err
			}
			out = append(out, part)
		case llm.PartAudio:
			if p.Data == "" {
				return nil, invalid("messages[%d]: input_audio without data", msg)
			}
			out = append(out, part{InlineData: &blob{MIMEType: "audio/" + or(p.Format, "wav"), Data: p.Data}})
		case llm.PartFile:
			if p.Data == "" {
				return nil, unsupported("OpenAI file ids (send file_data)")
			}
			mime, data, ok := providers.ParseDataURL(p.Data)
			if !ok {
				mime, data = mimeByExt[strings.ToLower(path.Ext(p.Filename))], p.Data
			}
			if mime == "" {
				return nil, invalid("messages[%d]: cannot tell the type of file %q (send a data: URL)", msg, p.Filename)
			}
			out = append(out, part{InlineData: &blob{MIMEType: mime, Data: data}})
		default:
			return nil, unsupported("content parts of type " + strconv.Quote(p.WireType))
		}
	}
	return out, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func imagePart(u string, msg int) (part, error) {
	if mime, data, ok := providers.ParseDataURL(u); ok {
		return part{InlineData: &blob{MIMEType: mime, Data: data}}, nil
	}
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return part{FileData: &file{MIMEType: guessMIME(u), FileURI: u}}, nil
	}
	return part{}, invalid("messages[%d]: image_url must be an http(s) URL or a base64 data: URL", msg)
}

// tools translates function tools into one Tool of declarations.
func tools(tools []llm.Tool) ([]tool, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	decls := make([]functionDeclaration, 0, len(tools))
	for i, t := range tools {
		if t.Type != "function" {
			return nil, unsupported("tools of type " + strconv.Quote(t.Type))
		}
		if t.Name == "" {
			return nil, invalid("tools[%d].function.name is missing", i)
		}
		decls = append(decls, functionDeclaration{Name: t.Name, Description: t.Description,
			Parameters: parameters(t.Parameters)})
	}
	return []tool{{FunctionDeclarations: decls}}, nil
}

// parameters is a tool's schema as given, except that an object
// without properties is left out: Gemini refuses an OBJECT schema with
// empty properties, and a function without parameters means the same.
func parameters(raw json.RawMessage) json.RawMessage {
	if !isSet(raw) {
		return nil
	}
	var s struct {
		Type       string         `json:"type"`
		Properties map[string]any `json:"properties"`
	}
	if json.Unmarshal(raw, &s) == nil && s.Type == "object" && len(s.Properties) == 0 {
		return nil
	}
	return raw
}

// toolChoice translates the tool choice into a function calling mode.
func toolChoice(tc *llm.ToolChoice) (*toolConfig, error) {
	if tc == nil {
		return nil, nil
	}
	mode := ""
	switch tc.Mode {
	case llm.ToolChoiceAuto:
		mode = "AUTO"
	case llm.ToolChoiceNone:
		mode = "NONE"
	case llm.ToolChoiceRequired:
		mode = "ANY"
	case llm.ToolChoiceFunction:
		if tc.Name != "" {
			return &toolConfig{FunctionCallingConfig: functionCallingConfig{
				Mode: "ANY", AllowedFunctionNames: []string{tc.Name}}}, nil
		}
	default:
		var s string
		if json.Unmarshal(tc.Raw, &s) == nil {
			return nil, unsupported("tool_choice " + strconv.Quote(s))
		}
	}
	if mode == "" {
		return nil, unsupported("this tool_choice (use auto, none, required or a named function)")
	}
	return &toolConfig{FunctionCallingConfig: functionCallingConfig{Mode: mode}}, nil
}

// The Gemini wire format, as far as the adapter writes and reads it.
type (
	request struct {
		Contents          []content         `json:"contents"`
		SystemInstruction *content          `json:"systemInstruction,omitempty"`
		Tools             []tool            `json:"tools,omitempty"`
		ToolConfig        *toolConfig       `json:"toolConfig,omitempty"`
		GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
	}
	content struct {
		Role  string `json:"role,omitempty"`
		Parts []part `json:"parts"`
	}
	part struct {
		Text             string            `json:"text,omitempty"`
		Thought          bool              `json:"thought,omitempty"`
		InlineData       *blob             `json:"inlineData,omitempty"`
		FileData         *file             `json:"fileData,omitempty"`
		FunctionCall     *functionCall     `json:"functionCall,omitempty"`
		FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
		ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	}
	blob struct {
		MIMEType string `json:"mimeType"`
		Data     string `json:"data"`
	}
	file struct {
		MIMEType string `json:"mimeType"`
		FileURI  string `json:"fileUri"`
	}
	functionCall struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args,omitempty"`
	}
	functionResponse struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	}
	tool struct {
		FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
	}
	functionDeclaration struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	toolConfig struct {
		FunctionCallingConfig functionCallingConfig `json:"functionCallingConfig"`
	}
	functionCallingConfig struct {
		Mode                 string   `json:"mode"`
		AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
	}
	generationConfig struct {
		Temperature      json.RawMessage `json:"temperature,omitempty"`
		TopP             json.RawMessage `json:"topP,omitempty"`
		MaxOutputTokens  *int64          `json:"maxOutputTokens,omitempty"`
		StopSequences    []string        `json:"stopSequences,omitempty"`
		CandidateCount   *int64          `json:"candidateCount,omitempty"`
		Seed             *int64          `json:"seed,omitempty"`
		PresencePenalty  json.RawMessage `json:"presencePenalty,omitempty"`
		FrequencyPenalty json.RawMessage `json:"frequencyPenalty,omitempty"`
		ResponseMIMEType string          `json:"responseMimeType,omitempty"`
		ResponseSchema   json.RawMessage `json:"responseSchema,omitempty"`
		ThinkingConfig   *thinkingConfig `json:"thinkingConfig,omitempty"`
	}
	thinkingConfig struct {
		ThinkingBudget int64 `json:"thinkingBudget"`
	}
)

// embedCall is a translated embeddings request.
type embedCall struct {
	body           []byte
	single, base64 bool
	inputs         int
	tokens         int64 // estimated: ceil(characters / 4)
}

// embedBody translates an OpenAI embeddings request.
func embedBody(req *providers.Request) (embedCall, error) {
	var in struct {
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     *int64          `json:"dimensions"`
	}
	if err := decode(req.Body, &in); err != nil {
		return embedCall{}, err
	}
	var e embedCall
	switch in.EncodingFormat {
	case "", "float":
	case "base64":
		e.base64 = true
	default:
		return e, unsupported("encoding_format " + strconv.Quote(in.EncodingFormat))
	}
	var texts []string
	var items []json.RawMessage
	raw := bytes.TrimSpace(in.Input)
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		texts, e.single = []string{s}, true
	case json.Unmarshal(raw, &texts) == nil && len(texts) > 0:
	case json.Unmarshal(raw, &items) == nil && len(items) > 0 && bytes.ContainsAny(items[0][:1], "-0123456789["):
		return e, unsupported("token arrays as embeddings input")
	default:
		return e, invalid("input must be a string or a non-empty array of strings")
	}
	type embedRequest struct {
		Model                string  `json:"model"`
		Content              content `json:"content"`
		OutputDimensionality *int64  `json:"outputDimensionality,omitempty"`
	}
	reqs := make([]embedRequest, len(texts))
	chars := 0
	for i, t := range texts {
		reqs[i] = embedRequest{Model: "models/" + model(req.Model), Content: content{Parts: []part{{Text: t}}},
			OutputDimensionality: in.Dimensions}
		chars += utf8.RuneCountInString(t)
	}
	e.inputs, e.tokens = len(texts), int64((chars+3)/4)
	var v any = struct {
		Requests []embedRequest `json:"requests"`
	}{reqs}
	if e.single {
		v = reqs[0]
	}
	var err error
	e.body, err = providers.MarshalJSON(v)
	return e, err
}

// decode decodes a client's body, naming a field of the wrong type.
func decode(body []byte, v any) error {
	return decodeError(json.Unmarshal(body, v))
}

// decodeError words a decoding failure (of encoding/json, or the neutral
// decoder's *llm.SchemaError around one), naming a field of the wrong
// type; nil stays nil.
func decodeError(err error) error {
	if se, ok := err.(*llm.SchemaError); ok {
		err = se.Err
	}
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		return invalid("%s has the wrong type (%s)", te.Field, te.Value)
	}
	return invalid("invalid request body: %v", err)
}

// mimeByExt types a file URL by its extension; fileData needs a
// MIME type and the gateway does not fetch the URL to find out.
var mimeByExt = map[string]string{
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif",
	".webp": "image/webp", ".heic": "image/heic", ".heif": "image/heif", ".pdf": "application/pdf",
	".mp3": "audio/mp3", ".wav": "audio/wav", ".mp4": "video/mp4",
}

// guessMIME types an image URL, defaulting to JPEG.
func guessMIME(rawURL string) string {
	p := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		p = u.Path
	}
	if m, ok := mimeByExt[strings.ToLower(path.Ext(p))]; ok {
		return m
	}
	return "image/jpeg"
}
