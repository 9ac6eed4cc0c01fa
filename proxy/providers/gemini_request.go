package providers

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
)

// The translation of OpenAI requests into the Gemini API's.

// The OpenAI chat request, as far as the Gemini adapter reads it, on top
// of the translating adapters' shared schema (openaischema.go). Fields it
// does not know are ignored: "user", "store" and "metadata" concern
// OpenAI's own records and change nothing in the answer.
type (
	// geminiChatIn extends the shared schema with what only the Gemini
	// adapter reads. Its messages shadow the shared ones: Gemini also
	// takes audio and files, and tool calls keep their thought signature.
	geminiChatIn struct {
		openAIChatRequest
		Messages         []geminiMessageIn `json:"messages"`
		N                *int64            `json:"n"`
		Seed             *int64            `json:"seed"`
		PresencePenalty  json.RawMessage   `json:"presence_penalty"`
		FrequencyPenalty json.RawMessage   `json:"frequency_penalty"`
		ReasoningEffort  string            `json:"reasoning_effort"`

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
	geminiMessageIn struct {
		Role         string             `json:"role"`
		Content      json.RawMessage    `json:"content"`
		Name         string             `json:"name"`
		ToolCalls    []geminiToolCallIn `json:"tool_calls"`
		ToolCallID   string             `json:"tool_call_id"`
		FunctionCall *geminiFunctionIn  `json:"function_call"`
	}
	geminiToolCallIn struct {
		ID           string              `json:"id"`
		Type         string              `json:"type"`
		Function     geminiFunctionIn    `json:"function"`
		ExtraContent *geminiExtraContent `json:"extra_content"`
	}
	geminiFunctionIn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	geminiPartIn struct {
		Type       string          `json:"type"`
		Text       string          `json:"text"`
		Refusal    string          `json:"refusal"`
		ImageURL   json.RawMessage `json:"image_url"` // {"url"} or, from some clients, the URL itself
		InputAudio *struct {
			Data   string `json:"data"`
			Format string `json:"format"`
		} `json:"input_audio"`
		File *struct {
			FileData string `json:"file_data"`
			FileID   string `json:"file_id"`
			Filename string `json:"filename"`
		} `json:"file"`
	}
)

// geminiIsSet reports whether an optional raw field is present and not null.
func geminiIsSet(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// unsupported names the first feature of r the Gemini API lacks.
func (r *geminiChatIn) unsupported(stream bool) string {
	switch {
	case r.Logprobs != nil && *r.Logprobs || r.TopLogprobs != nil && *r.TopLogprobs > 0:
		return "logprobs"
	case len(r.LogitBias) > 0:
		return "logit_bias"
	case stream && r.N != nil && *r.N > 1:
		return "n > 1 with stream"
	case slices.Contains(r.Modalities, "audio") || geminiIsSet(r.Audio):
		return "audio output"
	case geminiIsSet(r.Prediction):
		return "predicted outputs (prediction)"
	case geminiIsSet(r.WebSearchOptions):
		return "web_search_options"
	case r.ParallelToolCalls != nil && !*r.ParallelToolCalls:
		return "parallel_tool_calls: false (it may always call several tools at once)"
	case geminiIsSet(r.Functions):
		return "the deprecated functions parameter (use tools)"
	}
	return ""
}

// geminiThinkingBudgets maps reasoning_effort to a thinking budget, as
// Google's own OpenAI compatibility layer does.
var geminiThinkingBudgets = map[string]int64{"none": 0, "low": 1024, "medium": 8192, "high": 24576}

// geminiSkipSignature is the placeholder thought signature Google
// documents for function calls that Gemini did not produce (or whose
// signature the client dropped); Gemini 3 refuses a call without one.
const geminiSkipSignature = "skip_thought_signature_validator"

// geminiChatBody translates an OpenAI chat request into a
// GenerateContentRequest, or returns a 400 *Error naming what cannot be.
func geminiChatBody(req *Request) ([]byte, error) {
	var in geminiChatIn
	if err := geminiDecode(req.Body, &in); err != nil {
		return nil, err
	}
	if f := in.unsupported(req.Stream); f != "" {
		return nil, geminiUnsupported(f)
	}
	if in.MaxCompletionTokens == nil && in.MaxTokens == nil && req.MaxOutputTokens > 0 {
		capOut := req.MaxOutputTokens // the gateway's cap: generationConfig.maxOutputTokens
		in.MaxTokens = &capOut
	}
	out := geminiRequest{}
	var err error
	if out.Contents, out.SystemInstruction, err = geminiContents(in.Messages, strings.HasPrefix(geminiModel(req.Model), "gemini-3")); err != nil {
		return nil, err
	}
	if out.Tools, err = geminiTools(in.Tools); err != nil {
		return nil, err
	}
	if out.ToolConfig, err = geminiToolChoice(in.ToolChoice); err != nil {
		return nil, err
	}
	if out.GenerationConfig, err = in.generationConfig(); err != nil {
		return nil, err
	}
	body, err := marshalJSON(out)
	if err != nil {
		return nil, geminiInvalid("%v", err)
	}
	return body, nil
}

// generationConfig gathers the sampling settings, or nil when none is set.
func (r *geminiChatIn) generationConfig() (*geminiGenerationConfig, error) {
	gc := geminiGenerationConfig{
		Temperature: rawNumber(r.Temperature), TopP: rawNumber(r.TopP),
		MaxOutputTokens: geminiFirst(r.MaxCompletionTokens, r.MaxTokens), StopSequences: r.Stop, CandidateCount: r.N,
		Seed: r.Seed, PresencePenalty: rawNumber(r.PresencePenalty), FrequencyPenalty: rawNumber(r.FrequencyPenalty),
	}
	for name, v := range map[string]json.RawMessage{"temperature": gc.Temperature, "top_p": gc.TopP,
		"presence_penalty": gc.PresencePenalty, "frequency_penalty": gc.FrequencyPenalty} {
		if v != nil && (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
			return nil, geminiInvalid("%s has the wrong type (want a number)", name)
		}
	}
	if rf := r.ResponseFormat; rf != nil {
		switch rf.Type {
		case "text", "":
		case "json_object":
			gc.ResponseMIMEType = "application/json"
		case "json_schema":
			gc.ResponseMIMEType = "application/json"
			if rf.JSONSchema != nil && geminiIsSet(rf.JSONSchema.Schema) {
				gc.ResponseSchema = rf.JSONSchema.Schema
			}
		default:
			return nil, geminiUnsupported("response_format " + strconv.Quote(rf.Type))
		}
	}
	if r.ReasoningEffort != "" {
		budget, ok := geminiThinkingBudgets[r.ReasoningEffort]
		if !ok {
			return nil, geminiUnsupported("reasoning_effort " + strconv.Quote(r.ReasoningEffort))
		}
		gc.ThinkingConfig = &geminiThinkingConfig{ThinkingBudget: budget}
	}
	if gc.Temperature == nil && gc.TopP == nil && gc.MaxOutputTokens == nil && len(gc.StopSequences) == 0 &&
		gc.CandidateCount == nil && gc.Seed == nil && gc.PresencePenalty == nil && gc.FrequencyPenalty == nil &&
		gc.ResponseMIMEType == "" && gc.ThinkingConfig == nil {
		return nil, nil
	}
	return &gc, nil
}

// geminiFirst returns a when it is set, else b.
func geminiFirst[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// geminiContents translates the messages: system and developer messages
// become the system instruction; user, assistant ("model") and tool
// results (user functionResponse parts) become contents, consecutive
// ones of the same role merged, as Gemini wants turns to alternate.
func geminiContents(msgs []geminiMessageIn, needSignature bool) ([]geminiContent, *geminiContent, error) {
	contents := []geminiContent{}
	var system *geminiContent
	names := map[string]string{} // tool_call_id → function name
	add := func(role string, parts []geminiPart) {
		if len(parts) == 0 {
			return
		}
		if n := len(contents); n > 0 && contents[n-1].Role == role {
			contents[n-1].Parts = append(contents[n-1].Parts, parts...)
			return
		}
		contents = append(contents, geminiContent{Role: role, Parts: parts})
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case "system", "developer":
			text, err := geminiMessageText(m.Content, i)
			if err != nil {
				return nil, nil, err
			}
			if system == nil {
				system = &geminiContent{}
			}
			if text != "" {
				system.Parts = append(system.Parts, geminiPart{Text: text})
			}
		case "user":
			parts, err := geminiUserParts(m.Content, i)
			if err != nil {
				return nil, nil, err
			}
			add("user", parts)
		case "assistant":
			text, err := geminiMessageText(m.Content, i)
			if err != nil {
				return nil, nil, err
			}
			var parts []geminiPart
			if text != "" {
				parts = append(parts, geminiPart{Text: text})
			}
			calls := m.ToolCalls
			if m.FunctionCall != nil {
				calls = append(calls, geminiToolCallIn{Type: "function", Function: *m.FunctionCall})
			}
			for j, tc := range calls {
				p, err := geminiCallPart(tc, i)
				if err != nil {
					return nil, nil, err
				}
				if j == 0 && p.ThoughtSignature == "" && needSignature {
					p.ThoughtSignature = geminiSkipSignature
				}
				names[tc.ID] = tc.Function.Name
				parts = append(parts, p)
			}
			add("model", parts)
		case "tool", "function":
			name := m.Name
			if m.Role == "tool" {
				var ok bool
				if name, ok = names[m.ToolCallID]; !ok || m.ToolCallID == "" {
					return nil, nil, geminiInvalid("messages[%d]: tool_call_id %q matches no earlier tool call", i, m.ToolCallID)
				}
			}
			text, err := geminiMessageText(m.Content, i)
			if err != nil {
				return nil, nil, err
			}
			add("user", []geminiPart{{FunctionResponse: &geminiFunctionResponse{Name: name, Response: geminiToolResult(text)}}})
		default:
			return nil, nil, geminiInvalid("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	if system != nil && len(system.Parts) == 0 {
		system = nil
	}
	return contents, system, nil
}

// geminiCallPart is the functionCall part of an assistant's tool call.
func geminiCallPart(tc geminiToolCallIn, msg int) (geminiPart, error) {
	if tc.Type != "function" && tc.Type != "" {
		return geminiPart{}, geminiUnsupported("tool calls of type " + strconv.Quote(tc.Type))
	}
	args := json.RawMessage(strings.TrimSpace(tc.Function.Arguments))
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) || args[0] != '{' {
		return geminiPart{}, geminiInvalid("messages[%d]: the arguments of tool call %q are not a JSON object", msg, tc.ID)
	}
	p := geminiPart{FunctionCall: &geminiFunctionCall{Name: tc.Function.Name, Args: args}}
	if tc.ExtraContent != nil {
		p.ThoughtSignature = tc.ExtraContent.Google.ThoughtSignature
	}
	return p, nil
}

// geminiToolResult is a functionResponse's response: {"content": …}
// holding the tool's JSON object or array as it is, else its text.
func geminiToolResult(text string) json.RawMessage {
	v := json.RawMessage(strings.TrimSpace(text))
	if len(v) == 0 || v[0] != '{' && v[0] != '[' || !json.Valid(v) {
		v, _ = json.Marshal(text)
	}
	out, _ := json.Marshal(struct {
		Content json.RawMessage `json:"content"`
	}{v})
	return out
}

// geminiMessageText is the text of a system, assistant or tool message:
// its string content or its text (and refusal) parts joined.
func geminiMessageText(raw json.RawMessage, msg int) (string, error) {
	if !geminiIsSet(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []geminiPartIn
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", geminiInvalid("messages[%d].content must be a string or an array of content parts", msg)
	}
	var b strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text":
			b.WriteString(p.Text)
		case "refusal":
			b.WriteString(p.Refusal)
		default:
			return "", geminiUnsupported("content parts of type " + strconv.Quote(p.Type) + " outside user messages")
		}
	}
	return b.String(), nil
}

// geminiUserParts translates a user message: text, images (a data: URL
// inline, an http(s) URL as fileData), input_audio and file data.
func geminiUserParts(raw json.RawMessage, msg int) ([]geminiPart, error) {
	if !geminiIsSet(raw) {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, nil
		}
		return []geminiPart{{Text: s}}, nil
	}
	var in []geminiPartIn
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, geminiInvalid("messages[%d].content must be a string or an array of content parts", msg)
	}
	out := make([]geminiPart, 0, len(in))
	for _, p := range in {
		switch p.Type {
		case "text":
			if p.Text != "" {
				out = append(out, geminiPart{Text: p.Text})
			}
		case "image_url":
			part, err := geminiImagePart(p.ImageURL, msg)
			if err != nil {
				return nil, err
			}
			out = append(out, part)
		case "input_audio":
			if p.InputAudio == nil || p.InputAudio.Data == "" {
				return nil, geminiInvalid("messages[%d]: input_audio without data", msg)
			}
			out = append(out, geminiPart{InlineData: &geminiBlob{MIMEType: "audio/" + geminiOr(p.InputAudio.Format, "wav"), Data: p.InputAudio.Data}})
		case "file":
			if p.File == nil || p.File.FileData == "" {
				return nil, geminiUnsupported("OpenAI file ids (send file_data)")
			}
			mime, data, ok := parseDataURL(p.File.FileData)
			if !ok {
				mime, data = geminiMIMEByExt[strings.ToLower(path.Ext(p.File.Filename))], p.File.FileData
			}
			if mime == "" {
				return nil, geminiInvalid("messages[%d]: cannot tell the type of file %q (send a data: URL)", msg, p.File.Filename)
			}
			out = append(out, geminiPart{InlineData: &geminiBlob{MIMEType: mime, Data: data}})
		default:
			return nil, geminiUnsupported("content parts of type " + strconv.Quote(p.Type))
		}
	}
	return out, nil
}

func geminiOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func geminiImagePart(raw json.RawMessage, msg int) (geminiPart, error) {
	var u string
	if json.Unmarshal(raw, &u) != nil {
		var obj struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal(raw, &obj)
		u = obj.URL
	}
	if mime, data, ok := parseDataURL(u); ok {
		return geminiPart{InlineData: &geminiBlob{MIMEType: mime, Data: data}}, nil
	}
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return geminiPart{FileData: &geminiFile{MIMEType: geminiGuessMIME(u), FileURI: u}}, nil
	}
	return geminiPart{}, geminiInvalid("messages[%d]: image_url must be an http(s) URL or a base64 data: URL", msg)
}

// geminiTools translates function tools into one Tool of declarations.
func geminiTools(tools []openAITool) ([]geminiTool, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	decls := make([]geminiFunctionDeclaration, 0, len(tools))
	for i, t := range tools {
		if t.Type != "function" {
			return nil, geminiUnsupported("tools of type " + strconv.Quote(t.Type))
		}
		if t.Function.Name == "" {
			return nil, geminiInvalid("tools[%d].function.name is missing", i)
		}
		decls = append(decls, geminiFunctionDeclaration{Name: t.Function.Name, Description: t.Function.Description,
			Parameters: geminiParameters(t.Function.Parameters)})
	}
	return []geminiTool{{FunctionDeclarations: decls}}, nil
}

