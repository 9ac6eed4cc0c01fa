package providertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/jsonstr"
)

// The OpenAI wire format: chat completions, legacy completions and
// embeddings, plain and streamed (the Responses API is in responses.go).

type openAIKind uint8

const (
	openAIChat openAIKind = iota
	openAICompletion
	openAIEmbedding
)

// openAIRoutes registers the OpenAI paths, with and without /v1.
func (s *Server) openAIRoutes() {
	s.pool.New = func() any { return new(openAIExchange) }
	for _, prefix := range []string{"", "/v1"} {
		s.routes[prefix+"/chat/completions"] = s.openAIEndpoint(openAIChat)
		s.routes[prefix+"/completions"] = s.openAIEndpoint(openAICompletion)
		s.routes[prefix+"/embeddings"] = s.openAIEndpoint(openAIEmbedding)
		s.routes[prefix+"/responses"] = s.serveResponses
	}
}

func (s *Server) openAIEndpoint(kind openAIKind) endpoint {
	return func(ctx *fasthttp.RequestCtx, st Step) { s.serveOpenAI(ctx, kind, st) }
}

// openAIRequest holds the fields of the three request kinds the mock
// reads; everything else in the body is ignored.
type openAIRequest struct {
	Model         string          `json:"model"`
	Messages      []openAIMessage `json:"messages"`
	Prompt        json.RawMessage `json:"prompt"`
	Input         json.RawMessage `json:"input"`
	Stream        bool            `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	EncodingFormat string `json:"encoding_format"`
	// The maximum output (0: none); ints, not pointers, so that decoding
	// a request allocates nothing for them.
	MaxTokens           int `json:"max_tokens"`
	MaxCompletionTokens int `json:"max_completion_tokens"`
	// Tools and ToolChoice: a choice that forces a call ("required" or a
	// named function) is answered by calling a tool.
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
	// ResponseFormat json_object or json_schema: the answer is JSON.
	ResponseFormat struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

// forcedTool is the tool a chat request forces a call of: the first tool
// for tool_choice "required", the named one for a named function; "" when
// no call is forced or the last message is already a tool result.
func (req *openAIRequest) forcedTool() string {
	if len(req.Tools) == 0 || len(req.Messages) == 0 || req.Messages[len(req.Messages)-1].Role == "tool" {
		return ""
	}
	choice := bytes.TrimSpace(req.ToolChoice)
	if string(choice) == `"required"` {
		return req.Tools[0].Function.Name
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if len(choice) > 0 && choice[0] == '{' && json.Unmarshal(choice, &named) == nil && named.Type == "function" {
		return named.Function.Name
	}
	return ""
}

type openAIMessage struct {
	Role    string        `json:"role"`
	Content openAIContent `json:"content"`
}

// openAIContent is a message's text: the string content, or the text parts
// of an array content joined by spaces (images and audio parts ignored).
type openAIContent string

// UnmarshalJSON accepts a string, an array of content parts or null.
func (c *openAIContent) UnmarshalJSON(b []byte) error {
	switch b[0] {
	case 'n':
		*c = ""
		return nil
	case '"':
		// The outer decoder has validated b; without escapes it is the text.
		if bytes.IndexByte(b, '\\') < 0 {
			*c = openAIContent(b[1 : len(b)-1])
			return nil
		}
		var s string
		err := json.Unmarshal(b, &s)
		*c = openAIContent(s)
		return err
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var sb strings.Builder
		for _, p := range parts {
			if p.Type != "text" {
				continue
			}
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(p.Text)
		}
		*c = openAIContent(sb.String())
		return nil
	}
	return errors.New("content must be a string, an array of content parts or null")
}

// openAIExchange is the per-request scratch space, pooled on the Server:
// the decoded request and the response buffer.
type openAIExchange struct {
	req openAIRequest
	out []byte
}

// maxPooledBuffer keeps a huge response's buffer out of the pool.
const maxPooledBuffer = 64 << 10

func (s *Server) acquire() *openAIExchange {
	x := s.pool.Get().(*openAIExchange)
	// Zero the request but keep its slices' memory. encoding/json does not
	// zero reused slice elements, so the old messages are cleared.
	msgs := x.req.Messages[:cap(x.req.Messages)]
	clear(msgs)
	x.req = openAIRequest{Messages: msgs[:0], Prompt: x.req.Prompt[:0], Input: x.req.Input[:0], ToolChoice: x.req.ToolChoice[:0]}
	x.out = x.out[:0]
	return x
}

func (s *Server) release(x *openAIExchange) {
	if cap(x.out) <= maxPooledBuffer {
		s.pool.Put(x)
	}
}

func (s *Server) serveOpenAI(ctx *fasthttp.RequestCtx, kind openAIKind, st Step) {
	if !ctx.IsPost() {
		writeOpenAIError(ctx, fasthttp.StatusMethodNotAllowed, "Method not allowed; use POST", "invalid_request_error", "")
		return
	}
	if st.Status >= 400 || st.Body != "" {
		openAIFail(ctx, st)
		return
	}
	if !hasBearer(ctx.Request.Header.Peek("Authorization")) {
		writeOpenAIError(ctx, fasthttp.StatusUnauthorized,
			"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
			"invalid_request_error", "invalid_api_key")
		return
	}
	x := s.acquire()
	defer s.release(x)
	req := &x.req
	if err := json.Unmarshal(ctx.PostBody(), req); err != nil {
		writeOpenAIError(ctx, fasthttp.StatusBadRequest,
			"We could not parse the JSON body of your request (mock: "+err.Error()+").", "invalid_request_error", "")
		return
	}
	if req.Model == "" {
		writeOpenAIError(ctx, fasthttp.StatusBadRequest, "you must provide a model parameter", "invalid_request_error", "")
		return
	}
	model, dirs, err := parseModel(req.Model)
	if err != nil {
		writeOpenAIError(ctx, fasthttp.StatusBadRequest, err.Error(), "invalid_request_error", "invalid_mock_directive")
		return
	}
	dirs.apply(&st)
	if st.Status >= 400 {
		openAIFail(ctx, st)
		return
	}
	r := openAIReply{
		kind: kind, model: model, seq: s.seq.Add(1), created: time.Now().Unix(),
		stream:       req.Stream && kind != openAIEmbedding,
		includeUsage: req.StreamOptions.IncludeUsage && !st.NoUsage,
		noUsage:      st.NoUsage,
		detail:       st.Detail,
	}
	switch kind {
	case openAIChat:
		if len(req.Messages) == 0 {
			writeOpenAIError(ctx, fasthttp.StatusBadRequest, "'messages' must contain at least one message", "invalid_request_error", "")
			return
		}
		for i := range req.Messages {
			r.prompt += words(string(req.Messages[i].Content))
			if req.Messages[i].Role == "user" {
				r.text = string(req.Messages[i].Content)
			}
		}
		r.tool = req.forcedTool()
		r.json = req.ResponseFormat.Type == "json_object" || req.ResponseFormat.Type == "json_schema"
	case openAICompletion, openAIEmbedding:
		raw, name := req.Prompt, "prompt"
		if kind == openAIEmbedding {
			raw, name = req.Input, "input"
		}
		texts, err := openAITexts(raw)
		if err != nil || (kind == openAIEmbedding && len(texts) == 0) {
			writeOpenAIError(ctx, fasthttp.StatusBadRequest,
				"'"+name+"' must be a string, an array of strings, an array of tokens or an array of token arrays", "invalid_request_error", "")
			return
		}
		for _, t := range texts {
			r.prompt += words(t)
		}
		if len(texts) > 0 {
			r.text = texts[len(texts)-1]
		}
		r.texts = texts
		r.base64 = req.EncodingFormat == "base64"
	}
	r.prompt = max(r.prompt, 1)
	r.text = echo(r.text)
	r.completion = 3 + words(r.text)
	if st.AnswerTokens > 0 && kind != openAIEmbedding && r.tool == "" {
		limit := req.MaxCompletionTokens
		if limit == 0 {
			limit = req.MaxTokens
		}
		r.text, r.completion, r.cut = longAnswer(st, limit)
	}
	if st.PromptTokens > 0 {
		r.prompt = st.PromptTokens
	}

	s.reply(ctx, st, r.stream, r.streamBody, func() []byte { x.out = r.appendBody(x.out); return x.out })
}

// openAITexts reads a prompt or an embeddings input: a string, an array of
// strings, an array of tokens or an array of token arrays. A token array
// becomes its numbers joined by spaces, so its words are its tokens.
func openAITexts(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return []string{s}, err
	}
	var strs []string
	if json.Unmarshal(raw, &strs) == nil {
		return strs, nil
	}
	var tokens []int64
	if json.Unmarshal(raw, &tokens) == nil {
		return []string{joinTokens(tokens)}, nil
	}
	var arrays [][]int64
	if err := json.Unmarshal(raw, &arrays); err != nil {
		return nil, err
	}
	texts := make([]string, len(arrays))
	for i, a := range arrays {
		texts[i] = joinTokens(a)
	}
	return texts, nil
}

func joinTokens(tokens []int64) string {
	var b []byte
	for i, t := range tokens {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, t, 10)
	}
	return string(b)
}

// openAIReply is what a request is answered with, before encoding.
type openAIReply struct {
	kind               openAIKind
	model              string
	seq                uint64
	created            int64
	text               string   // the echoed text; the answer is answerPrefix + text
	texts              []string // embeddings: one vector each
	prompt, completion int
	stream, base64     bool
	includeUsage       bool // a stream ends with a usage chunk
	noUsage            bool
	detail             UsageDetail
	cut                bool   // the answer stopped at the request's max tokens
	tool               string // chat: the answer calls this tool instead of answering text
	json               bool   // chat: the answer is jsonAnswer
}

// finish is the finish_reason of the answer.
func (r *openAIReply) finish() string {
	switch {
	case r.tool != "":
		return "tool_calls"
	case r.cut:
		return "length"
	}
	return "stop"
}

// appendToolCallID appends the id of the mock's tool call.
func (r *openAIReply) appendToolCallID(b []byte) []byte {
	b = append(b, `"call_mock_`...)
	b = strconv.AppendUint(b, r.seq, 10)
	return append(b, '"')
}

