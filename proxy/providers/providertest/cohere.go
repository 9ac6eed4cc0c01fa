package providertest

import (
	"encoding/json"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/jsonstr"
)

// The Cohere v2 wire format: POST /v2/chat, plain and streamed, and
// POST /v2/embed.
//
// A request needs "Authorization: Bearer <any key>" (else 401) and a JSON
// body with a model; errors have Cohere's shape {"id","message"}. Chat
// needs at least one message, roles system (first only), user, assistant
// and tool (with tool_call_id), and a tool_choice of REQUIRED or NONE if
// any. The answer is the OpenAI format's, "Hello from mock: " and the text
// of the last user message, as one text content item with finish_reason
// COMPLETE, and usage {billed_units, tokens}, both {input_tokens,
// output_tokens} counted in words. When the request has tools,
// tool_choice is not NONE and the last message is not a tool result, the
// answer is instead a tool_plan and one call of the first tool with
// {"text":<the echoed text>}, finish_reason TOOL_CALL.
//
// With "stream": true the answer is Cohere's named SSE events:
// message-start, then content-start, content-delta (Chunks of them) and
// content-end, or tool-plan-delta, tool-call-start, tool-call-delta (Chunks
// of them, the arguments in pieces) and tool-call-end; then message-end
// with the finish_reason and usage.
//
// Embed needs texts (1 to 96) and an input_type, and answers float
// embeddings (the OpenAI format's vectors) with meta.billed_units
// counting words. Steps and model-name directives work as for the OpenAI
// format.

// cohereMaxTexts is the most texts /v2/embed takes.
const cohereMaxTexts = 96

// cohereRoutes registers the paths of the Cohere v2 (/v2/chat, /v2/embed) wire format.
func (s *Server) cohereRoutes() {
	s.routes["/v2/chat"] = s.serveCohereChat
	s.routes["/v2/embed"] = s.serveCohereEmbed
}

// cohereChatRequest is the part of a v2 Chat request the mock reads.
type cohereChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string        `json:"role"`
		Content    openAIContent `json:"content"`
		ToolCallID string        `json:"tool_call_id"`
	} `json:"messages"`
	Stream bool `json:"stream"`
	Tools  []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice string `json:"tool_choice"`
	MaxTokens  int    `json:"max_tokens"`
	// ResponseFormat json_object: the answer is JSON.
	ResponseFormat struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

// cohereReply is what a chat request is answered with, before encoding.
type cohereReply struct {
	id, model, text    string
	tool               string // the tool called, "" for a text answer
	json               bool   // the answer is jsonAnswer
	prompt, completion int
	noUsage            bool
	detail             UsageDetail
	cut                bool // the answer stopped at max_tokens
}

// cohereCheck answers a Step's failure or a missing key, and reports
// whether the request may go on.
func cohereCheck(ctx *fasthttp.RequestCtx, st Step) bool {
	switch {
	case !ctx.IsPost():
		writeCohereError(ctx, fasthttp.StatusMethodNotAllowed, "method not allowed; use POST")
		return false
	case st.Status >= 400 || st.Body != "":
		cohereFail(ctx, st)
		return false
	case !hasBearer(ctx.Request.Header.Peek("Authorization")):
		writeCohereError(ctx, fasthttp.StatusUnauthorized, "no api key supplied")
		return false
	}
	return true
}

// cohereModel reads the model's directives into st; false means it
// answered an error.
func cohereModel(ctx *fasthttp.RequestCtx, name string, st *Step) (string, bool) {
	if name == "" {
		writeCohereError(ctx, fasthttp.StatusBadRequest, "invalid request: model is required")
		return "", false
	}
	model, dirs, err := parseModel(name)
	if err != nil {
		writeCohereError(ctx, fasthttp.StatusBadRequest, err.Error())
		return "", false
	}
	dirs.apply(st)
	if st.Status >= 400 {
		cohereFail(ctx, *st)
		return "", false
	}
	return model, true
}

