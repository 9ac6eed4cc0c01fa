package providertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/jsonstr"
)

// The Anthropic Messages API wire format: POST /v1/messages, plain and
// streamed.
//
// A request needs an x-api-key header (else 401) and an anthropic-version
// header (else 400), a model, max_tokens and at least one message; errors
// have Anthropic's shape {"type":"error","error":{"type","message"}}. The
// answer is the same as the OpenAI format's, "Hello from mock: " and the
// text of the last user message that has text, in one text block with stop_reason
// "end_turn", and usage {input_tokens, output_tokens,
// cache_creation_input_tokens, cache_read_input_tokens} counted in
// words (system prompt included; the cache counts as caching.go says:
// cache_control breakpoints on tools, system and content blocks). When
// the echoed text holds one of the request's stop_sequences, the answer
// stops before it with stop_reason "stop_sequence" and that
// stop_sequence. When the request has tools, tool_choice
// is not "none" and the last message is not a tool result, the answer is
// instead one tool_use block calling the first tool with
// {"text":<the echoed text>}, with stop_reason "tool_use". Otherwise, with
// output_config.format json_schema (structured outputs), the text is JSON:
// {"text":"Hello from mock: <the echoed text>"}.
//
// With "stream": true the answer is the full event sequence:
// message_start, content_block_start, ping, the block's deltas (text_delta
// or input_json_delta) in Chunks pieces, content_block_stop,
// message_delta (stop_reason and output_tokens) and message_stop. Steps
// and model-name directives work as for the OpenAI format; a 529 status
// answers overloaded_error.

// anthropicRoutes registers the paths of the Anthropic Messages API (/v1/messages) wire format.
func (s *Server) anthropicRoutes() {
	s.routes["/v1/messages"] = s.serveAnthropic
	s.routes["/v1/messages/count_tokens"] = s.serveAnthropicCount
}

// serveAnthropicCount answers a token count, {"input_tokens": n}: the
// words of the system prompt and the messages, as the answers count them.
func (s *Server) serveAnthropicCount(ctx *fasthttp.RequestCtx, st Step) {
	if st.Status >= 400 || st.Body != "" {
		anthropicFail(ctx, st)
		return
	}
	if len(bytes.TrimSpace(ctx.Request.Header.Peek("x-api-key"))) == 0 {
		writeAnthropicError(ctx, fasthttp.StatusUnauthorized, "x-api-key header is required")
		return
	}
	var req anthropicRequest
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		writeAnthropicError(ctx, fasthttp.StatusBadRequest, "invalid JSON body (mock: "+err.Error()+")")
		return
	}
	if req.Model == "" || len(req.Messages) == 0 {
		writeAnthropicError(ctx, fasthttp.StatusBadRequest, "model and messages are required")
		return
	}
	n := words(req.System.text)
	for _, m := range req.Messages {
		n += words(m.Content.text)
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(strconv.AppendInt([]byte(`{"input_tokens":`), int64(max(n, 1)), 10))
	ctx.Response.AppendBodyString("}")
}

// anthropicRequest is the part of a Messages request the mock reads.
type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens *int               `json:"max_tokens"`
	System    anthropicContent   `json:"system"`
	Messages  []anthropicMessage `json:"messages"`
	Stream    bool               `json:"stream"`
	Tools     []struct {
		Name         string          `json:"name"`
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"tools"`
	StopSequences []string `json:"stop_sequences"`
	ToolChoice    struct {
		Type string `json:"type"`
	} `json:"tool_choice"`
	// OutputConfig.Format json_schema (structured outputs): the text is JSON.
	OutputConfig struct {
		Format struct {
			Type string `json:"type"`
		} `json:"format"`
	} `json:"output_config"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content anthropicContent `json:"content"`
}

// anthropicContent is a string content or the blocks of an array
// content, of which the mock reads texts and whether one is a tool result.
type anthropicContent struct {
	text       string
	toolResult bool
	// blocks are the texts in order (a tool result's empty), each with
	// whether it has a cache_control (caching.go).
	blocks []cachedText
}

// cachedText is a text of a prompt and whether a cache breakpoint
// follows it.
type cachedText struct {
	text   string
	cached bool
}