// appendHead appends the fields every OpenAI object starts with, up to and
// including the comma before "choices" (or "data").
func (r *openAIReply) appendHead(b []byte, object string) []byte {
	switch r.kind {
	case openAIChat:
		b = append(b, `{"id":"chatcmpl-mock-`...)
	case openAICompletion:
		b = append(b, `{"id":"cmpl-mock-`...)
	}
	b = strconv.AppendUint(b, r.seq, 10)
	b = append(b, `","object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, r.created, 10)
	b = append(b, `,"model":`...)
	b = jsonstr.Append(b, r.model)
	return append(b, ',')
}

func (r *openAIReply) appendUsage(b []byte) []byte {
	d := r.detail
	prompt, completion := d.prompt(r.prompt), r.completion+d.Reasoning
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	if r.kind != openAIEmbedding {
		b = append(b, `,"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(completion), 10)
	}
	b = append(b, `,"total_tokens":`...)
	total := prompt
	if r.kind != openAIEmbedding {
		total += completion
	}
	b = strconv.AppendInt(b, int64(total), 10)
	if r.kind == openAIChat {
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(d.CacheRead), 10)
		if d.CacheWrite > 0 {
			b = append(b, `,"cache_write_tokens":`...)
			b = strconv.AppendInt(b, int64(d.CacheWrite), 10)
		}
		b = append(b, '}')
		if d.Reasoning > 0 {
			b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
			b = strconv.AppendInt(b, int64(d.Reasoning), 10)
			b = append(b, '}')
		}
	}
	return append(b, '}')
}

