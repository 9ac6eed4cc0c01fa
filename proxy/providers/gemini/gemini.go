// Package gemini is the codec of the Gemini API (provider "google"):
// generateContent and streamGenerateContent for chat, embedContent and
// batchEmbedContents for embeddings, translated from and to the OpenAI
// schema.
package gemini

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/proxy/providers"
)

// id is the catalog id of the Gemini API.
const id = "google"

// Gemini is the adapter of the Gemini API (provider "google"): chat
// completions become generateContent and streamGenerateContent?alt=sse,
// embeddings become embedContent and batchEmbedContents. The key goes in
// the x-goog-api-key header, never in the URL.
//
// Requests are translated with encoding/json and typed structs: nothing
// of the client's body can pass through as it is, and a translating
// adapter that reads like the two wire formats is worth more than the
// microseconds a hand-rolled encoder would save.
type Gemini struct {
	c              *providers.Client
	defaultBaseURL string
	now            func() time.Time // "created" of answers; tests fix it
}

var (
	_ providers.Codec     = (*Gemini)(nil)
	_ providers.Provider  = (*Gemini)(nil)
	_ providers.Embedder  = (*Gemini)(nil)
	_ providers.Validator = (*Gemini)(nil)
)

// New returns the Gemini adapter, which sends its calls through c.
func New(c *providers.Client) providers.Provider {
	p, _ := catalog.LookupProvider(id)
	return &Gemini{c: c, defaultBaseURL: p.DefaultBaseURL, now: time.Now}
}

// Name returns "google".
func (g *Gemini) Name() string { return id }

// Validate refuses what the Gemini API cannot serve, before any attempt.
// It runs the same translation as the call itself.
func (g *Gemini) Validate(req *providers.Request) error {
	var err error
	switch req.Op {
	case llm.OpChat:
		_, err = chatBody(req)
	case llm.OpEmbeddings:
		_, err = embedBody(req)
	default:
		err = unsupported("legacy completions")
	}
	return err
}

// Chat sends generateContent and translates the answer.
func (g *Gemini) Chat(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return providers.Call(ctx, g.c, g, req, llm.OpChat)
}

// ChatStream sends streamGenerateContent?alt=sse. Without alt=sse Gemini
// answers a JSON array, which the transport refuses as no stream.
func (g *Gemini) ChatStream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return providers.OpenStream(ctx, g.c, g, req, llm.OpChat)
}

// Embed sends embedContent for one string and batchEmbedContents for a
// list. Gemini reports no tokens for embeddings, so the usage is an
// estimate of four characters a token.
func (g *Gemini) Embed(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return providers.Call(ctx, g.c, g, req, llm.OpEmbeddings)
}

// EncodeRequest translates a chat request into generateContent (or
// streamGenerateContent?alt=sse), and an embeddings request into
// embedContent or batchEmbedContents, whose plan is the State.
func (g *Gemini) EncodeRequest(_ context.Context, req *providers.Request, op llm.Operation, stream bool) (providers.Encoded, error) {
	if op == llm.OpEmbeddings {
		e, err := embedBody(req)
		if err != nil {
			return providers.Encoded{}, err
		}
		method := "batchEmbedContents"
		if e.single {
			method = "embedContent"
		}
		hr, err := g.httpRequest(req, method, e.body)
		return providers.Encoded{HTTP: hr, State: &e}, err
	}
	body, err := chatBody(req)
	if err != nil {
		return providers.Encoded{}, err
	}
	method := "generateContent"
	if stream {
		method = "streamGenerateContent?alt=sse"
	}
	hr, err := g.httpRequest(req, method, body)
	return providers.Encoded{HTTP: hr}, err
}

// DecodeResponse translates a generateContent answer, or an embeddings
// answer when the call was one.
func (g *Gemini) DecodeResponse(body []byte, req *providers.Request, state any) (*providers.Response, error) {
	if e, ok := state.(*embedCall); ok {
		return g.embedAnswer(body, req, e)
	}
	return g.chatAnswer(body, req)
}