// UnmarshalJSON accepts a string or an array of content blocks.
func (c *anthropicContent) UnmarshalJSON(b []byte) error {
	*c = anthropicContent{}
	switch b[0] {
	case 'n':
		return nil
	case '"':
		err := json.Unmarshal(b, &c.text)
		c.blocks = []cachedText{{text: c.text}}
		return err
	case '[':
		var blocks []struct {
			Type         string          `json:"type"`
			Text         string          `json:"text"`
			CacheControl json.RawMessage `json:"cache_control"`
		}
		if err := json.Unmarshal(b, &blocks); err != nil {
			return err
		}
		var texts []string
		for _, bl := range blocks {
			c.blocks = append(c.blocks, cachedText{text: bl.Text, cached: bl.CacheControl != nil})
			switch bl.Type {
			case "text":
				texts = append(texts, bl.Text)
			case "tool_result":
				c.toolResult = true
			}
		}
		c.text = strings.Join(texts, " ")
		return nil
	}
	return errors.New("content must be a string or an array of content blocks")
}

// anthropicReply is what a request is answered with, before encoding.
type anthropicReply struct {
	id, model, text    string
	tool               string // the tool called, "" for a text answer
	json               bool   // the text is jsonAnswer
	prompt, completion int
	// read and written are the prompt tokens read from and written to
	// the prompt cache (caching.go), part of prompt.
	read, written int
	// stopSequence is the stop sequence the answer stopped at.
	stopSequence string
	noUsage      bool
	// detail adds scripted cache and reasoning counts (Step.Detail) to
	// what the prompt cache gives.
	detail UsageDetail
	cut    bool // the answer stopped at max_tokens
}

func (s *Server) serveAnthropic(ctx *fasthttp.RequestCtx, st Step) {
	if !ctx.IsPost() {
		writeAnthropicError(ctx, fasthttp.StatusMethodNotAllowed, "Method not allowed; use POST")
		return
	}
	if st.Status >= 400 || st.Body != "" {
		anthropicFail(ctx, st)
		return
	}
	if len(bytes.TrimSpace(ctx.Request.Header.Peek("x-api-key"))) == 0 {
		writeAnthropicError(ctx, fasthttp.StatusUnauthorized, "x-api-key header is required")
		return
	}
	if len(ctx.Request.Header.Peek("anthropic-version")) == 0 {
		writeAnthropicError(ctx, fasthttp.StatusBadRequest, "anthropic-version: header is required")
		return
	}
	var req anthropicRequest
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		writeAnthropicError(ctx, fasthttp.StatusBadRequest, "invalid JSON body (mock: "+err.Error()+")")
		return
	}
	switch {
	case req.Model == "":
		writeAnthropicError(ctx, fasthttp.StatusBadRequest, "model: Field required")
		return
	case req.MaxTokens == nil:
		writeAnthropicError(ctx, fasthttp.StatusBadRequest, "max_tokens: Field required")
		return
	case *req.MaxTokens < 1:
		writeAnthropicError(ctx, fasthttp.StatusBadRequest, "max_tokens: must be greater than or equal to 1")
		return
	case len(req.Messages) == 0:
		writeAnthropicError(ctx, fasthttp.StatusBadRequest, "messages: at least one message is required")
		return
	}
	model, dirs, err := parseModel(req.Model)
	if err != nil {
		writeAnthropicError(ctx, fasthttp.StatusBadRequest, err.Error())
		return
	}
	dirs.apply(&st)
	if st.Status >= 400 {
		anthropicFail(ctx, st)
		return
	}
	r := anthropicReply{id: "msg_mock_" + strconv.FormatUint(s.seq.Add(1), 10), model: model, noUsage: st.NoUsage, detail: st.Detail}
	r.prompt = words(req.System.text)
	for _, m := range req.Messages {
		r.prompt += words(m.Content.text)
		if m.Role == "user" && m.Content.text != "" {
			r.text = m.Content.text // a tool result alone keeps the question
		}
	}
	r.prompt = max(r.prompt, 1)
	r.read, r.written = s.promptCache(anthropicPrefix(&req))
	r.prompt = max(r.prompt, r.read+r.written) // the tools' names count too
	r.text, r.stopSequence = stopAt(echo(r.text), req.StopSequences)
	last := req.Messages[len(req.Messages)-1].Content
	if len(req.Tools) > 0 && req.ToolChoice.Type != "none" && !last.toolResult {
		r.tool = req.Tools[0].Name
	}
	r.json = req.OutputConfig.Format.Type == "json_schema"
	r.completion = 3 + words(r.text)
	if st.AnswerTokens > 0 && r.tool == "" {
		r.text, r.completion, r.cut = longAnswer(st, *req.MaxTokens)
	}
	if st.PromptTokens > 0 {
		r.prompt = st.PromptTokens
	}

	s.reply(ctx, st, req.Stream, r.stream, func() []byte { return r.appendBody(make([]byte, 0, 256+len(r.text))) })
}