func (s *Server) serveCohereChat(ctx *fasthttp.RequestCtx, st Step) {
	if !cohereCheck(ctx, st) {
		return
	}
	var req cohereChatRequest
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		writeCohereError(ctx, fasthttp.StatusBadRequest, "invalid request: cannot parse the body (mock: "+err.Error()+")")
		return
	}
	model, ok := cohereModel(ctx, req.Model, &st)
	if !ok {
		return
	}
	if msg := req.invalid(); msg != "" {
		writeCohereError(ctx, fasthttp.StatusBadRequest, msg)
		return
	}
	r := cohereReply{id: "mock-" + strconv.FormatUint(s.seq.Add(1), 10), model: model, noUsage: st.NoUsage, detail: st.Detail}
	for _, m := range req.Messages {
		r.prompt += words(string(m.Content))
		if m.Role == "user" && m.Content != "" {
			r.text = string(m.Content)
		}
	}
	r.prompt = max(r.prompt, 1)
	r.text = echo(r.text)
	if len(req.Tools) > 0 && req.ToolChoice != "NONE" && req.Messages[len(req.Messages)-1].Role != "tool" {
		r.tool = req.Tools[0].Function.Name
	}
	r.json = req.ResponseFormat.Type == "json_object"
	r.completion = 3 + words(r.text)
	if st.AnswerTokens > 0 && r.tool == "" {
		r.text, r.completion, r.cut = longAnswer(st, req.MaxTokens)
	}
	if st.PromptTokens > 0 {
		r.prompt = st.PromptTokens
	}

	s.reply(ctx, st, req.Stream, r.stream, func() []byte { return r.appendBody(make([]byte, 0, 384+2*len(r.text))) })
}

// invalid returns the error message of a request Cohere would refuse.
func (r *cohereChatRequest) invalid() string {
	if len(r.Messages) == 0 {
		return "invalid request: messages must not be empty"
	}
	for i, m := range r.Messages {
		switch m.Role {
		case "system":
			if i > 0 {
				return "system turn must be the first in the list"
			}
		case "user", "assistant":
		case "tool":
			if m.ToolCallID == "" {
				return "invalid request: tool message at index " + strconv.Itoa(i) + " must have a tool_call_id"
			}
		default:
			return "invalid request: unknown role " + strconv.Quote(m.Role)
		}
	}
	switch r.ToolChoice {
	case "", "REQUIRED", "NONE":
	default:
		return "invalid request: tool_choice must be one of REQUIRED, NONE"
	}
	return ""
}

func (r *cohereReply) finishReason() string {
	switch {
	case r.tool != "":
		return "TOOL_CALL"
	case r.cut:
		return "MAX_TOKENS"
	}
	return "COMPLETE"
}

func (r *cohereReply) toolPlan() string { return "I will call " + r.tool + "." }

// toolArguments is the arguments of the mock's tool call, a JSON text.
func (r *cohereReply) toolArguments() string {
	return toolArguments(r.text)
}