// DecodeStream translates a streamGenerateContent event stream.
func (g *Gemini) DecodeStream(sr *providers.StreamResponse, req *providers.Request, _ any) (providers.Stream, error) {
	s := newGeminiStream(sr, req, g.now())
	s.resp = sr
	return s, nil
}

// DecodeError finishes an *Error of the client: Gemini puts the key into
// some messages as a "key=" query parameter, and says how long to wait in
// the message of a 429 rather than in Retry-After.
func (g *Gemini) DecodeError(err error, _ *providers.Request) error {
	if e := providers.AsError(err); e != nil {
		e.Message = scrubKeyParam(e.Message)
		if e.Status == http.StatusTooManyRequests && e.RetryAfter == 0 {
			e.RetryAfter = retryHint(e.Message)
		}
	}
	return err
}

// httpRequest describes the call of method on req's model. The base URL
// is the SDK's ("https://generativelanguage.googleapis.com"); one that
// already ends in an API version (".../v1beta") keeps it.
func (g *Gemini) httpRequest(req *providers.Request, method string, body []byte) (providers.HTTPRequest, error) {
	base := strings.TrimRight(req.Cred.BaseURL, "/")
	if base == "" {
		base = g.defaultBaseURL
	}
	if base == "" {
		return providers.HTTPRequest{}, errors.New("provider google has no base URL configured")
	}
	p := "v1beta/models/"
	if strings.HasSuffix(base, "/v1beta") || strings.HasSuffix(base, "/v1") {
		p = "models/"
	}
	return providers.HTTPRequest{
		BaseURL:   base,
		Path:      p + url.PathEscape(model(req.Model)) + ":" + method,
		Key:       req.Cred.Key,
		KeyHeader: "x-goog-api-key",
		Header:    req.Header,
		// The trace context, sent as the traceparent header.
		Traceparent: req.Traceparent,
		Body:        body,
		Deadline:    req.Deadline,
	}, nil
}

// model is the model id without the "models/" of resource names.
func model(m string) string { return strings.TrimPrefix(m, "models/") }

// unsupported is the 400 for a feature the Gemini API lacks.
func unsupported(feature string) *providers.Error {
	return providers.Refusal("provider google (Gemini API) does not support " + feature)
}

// invalid is the 400 for a request that cannot be translated.
func invalid(format string, args ...any) *providers.Error {
	return &providers.Error{Status: http.StatusBadRequest, Message: "provider google: " + fmt.Sprintf(format, args...)}
}

// scrubKeyParam redacts the value of every "key=" in msg.
func scrubKeyParam(msg string) string {
	var b strings.Builder
	for {
		i := indexFold(msg, "key=")
		if i < 0 {
			break
		}
		b.WriteString(msg[:i+4])
		msg = msg[i+4:]
		if end := providers.TokenEnd([]byte(msg), 0); end > 0 {
			b.WriteString(providers.Redacted)
			msg = msg[end:]
		}
	}
	if b.Len() == 0 {
		return msg
	}
	b.WriteString(msg)
	return b.String()
}

// retryHint reads "Please retry in 13.4s." from a 429 message.
func retryHint(msg string) time.Duration {
	i := indexFold(msg, "retry in ")
	if i < 0 {
		return 0
	}
	rest := msg[i+len("retry in "):]
	n := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if n <= 0 {
		return 0
	}
	v, err := strconv.ParseFloat(rest[:n], 64)
	if err != nil {
		return 0
	}
	unit := time.Second
	if strings.HasPrefix(rest[n:], "ms") {
		unit = time.Millisecond
	} else if !strings.HasPrefix(rest[n:], "s") {
		return 0
	}
	return min(time.Duration(v*float64(unit)), providers.MaxRetryAfter)
}

// indexFold is strings.Index ignoring the case of sub, which is
// ASCII. (Searching strings.ToLower(s) would give indexes into a string
// whose length may differ from s.)
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// geminiError is Gemini's error object: {"code","message","status"}.
type geminiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