// toolInput is the input of the mock's tool call.
func (r *anthropicReply) toolInput() string {
	return toolArguments(r.text)
}

func (r *anthropicReply) stopReason() string {
	switch {
	case r.tool != "":
		return "tool_use"
	case r.cut:
		return "max_tokens"
	case r.stopSequence != "":
		return "stop_sequence"
	}
	return "end_turn"
}

// appendStop appends stop_reason and stop_sequence.
func (r *anthropicReply) appendStop(b []byte) []byte {
	b = append(b, `"stop_reason":"`...)
	b = append(b, r.stopReason()...)
	b = append(b, `","stop_sequence":`...)
	if r.stopReason() != "stop_sequence" {
		return append(b, "null"...)
	}
	return jsonstr.Append(b, r.stopSequence)
}

// anthropicPrefix is the prompt of req as the mock's prompt cache reads
// it: tools, system, messages.
func anthropicPrefix(req *anthropicRequest) *prefix {
	p := newPrefix()
	for _, t := range req.Tools {
		p.add(t.Name, t.CacheControl != nil)
	}
	for _, b := range req.System.blocks {
		p.add(b.text, b.cached)
	}
	for _, m := range req.Messages {
		for _, b := range m.Content.blocks {
			p.add(b.text, b.cached)
		}
	}
	return p
}