// geminiParameters is a tool's schema as given, except that an object
// without properties is left out: Gemini refuses an OBJECT schema with
// empty properties, and a function without parameters means the same.
func geminiParameters(raw json.RawMessage) json.RawMessage {
	if !geminiIsSet(raw) {
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

// geminiToolChoice translates tool_choice into a function calling mode.
func geminiToolChoice(raw json.RawMessage) (*geminiToolConfig, error) {
	if !geminiIsSet(raw) {
		return nil, nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		m, ok := map[string]string{"auto": "AUTO", "none": "NONE", "required": "ANY"}[mode]
		if !ok {
			return nil, geminiUnsupported("tool_choice " + strconv.Quote(mode))
		}
		return &geminiToolConfig{FunctionCallingConfig: geminiFunctionCallingConfig{Mode: m}}, nil
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &named) != nil || named.Type != "function" || named.Function.Name == "" {
		return nil, geminiUnsupported("this tool_choice (use auto, none, required or a named function)")
	}
	return &geminiToolConfig{FunctionCallingConfig: geminiFunctionCallingConfig{
		Mode: "ANY", AllowedFunctionNames: []string{named.Function.Name}}}, nil
}

// The Gemini wire format, as far as the adapter writes and reads it.
type (
	geminiRequest struct {
		Contents          []geminiContent         `json:"contents"`
		SystemInstruction *geminiContent          `json:"systemInstruction,omitempty"`
		Tools             []geminiTool            `json:"tools,omitempty"`
		ToolConfig        *geminiToolConfig       `json:"toolConfig,omitempty"`
		GenerationConfig  *geminiGenerationConfig `json:"generationConfig,omitempty"`
	}
	geminiContent struct {
		Role  string       `json:"role,omitempty"`
		Parts []geminiPart `json:"parts"`
	}
	geminiPart struct {
		Text             string                  `json:"text,omitempty"`
		Thought          bool                    `json:"thought,omitempty"`
		InlineData       *geminiBlob             `json:"inlineData,omitempty"`
		FileData         *geminiFile             `json:"fileData,omitempty"`
		FunctionCall     *geminiFunctionCall     `json:"functionCall,omitempty"`
		FunctionResponse *geminiFunctionResponse `json:"functionResponse,omitempty"`
		ThoughtSignature string                  `json:"thoughtSignature,omitempty"`
	}
	geminiBlob struct {
		MIMEType string `json:"mimeType"`
		Data     string `json:"data"`
	}
	geminiFile struct {
		MIMEType string `json:"mimeType"`
		FileURI  string `json:"fileUri"`
	}
	geminiFunctionCall struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args,omitempty"`
	}
	geminiFunctionResponse struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	}
	geminiTool struct {
		FunctionDeclarations []geminiFunctionDeclaration `json:"functionDeclarations"`
	}
	geminiFunctionDeclaration struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	geminiToolConfig struct {
		FunctionCallingConfig geminiFunctionCallingConfig `json:"functionCallingConfig"`
	}
	geminiFunctionCallingConfig struct {
		Mode                 string   `json:"mode"`
		AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
	}
	geminiGenerationConfig struct {
		Temperature      json.RawMessage       `json:"temperature,omitempty"`
		TopP             json.RawMessage       `json:"topP,omitempty"`
		MaxOutputTokens  *int64                `json:"maxOutputTokens,omitempty"`
		StopSequences    []string              `json:"stopSequences,omitempty"`
		CandidateCount   *int64                `json:"candidateCount,omitempty"`
		Seed             *int64                `json:"seed,omitempty"`
		PresencePenalty  json.RawMessage       `json:"presencePenalty,omitempty"`
		FrequencyPenalty json.RawMessage       `json:"frequencyPenalty,omitempty"`
		ResponseMIMEType string                `json:"responseMimeType,omitempty"`
		ResponseSchema   json.RawMessage       `json:"responseSchema,omitempty"`
		ThinkingConfig   *geminiThinkingConfig `json:"thinkingConfig,omitempty"`
	}
	geminiThinkingConfig struct {
		ThinkingBudget int64 `json:"thinkingBudget"`
	}
)