// asError is the *Error of an error object inside a 2xx answer or stream:
// its code when that is an HTTP error status, else 502.
func (e *geminiError) asError(key secret.Value) *providers.Error {
	status := e.Code
	if status < 400 || status > 599 {
		status = http.StatusBadGateway
	}
	err := providers.ReportedError(status, e.Message, key)
	err.Message = scrubKeyParam(err.Message)
	return err
}

// The Gemini answers, as far as the adapter reads them.
type (
	// response is a GenerateContentResponse, also each event of a
	// stream.
	response struct {
		Candidates     []candidate `json:"candidates"`
		PromptFeedback *struct {
			BlockReason string `json:"blockReason"`
		} `json:"promptFeedback"`
		UsageMetadata *usage       `json:"usageMetadata"`
		ModelVersion  string       `json:"modelVersion"`
		ResponseID    string       `json:"responseId"`
		Error         *geminiError `json:"error"`
	}
	candidate struct {
		Content      content `json:"content"`
		FinishReason string  `json:"finishReason"`
		Index        *int    `json:"index"`
	}
	usage struct {
		PromptTokenCount        int64  `json:"promptTokenCount"`
		CandidatesTokenCount    int64  `json:"candidatesTokenCount"`
		ThoughtsTokenCount      int64  `json:"thoughtsTokenCount"`
		ToolUsePromptTokenCount int64  `json:"toolUsePromptTokenCount"`
		CachedContentTokenCount int64  `json:"cachedContentTokenCount"`
		TotalTokenCount         *int64 `json:"totalTokenCount"`
	}
)

// Usage counts tool-use prompts (search results) as prompt tokens and
// thoughts as completion tokens, as Google bills them (thoughtsTokenCount
// is not part of candidatesTokenCount), and the thoughts as reasoning
// tokens too. promptTokenCount includes cachedContentTokenCount.
func (u *usage) usage() llm.Usage {
	out := llm.Usage{
		Present:          true,
		PromptTokens:     max(u.PromptTokenCount, 0) + max(u.ToolUsePromptTokenCount, 0),
		CompletionTokens: max(u.CandidatesTokenCount, 0) + max(u.ThoughtsTokenCount, 0),
		CachedTokens:     max(u.CachedContentTokenCount, 0),
		ReasoningTokens:  max(u.ThoughtsTokenCount, 0),
	}
	out.TotalTokens = out.PromptTokens + out.CompletionTokens
	if u.TotalTokenCount != nil {
		out.TotalTokens = max(*u.TotalTokenCount, 0)
	}
	return out
}

// geminiFinish maps a finishReason; sawCall turns STOP into tool_calls.
func geminiFinish(reason string, sawCall bool) string {
	switch reason {
	case "MAX_TOKENS":
		return "length"
	case "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY":
		return "content_filter"
	}
	if sawCall {
		return "tool_calls"
	}
	return "stop"
}

// toolCall is the tool call of a functionCall part, numbered n
// ("call_<n>") within the answer, with the part's thought signature.
func toolCall(p *part, n int) (llm.ToolCall, error) {
	tc := llm.ToolCall{ID: "call_" + strconv.Itoa(n), Type: "function", Name: p.FunctionCall.Name, Signature: p.ThoughtSignature}
	args := bytes.TrimSpace(p.FunctionCall.Args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, args); err != nil {
		return tc, err
	}
	tc.Arguments = b.String()
	return tc, nil
}

// text joins the text parts of a candidate, leaving out thoughts.
func text(parts []part) (string, bool) {
	var b strings.Builder
	found := false
	for i := range parts {
		if parts[i].Thought || parts[i].FunctionCall != nil || parts[i].Text == "" {
			continue
		}
		b.WriteString(parts[i].Text)
		found = true
	}
	return b.String(), found
}