// appendUsage appends the usage of input prompt tokens, the cached ones
// among them apart, and output tokens.
func (r *anthropicReply) appendUsage(b []byte, input, output int) []byte {
	d := r.detail
	b = append(b, `"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(max(input-r.read-r.written, 0)), 10)
	b = append(b, `,"cache_creation_input_tokens":`...)
	b = strconv.AppendInt(b, int64(r.written+d.CacheWrite), 10)
	b = append(b, `,"cache_read_input_tokens":`...)
	b = strconv.AppendInt(b, int64(r.read+d.CacheRead), 10)
	if w := r.written + d.CacheWrite; w > 0 {
		b = append(b, `,"cache_creation":{"ephemeral_5m_input_tokens":`...)
		b = strconv.AppendInt(b, int64(w-d.CacheWrite1h), 10)
		b = append(b, `,"ephemeral_1h_input_tokens":`...)
		b = strconv.AppendInt(b, int64(d.CacheWrite1h), 10)
		b = append(b, '}')
	}
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(output+d.Reasoning), 10)
	return append(b, '}')
}

// appendHead appends the message object up to and including the
// content array's opening bracket.
func (r *anthropicReply) appendHead(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, r.id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = jsonstr.Append(b, r.model)
	return append(b, `,"content":[`...)
}

// appendBody appends the non-streamed answer.
func (r *anthropicReply) appendBody(b []byte) []byte {
	b = r.appendHead(b)
	if r.tool != "" {
		b = append(b, `{"type":"tool_use","id":"toolu_mock_1","name":`...)
		b = jsonstr.Append(b, r.tool)
		b = append(b, `,"input":`...)
		b = append(b, r.toolInput()...)
		b = append(b, '}')
	} else if r.json {
		b = append(b, `{"type":"text","text":`...)
		b = jsonstr.Append(b, jsonAnswer(r.text))
		b = append(b, '}')
	} else {
		b = append(b, `{"type":"text","text":"`+answerPrefix...)
		b = jsonstr.AppendEscaped(b, r.text)
		b = append(b, `"}`...)
	}
	b = append(b, `],`...)
	b = r.appendStop(b)
	if !r.noUsage {
		b = append(b, ',')
		b = r.appendUsage(b, r.prompt, r.completion)
	}
	return append(b, '}')
}

// stream builds the event stream of the answer; the content frames are
// the block's deltas.
func (r *anthropicReply) stream(chunks int) *stream {
	if chunks <= 0 {
		chunks = defaultChunks
	}
	sm := &stream{contentType: "text/event-stream; charset=utf-8", buf: make([]byte, 0, 1024+chunks*96+2*len(r.text))}
	event := func(name string) {
		sm.buf = append(sm.buf, "event: "...)
		sm.buf = append(sm.buf, name...)
		sm.buf = append(sm.buf, "\ndata: "...)
	}
	endEvent := func() {
		sm.buf = append(sm.buf, "\n\n"...)
		sm.end()
	}
	event("message_start")
	sm.buf = append(sm.buf, `{"type":"message_start","message":`...)
	sm.buf = r.appendHead(sm.buf)
	sm.buf = append(sm.buf, `],"stop_reason":null,"stop_sequence":null`...)
	if !r.noUsage {
		sm.buf = append(sm.buf, ',')
		sm.buf = r.appendUsage(sm.buf, r.prompt, 1)
	}
	sm.buf = append(sm.buf, "}}"...)
	endEvent()
	event("content_block_start")
	if r.tool != "" {
		sm.buf = append(sm.buf, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_mock_1","name":`...)
		sm.buf = jsonstr.Append(sm.buf, r.tool)
		sm.buf = append(sm.buf, `,"input":{}}}`...)
	} else {
		sm.buf = append(sm.buf, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`...)
	}
	endEvent()
	event("ping")
	sm.buf = append(sm.buf, `{"type": "ping"}`...)
	endEvent()
	sm.first = len(sm.ends)
	content, deltaType, field := answerPrefix+r.text, "text_delta", "text"
	if r.json {
		content = jsonAnswer(r.text)
	}
	if r.tool != "" {
		content, deltaType, field = r.toolInput(), "input_json_delta", "partial_json"
	}
	pieces(content, chunks, func(p string) {
		event("content_block_delta")
		sm.buf = append(sm.buf, `{"type":"content_block_delta","index":0,"delta":{"type":"`+deltaType+`","`+field+`":`...)
		sm.buf = jsonstr.Append(sm.buf, p)
		sm.buf = append(sm.buf, "}}"...)
		endEvent()
	})
	sm.last = len(sm.ends)
	event("content_block_stop")
	sm.buf = append(sm.buf, `{"type":"content_block_stop","index":0}`...)
	endEvent()
	event("message_delta")
	sm.buf = append(sm.buf, `{"type":"message_delta","delta":{`...)
	sm.buf = append(r.appendStop(sm.buf), '}')
	if !r.noUsage {
		sm.buf = append(sm.buf, ',')
		sm.buf = r.appendUsage(sm.buf, r.prompt, r.completion)
	}
	sm.buf = append(sm.buf, '}')
	endEvent()
	event("message_stop")
	sm.buf = append(sm.buf, `{"type":"message_stop"}`...)
	endEvent()
	return sm
}

// anthropicFail answers a Step's error status or raw body, after its
// latency.
func anthropicFail(ctx *fasthttp.RequestCtx, st Step) {
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
	writeAnthropicError(ctx, status, anthropicMessageFor(status))
}

// anthropicErrorType is the error type Anthropic answers with a status.
func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

func anthropicMessageFor(status int) string {
	switch status {
	case 429:
		return "Number of request tokens has exceeded your per-minute rate limit (mock)."
	case 529:
		return "Overloaded (mock)."
	case 500:
		return "Internal server error (mock)."
	}
	return "Request failed with status " + strconv.Itoa(status) + " (mock)."
}

// writeAnthropicError answers an error in Anthropic's shape, its type
// following the status.
func writeAnthropicError(ctx *fasthttp.RequestCtx, status int, msg string) {
	b := make([]byte, 0, 128+len(msg))
	b = append(b, `{"type":"error","error":{"type":"`...)
	b = append(b, anthropicErrorType(status)...)
	b = append(b, `","message":`...)
	b = jsonstr.Append(b, msg)
	b = append(b, `},"request_id":"req_mock"}`...)
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.Response.SetBodyRaw(b)
}