// geminiEmbedCall is a translated embeddings request.
type geminiEmbedCall struct {
	body           []byte
	single, base64 bool
	inputs         int
	tokens         int64 // estimated: ceil(characters / 4)
}

// geminiEmbedBody translates an OpenAI embeddings request.
func geminiEmbedBody(req *Request) (geminiEmbedCall, error) {
	var in struct {
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     *int64          `json:"dimensions"`
	}
	if err := geminiDecode(req.Body, &in); err != nil {
		return geminiEmbedCall{}, err
	}
	var e geminiEmbedCall
	switch in.EncodingFormat {
	case "", "float":
	case "base64":
		e.base64 = true
	default:
		return e, geminiUnsupported("encoding_format " + strconv.Quote(in.EncodingFormat))
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
		return e, geminiUnsupported("token arrays as embeddings input")
	default:
		return e, geminiInvalid("input must be a string or a non-empty array of strings")
	}
	type embedRequest struct {
		Model                string        `json:"model"`
		Content              geminiContent `json:"content"`
		OutputDimensionality *int64        `json:"outputDimensionality,omitempty"`
	}
	reqs := make([]embedRequest, len(texts))
	chars := 0
	for i, t := range texts {
		reqs[i] = embedRequest{Model: "models/" + geminiModel(req.Model), Content: geminiContent{Parts: []geminiPart{{Text: t}}},
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
	e.body, err = marshalJSON(v)
	return e, err
}

// geminiDecode decodes a client's body, naming a field of the wrong type.
func geminiDecode(body []byte, v any) error {
	err := json.Unmarshal(body, v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		return geminiInvalid("%s has the wrong type (%s)", te.Field, te.Value)
	}
	return geminiInvalid("invalid request body: %v", err)
}

// geminiMIMEByExt types a file URL by its extension; fileData needs a
// MIME type and the gateway does not fetch the URL to find out.
var geminiMIMEByExt = map[string]string{
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif",
	".webp": "image/webp", ".heic": "image/heic", ".heif": "image/heif", ".pdf": "application/pdf",
	".mp3": "audio/mp3", ".wav": "audio/wav", ".mp4": "video/mp4",
}

// geminiGuessMIME types an image URL, defaulting to JPEG.
func geminiGuessMIME(rawURL string) string {
	p := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		p = u.Path
	}
	if m, ok := geminiMIMEByExt[strings.ToLower(path.Ext(p))]; ok {
		return m
	}
	return "image/jpeg"
}