// appendBody appends the non-streamed response.
func (r *openAIReply) appendBody(b []byte) []byte {
	switch r.kind {
	case openAIChat:
		b = r.appendHead(b, "chat.completion")
		if r.tool != "" {
			b = append(b, `"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":`...)
			b = r.appendToolCallID(b)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = jsonstr.Append(b, r.tool)
			b = append(b, `,"arguments":`...)
			b = jsonstr.Append(b, toolArguments(r.text))
			b = append(b, `}}],"refusal":null},"logprobs":null,"finish_reason":"`...)
			b = append(b, r.finish()...)
			b = append(b, `"}]`...)
			break
		}
		if r.json {
			b = append(b, `"choices":[{"index":0,"message":{"role":"assistant","content":`...)
			b = jsonstr.Append(b, jsonAnswer(r.text))
		} else {
			b = append(b, `"choices":[{"index":0,"message":{"role":"assistant","content":"`+answerPrefix...)
			b = jsonstr.AppendEscaped(b, r.text)
			b = append(b, '"')
		}
		b = append(b, `,"refusal":null},"logprobs":null,"finish_reason":"`...)
		b = append(b, r.finish()...)
		b = append(b, `"}]`...)
	case openAICompletion:
		b = r.appendHead(b, "text_completion")
		b = append(b, `"choices":[{"text":"`+answerPrefix...)
		b = jsonstr.AppendEscaped(b, r.text)
		b = append(b, `","index":0,"logprobs":null,"finish_reason":"`...)
		b = append(b, r.finish()...)
		b = append(b, `"}]`...)
	case openAIEmbedding:
		b = append(b, `{"object":"list","data":[`...)
		for i, t := range r.texts {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"object":"embedding","index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"embedding":`...)
			b = appendEmbedding(b, embedding(t), r.base64)
			b = append(b, '}')
		}
		b = append(b, `],"model":`...)
		b = jsonstr.Append(b, r.model)
	}
	if !r.noUsage {
		b = append(b, ',')
		b = r.appendUsage(b)
	}
	return append(b, '}')
}