func (r *cohereReply) appendUsage(b []byte) []byte {
	d := r.detail
	counts := func(b []byte) []byte {
		b = append(b, `{"input_tokens":`...)
		b = strconv.AppendInt(b, int64(r.prompt+d.CacheRead), 10)
		b = append(b, `,"output_tokens":`...)
		b = strconv.AppendInt(b, int64(r.completion+d.Reasoning), 10)
		return append(b, '}')
	}
	b = append(b, `"usage":{"billed_units":`...)
	b = counts(b)
	b = append(b, `,"tokens":`...)
	b = counts(b)
	if d.CacheRead > 0 {
		b = append(b, `,"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(d.CacheRead), 10)
	}
	return append(b, '}')
}

// appendToolCall appends the tool call object with the given arguments.
func (r *cohereReply) appendToolCall(b []byte, args string) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, r.tool+"_mock_1")
	b = append(b, `,"type":"function","function":{"name":`...)
	b = jsonstr.Append(b, r.tool)
	b = append(b, `,"arguments":`...)
	b = jsonstr.Append(b, args)
	return append(b, "}}"...)
}

// appendBody appends the non-streamed answer.
func (r *cohereReply) appendBody(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, r.id)
	b = append(b, `,"message":{"role":"assistant",`...)
	if r.tool != "" {
		b = append(b, `"tool_plan":`...)
		b = jsonstr.Append(b, r.toolPlan())
		b = append(b, `,"tool_calls":[`...)
		b = r.appendToolCall(b, r.toolArguments())
		b = append(b, ']')
	} else if r.json {
		b = append(b, `"content":[{"type":"text","text":`...)
		b = jsonstr.Append(b, jsonAnswer(r.text))
		b = append(b, `}]`...)
	} else {
		b = append(b, `"content":[{"type":"text","text":"`+answerPrefix...)
		b = jsonstr.AppendEscaped(b, r.text)
		b = append(b, `"}]`...)
	}
	b = append(b, `},"finish_reason":"`...)
	b = append(b, r.finishReason()...)
	b = append(b, '"')
	if !r.noUsage {
		b = append(b, ',')
		b = r.appendUsage(b)
	}
	return append(b, '}')
}

// stream builds the event stream of the answer; the content frames are
// the content or tool-call deltas.
func (r *cohereReply) stream(chunks int) *stream {
	if chunks <= 0 {
		chunks = defaultChunks
	}
	sm := &stream{contentType: "text/event-stream", buf: make([]byte, 0, 1024+chunks*128+2*len(r.text))}
	event := func(name, data string) {
		sm.buf = append(sm.buf, "event: "+name+"\ndata: "+data...)
	}
	endEvent := func() {
		sm.buf = append(sm.buf, "\n\n"...)
		sm.end()
	}
	event("message-start", `{"id":`)
	sm.buf = jsonstr.Append(sm.buf, r.id)
	sm.buf = append(sm.buf, `,"type":"message-start","delta":{"message":{"role":"assistant","content":[],"tool_plan":"","tool_calls":[],"citations":[]}}}`...)
	endEvent()
	if r.tool != "" {
		event("tool-plan-delta", `{"type":"tool-plan-delta","delta":{"message":{"tool_plan":`)
		sm.buf = jsonstr.Append(sm.buf, r.toolPlan())
		sm.buf = append(sm.buf, "}}}"...)
		endEvent()
		event("tool-call-start", `{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":`)
		sm.buf = r.appendToolCall(sm.buf, "")
		sm.buf = append(sm.buf, "}}}"...)
		endEvent()
	} else {
		event("content-start", `{"type":"content-start","index":0,"delta":{"message":{"content":{"type":"text","text":""}}}}`)
		endEvent()
	}
	sm.first = len(sm.ends)
	if r.tool != "" {
		pieces(r.toolArguments(), chunks, func(p string) {
			event("tool-call-delta", `{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":`)
			sm.buf = jsonstr.Append(sm.buf, p)
			sm.buf = append(sm.buf, "}}}}}"...)
			endEvent()
		})
	} else {
		content := answerPrefix + r.text
		if r.json {
			content = jsonAnswer(r.text)
		}
		pieces(content, chunks, func(p string) {
			event("content-delta", `{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":`)
			sm.buf = jsonstr.Append(sm.buf, p)
			sm.buf = append(sm.buf, "}}}}"...)
			endEvent()
		})
	}
	sm.last = len(sm.ends)
	if r.tool != "" {
		event("tool-call-end", `{"type":"tool-call-end","index":0}`)
	} else {
		event("content-end", `{"type":"content-end","index":0}`)
	}
	endEvent()
	event("message-end", `{"type":"message-end","delta":{"finish_reason":"`+r.finishReason()+`"`)
	if !r.noUsage {
		sm.buf = append(sm.buf, ',')
		sm.buf = r.appendUsage(sm.buf)
	}
	sm.buf = append(sm.buf, "}}"...)
	endEvent()
	return sm
}

// cohereEmbedRequest is the part of a /v2/embed request the mock reads.
type cohereEmbedRequest struct {
	Model          string   `json:"model"`
	Texts          []string `json:"texts"`
	InputType      string   `json:"input_type"`
	EmbeddingTypes []string `json:"embedding_types"`
}

func (s *Server) serveCohereEmbed(ctx *fasthttp.RequestCtx, st Step) {
	if !cohereCheck(ctx, st) {
		return
	}
	var req cohereEmbedRequest
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		writeCohereError(ctx, fasthttp.StatusBadRequest, "invalid request: cannot parse the body (mock: "+err.Error()+")")
		return
	}
	if _, ok := cohereModel(ctx, req.Model, &st); !ok {
		return
	}
	msg := ""
	switch {
	case len(req.Texts) == 0:
		msg = "invalid request: texts must not be empty"
	case len(req.Texts) > cohereMaxTexts:
		msg = "invalid request: texts must contain at most 96 items"
	case req.InputType == "":
		msg = "invalid request: valid input_type must be provided with the provided model"
	}
	for _, t := range req.EmbeddingTypes {
		if t != "float" {
			msg = "invalid request: the mock serves only float embeddings, not " + strconv.Quote(t)
		}
	}
	if msg != "" {
		writeCohereError(ctx, fasthttp.StatusBadRequest, msg)
		return
	}
	if !sleep(ctx, st.Latency) {
		return
	}
	if st.ResetAfter > 0 {
		abort(ctx)
		return
	}
	if st.RetryAfter != "" {
		ctx.Response.Header.Set("Retry-After", st.RetryAfter)
	}
	prompt := 0
	b := make([]byte, 0, 256+len(req.Texts)*(embeddingDims*12+32))
	b = append(b, `{"id":"mock-`...)
	b = strconv.AppendUint(b, s.seq.Add(1), 10)
	b = append(b, `","embeddings":{"float":[`...)
	for i, t := range req.Texts {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEmbedding(b, embedding(t), false)
		prompt += words(t)
	}
	b = append(b, `]},"texts":[`...)
	for i, t := range req.Texts {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, t)
	}
	b = append(b, `],"meta":{"api_version":{"version":"2"}`...)
	if !st.NoUsage {
		b = append(b, `,"billed_units":{"input_tokens":`...)
		b = strconv.AppendInt(b, int64(max(prompt, 1)), 10)
		b = append(b, '}')
	}
	b = append(b, `},"response_type":"embeddings_by_type"}`...)
	if st.Status != 0 {
		ctx.SetStatusCode(st.Status)
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// cohereFail answers a Step's error status or raw body, after its latency.
func cohereFail(ctx *fasthttp.RequestCtx, st Step) {
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
	writeCohereError(ctx, status, cohereMessageFor(status))
}

func cohereMessageFor(status int) string {
	switch status {
	case 400:
		return "invalid request: the request failed validation (mock)."
	case 401:
		return "invalid api token (mock)."
	case 404:
		return "model not found, make sure the correct model ID was used and that you have access to the model (mock)."
	case 429:
		return "You are using a Trial key, which is limited to 20 API calls / minute (mock)."
	case 500:
		return "internal server error, this has been reported to our developers (mock)."
	}
	return "Request failed with status " + strconv.Itoa(status) + " (mock)."
}

// writeCohereError answers an error in Cohere's shape {"id":…,"message":…}.
func writeCohereError(ctx *fasthttp.RequestCtx, status int, msg string) {
	b := make([]byte, 0, 96+len(msg))
	b = append(b, `{"id":"00000000-0000-4000-8000-mock00000000","message":`...)
	b = jsonstr.Append(b, msg)
	b = append(b, '}')
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.Response.SetBodyRaw(b)
}