// chatAnswer translates a GenerateContentResponse into the neutral
// answer, and that into a chat.completion.
func (g *Gemini) chatAnswer(body []byte, req *providers.Request) (*providers.Response, error) {
	var in response
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
	}
	if in.Error != nil {
		return nil, in.Error.asError(req.Cred.Key)
	}
	out := llm.Response{ID: completionID(in.ResponseID), Created: g.now().Unix(), Model: cmp.Or(in.ModelVersion, req.Model)}
	size, calls := 256, 0
	for i := range in.Candidates {
		c := &in.Candidates[i]
		msg := llm.Message{Role: llm.RoleAssistant}
		for j := range c.Content.Parts {
			if p := &c.Content.Parts[j]; p.FunctionCall != nil {
				calls++
				tc, err := toolCall(p, calls)
				if err != nil {
					return nil, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
				}
				msg.ToolCalls = append(msg.ToolCalls, tc)
				size += 128 + len(tc.Arguments) + len(tc.Signature)
			}
		}
		finish := geminiFinish(c.FinishReason, len(msg.ToolCalls) > 0)
		// The content is null beside tool calls without text, and for a
		// filtered answer that has none.
		if text, ok := text(c.Content.Parts); ok || len(msg.ToolCalls) == 0 && finish != "content_filter" {
			msg.Parts = []llm.Part{{Kind: llm.PartText, Text: text}}
			size += len(text)
		}
		out.Choices = append(out.Choices, llm.Choice{Index: index(c.Index, i), Message: msg, Finish: llm.FinishReason(finish)})
	}
	if len(out.Choices) == 0 {
		if in.PromptFeedback == nil || in.PromptFeedback.BlockReason == "" {
			return nil, &providers.Error{Status: http.StatusBadGateway, Message: "upstream answered without candidates"}
		}
		// The prompt was blocked.
		out.Choices = append(out.Choices, llm.Choice{Message: llm.Message{Role: llm.RoleAssistant}, Finish: llm.FinishContentFilter})
	}
	var usage llm.Usage
	if in.UsageMetadata != nil {
		usage = in.UsageMetadata.usage()
		out.Usage = usage
	}
	b := providers.AppendOpenAIResponse(make([]byte, 0, size), &out, providers.OpenAIOptions{ReasoningDetails: true})
	return &providers.Response{Body: b, Usage: usage, Model: in.ModelVersion}, nil
}

// index is a candidate's index, or its position when it has none.
func index(index *int, pos int) int {
	if index == nil {
		return pos
	}
	return *index
}

// completionID names an answer after Gemini's responseId, or a
// random one when there is none.
func completionID(responseID string) string {
	if responseID != "" {
		return "chatcmpl-" + responseID
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "chatcmpl-" + hex.EncodeToString(b[:])
}

// embedAnswer translates an embedContent or batchEmbedContents answer
// to the embeddings call e.
func (g *Gemini) embedAnswer(body []byte, req *providers.Request, e *embedCall) (*providers.Response, error) {
	var in struct {
		Embedding  *embedding   `json:"embedding"`
		Embeddings []embedding  `json:"embeddings"`
		Error      *geminiError `json:"error"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
	}
	if in.Error != nil {
		return nil, in.Error.asError(req.Cred.Key)
	}
	if in.Embedding != nil {
		in.Embeddings = append(in.Embeddings, *in.Embedding)
	}
	if len(in.Embeddings) != e.inputs {
		return nil, &providers.Error{Status: http.StatusBadGateway,
			Message: fmt.Sprintf("upstream answered %d embeddings for %d inputs", len(in.Embeddings), e.inputs)}
	}
	vectors := make([]any, len(in.Embeddings))
	for i, v := range in.Embeddings {
		vectors[i] = v.Values
		if e.base64 {
			vectors[i] = providers.Base64Floats(v.Values)
		}
	}
	body, err := providers.EmbeddingsAnswer(req.Model, vectors, e.tokens)
	if err != nil {
		return nil, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
	}
	return &providers.Response{Body: body, Model: req.Model,
		Usage: llm.Usage{PromptTokens: e.tokens, TotalTokens: e.tokens, Estimated: true}}, nil
}

type embedding struct {
	Values []float64 `json:"values"`
}