// streamBody builds the streamed response of a chat or completion: for chat a
// role chunk, then chunks content chunks, a finish chunk, the usage chunk
// when asked for, and [DONE].
func (r *openAIReply) streamBody(chunks int) *stream {
	if chunks <= 0 {
		chunks = defaultChunks
	}
	object := "chat.completion.chunk"
	if r.kind == openAICompletion {
		object = "text_completion"
	}
	head := r.appendHead(make([]byte, 0, 128), object)
	usageNull := ""
	if r.includeUsage {
		usageNull = `,"usage":null`
	}
	sm := &stream{contentType: "text/event-stream; charset=utf-8", buf: make([]byte, 0, (chunks+4)*(len(head)+96)+len(r.text))}
	event := func(choices string) {
		sm.buf = append(sm.buf, "data: "...)
		sm.buf = append(sm.buf, head...)
		sm.buf = append(sm.buf, choices...)
	}
	endEvent := func() {
		sm.buf = append(sm.buf, usageNull...)
		sm.buf = append(sm.buf, "}\n\n"...)
		sm.end()
	}
	if r.kind == openAIChat {
		event(`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`)
		endEvent()
	}
	if r.tool != "" {
		// The call's id and name first, then its arguments in pieces.
		event(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":`)
		sm.buf = r.appendToolCallID(sm.buf)
		sm.buf = append(sm.buf, `,"type":"function","function":{"name":`...)
		sm.buf = jsonstr.Append(sm.buf, r.tool)
		sm.buf = append(sm.buf, `,"arguments":""}}]},"logprobs":null,"finish_reason":null}]`...)
		endEvent()
	}
	content := answerPrefix + r.text
	switch {
	case r.tool != "":
		content = toolArguments(r.text)
	case r.json:
		content = jsonAnswer(r.text)
	}
	sm.first = len(sm.ends)
	pieces(content, chunks, func(p string) {
		switch {
		case r.tool != "":
			event(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":`)
			sm.buf = jsonstr.Append(sm.buf, p)
			sm.buf = append(sm.buf, `}}]},"logprobs":null,"finish_reason":null}]`...)
		case r.kind == openAIChat:
			event(`"choices":[{"index":0,"delta":{"content":`)
			sm.buf = jsonstr.Append(sm.buf, p)
			sm.buf = append(sm.buf, `},"logprobs":null,"finish_reason":null}]`...)
		default:
			event(`"choices":[{"text":`)
			sm.buf = jsonstr.Append(sm.buf, p)
			sm.buf = append(sm.buf, `,"index":0,"logprobs":null,"finish_reason":null}]`...)
		}
		endEvent()
	})
	sm.last = len(sm.ends)
	if r.kind == openAIChat {
		event(`"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"` + r.finish() + `"}]`)
	} else {
		event(`"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"` + r.finish() + `"}]`)
	}
	endEvent()
	if r.includeUsage {
		event(`"choices":[],`)
		sm.buf = r.appendUsage(sm.buf)
		sm.buf = append(sm.buf, "}\n\n"...)
		sm.end()
	}
	sm.buf = append(sm.buf, "data: [DONE]\n\n"...)
	sm.end()
	return sm
}

// hasBearer reports whether an Authorization value is "Bearer <key>".
func hasBearer(v []byte) bool {
	const p = "bearer "
	if len(v) <= len(p) {
		return false
	}
	for i := range len(p) {
		c := v[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != p[i] {
			return false
		}
	}
	return len(bytes.TrimSpace(v[len(p):])) > 0
}

// openAIFail answers a Step's error status or raw body, after its latency.
func openAIFail(ctx *fasthttp.RequestCtx, st Step) {
	if !sleep(ctx, st.Latency) {
		return
	}
	if st.ResetAfter > 0 && st.Body == "" {
		abort(ctx)
		return
	}
	if st.RetryAfter != "" {
		ctx.Response.Header.Set("Retry-After", st.RetryAfter)
	}
	status := st.Status
	if status == 0 {
		status = fasthttp.StatusOK
	}
	if st.Body != "" {
		ctx.SetStatusCode(status)
		setRawBody(ctx, st.Body)
		return
	}
	msg, typ, code := openAIErrorFor(status)
	writeOpenAIError(ctx, status, msg, typ, code)
}

// abort closes the connection without answering.
func abort(ctx *fasthttp.RequestCtx) {
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(net.Conn) {}) // fasthttp closes the connection when this returns
}

// openAIErrorFor is the error OpenAI answers with a status, as near as the
// mock needs.
func openAIErrorFor(status int) (msg, typ, code string) {
	switch status {
	case 400:
		return "Invalid request (mock).", "invalid_request_error", ""
	case 401:
		return "Incorrect API key provided (mock).", "invalid_request_error", "invalid_api_key"
	case 403:
		return "You are not allowed to sample from this model (mock).", "invalid_request_error", "permission_denied"
	case 404:
		return "The model does not exist or you do not have access to it (mock).", "invalid_request_error", "model_not_found"
	case 408:
		return "Request timed out (mock).", "timeout", ""
	case 429:
		return "Rate limit reached for requests (mock).", "requests", "rate_limit_exceeded"
	case 500:
		return "The server had an error while processing your request (mock).", "server_error", ""
	case 502, 503, 504:
		return "The server is overloaded or not ready yet (mock).", "server_error", ""
	}
	if status >= 500 {
		return "Upstream error " + strconv.Itoa(status) + " (mock).", "server_error", ""
	}
	return "Request failed with status " + strconv.Itoa(status) + " (mock).", "invalid_request_error", ""
}

// writeOpenAIError answers an error in OpenAI's shape:
// {"error":{"message":…,"type":…,"param":null,"code":…}}, code null when "".
func writeOpenAIError(ctx *fasthttp.RequestCtx, status int, msg, typ, code string) {
	b := make([]byte, 0, 96+len(msg))
	b = append(b, `{"error":{"message":`...)
	b = jsonstr.Append(b, msg)
	b = append(b, `,"type":`...)
	b = jsonstr.Append(b, typ)
	b = append(b, `,"param":null,"code":`...)
	if code == "" {
		b = append(b, "null"...)
	} else {
		b = jsonstr.Append(b, code)
	}
	b = append(b, "}}"...)
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.Response.SetBodyRaw(b)
}
