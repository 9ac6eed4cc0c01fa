package providertest

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/jsonstr"
)

// OpenAI's Responses API (POST /responses), plain and streamed with the
// real event sequence: response.created, response.in_progress,
// response.output_item.added, response.content_part.added,
// response.output_text.delta…, response.output_text.done,
// response.content_part.done, response.output_item.done and
// response.completed with the usage. The answer echoes the last user
// text, like chat completions. A request whose tool_choice forces a call
// ("required": the first function tool; {"type":"function","name"}) and
// whose input does not end with a function_call_output is answered with
// one function_call item, arguments {"text":<the echoed text>}, streamed
// as response.function_call_arguments.delta events; a request for JSON
// (text.format json_schema or json_object) is answered with JSON, as chat
// completions are.

// responsesRequest holds the fields of a Responses request the mock reads.
type responsesRequest struct {
	Model           string          `json:"model"`
	Input           json.RawMessage `json:"input"`
	Instructions    string          `json:"instructions"`
	Stream          bool            `json:"stream"`
	MaxOutputTokens int             `json:"max_output_tokens"`
	Tools           []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
	Text       struct {
		Format struct {
			Type string `json:"type"`
		} `json:"format"`
	} `json:"text"`
}

// forcedTool is the function a Responses request forces a call of, ""
// when none is forced or the input already ends with the call's output.
func (req *responsesRequest) forcedTool() string {
	if len(req.Tools) == 0 || len(req.ToolChoice) == 0 {
		return ""
	}
	var items []struct {
		Type string `json:"type"`
	}
	if req.Input[0] == '[' && json.Unmarshal(req.Input, &items) == nil && len(items) > 0 && items[len(items)-1].Type == "function_call_output" {
		return ""
	}
	if string(req.ToolChoice) == `"required"` {
		for _, t := range req.Tools {
			if t.Type == "function" {
				return t.Name
			}
		}
		return ""
	}
	var named struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if json.Unmarshal(req.ToolChoice, &named) == nil && named.Type == "function" {
		return named.Name
	}
	return ""
}

// responsesTexts reads the texts of an input: a string, or a list of
// items whose content is a string or input_text parts. It returns the
// words of all of them and the last user text.
func responsesTexts(raw json.RawMessage) (prompt int, last string, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return words(s), s, err
	}
	var items []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Output  string          `json:"output"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return 0, "", err
	}
	for _, it := range items {
		var text string
		switch {
		case len(it.Content) > 0 && it.Content[0] == '"':
			_ = json.Unmarshal(it.Content, &text)
		case len(it.Content) > 0 && it.Content[0] == '[':
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			_ = json.Unmarshal(it.Content, &parts)
			for _, p := range parts {
				if p.Text != "" {
					if text != "" {
						text += " "
					}
					text += p.Text
				}
			}
		default:
			text = it.Output
		}
		prompt += words(text)
		if it.Role == "user" {
			last = text
		}
	}
	return prompt, last, nil
}

func (s *Server) serveResponses(ctx *fasthttp.RequestCtx, st Step) {
	if !ctx.IsPost() {
		writeOpenAIError(ctx, fasthttp.StatusMethodNotAllowed, "Method not allowed; use POST", "invalid_request_error", "")
		return
	}
	if st.Status >= 400 || st.Body != "" {
		openAIFail(ctx, st)
		return
	}
	if !hasBearer(ctx.Request.Header.Peek("Authorization")) {
		writeOpenAIError(ctx, fasthttp.StatusUnauthorized, "You didn't provide an API key (mock).", "invalid_request_error", "invalid_api_key")
		return
	}
	var req responsesRequest
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		writeOpenAIError(ctx, fasthttp.StatusBadRequest,
			"We could not parse the JSON body of your request (mock: "+err.Error()+").", "invalid_request_error", "")
		return
	}
	if req.Model == "" {
		writeOpenAIError(ctx, fasthttp.StatusBadRequest, "Missing required parameter: 'model'.", "invalid_request_error", "missing_required_parameter")
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
	prompt, last, err := responsesTexts(req.Input)
	if err != nil {
		writeOpenAIError(ctx, fasthttp.StatusBadRequest, "Invalid type for 'input' (mock).", "invalid_request_error", "invalid_type")
		return
	}
	r := responsesReply{model: model, seq: s.seq.Add(1), created: time.Now().Unix(), noUsage: st.NoUsage, detail: st.Detail,
		prompt: max(prompt+words(req.Instructions), 1), text: echo(last)}
	r.completion = 3 + words(r.text)
	if len(req.Input) > 0 {
		r.tool = req.forcedTool()
	}
	r.json = req.Text.Format.Type == "json_schema" || req.Text.Format.Type == "json_object"
	if st.AnswerTokens > 0 && r.tool == "" {
		r.text, r.completion, r.cut = longAnswer(st, req.MaxOutputTokens)
	}
	if st.PromptTokens > 0 {
		r.prompt = st.PromptTokens
	}
	s.reply(ctx, st, req.Stream, r.stream, func() []byte { return r.appendResponse(nil, "completed", true) })
}

// responsesReply is what a Responses request is answered with.
type responsesReply struct {
	model              string
	seq                uint64
	created            int64
	text               string // the echoed text; the answer is answerPrefix + text
	prompt, completion int
	noUsage            bool
	detail             UsageDetail
	cut                bool   // stopped at max_output_tokens: status incomplete
	tool               string // the answer is a call of this function
	json               bool   // the answer is jsonAnswer
}

// answer is the text of a message answer, or the arguments of a call.
func (r *responsesReply) answer() string {
	switch {
	case r.tool != "":
		return toolArguments(r.text)
	case r.json:
		return jsonAnswer(r.text)
	}
	return answerPrefix + r.text
}

func (r *responsesReply) id(prefix string) string {
	return prefix + "_mock" + strconv.FormatUint(r.seq, 10)
}

// appendOutputText appends the output_text part holding text.
func appendOutputText(b []byte, text string) []byte {
	b = append(b, `{"type":"output_text","annotations":[],"logprobs":[],"text":`...)
	b = jsonstr.Append(b, text)
	return append(b, '}')
}

// appendItem appends the message item; done gives it its content. The
// item of a tool call is a function_call.
func (r *responsesReply) appendItem(b []byte, done bool) []byte {
	if r.tool != "" {
		b = append(b, `{"id":"`...)
		b = append(b, r.id("fc")...)
		b = append(b, `","type":"function_call","status":"`...)
		args := ""
		if done {
			b = append(b, `completed`...)
			args = r.answer()
		} else {
			b = append(b, `in_progress`...)
		}
		b = append(b, `","arguments":`...)
		b = jsonstr.Append(b, args)
		b = append(b, `,"call_id":"`...)
		b = append(b, r.id("call")...)
		b = append(b, `","name":`...)
		b = jsonstr.Append(b, r.tool)
		return append(b, '}')
	}
	b = append(b, `{"id":"`...)
	b = append(b, r.id("msg")...)
	if !done {
		return append(b, `","type":"message","status":"in_progress","content":[],"role":"assistant"}`...)
	}
	b = append(b, `","type":"message","status":"completed","content":[`...)
	b = appendOutputText(b, r.answer())
	return append(b, `],"role":"assistant"}`...)
}

// appendResponse appends the response object with status; final gives
// it its output and usage.
func (r *responsesReply) appendResponse(b []byte, status string, final bool) []byte {
	if final && r.cut {
		status = "incomplete"
	}
	b = append(b, `{"id":"`...)
	b = append(b, r.id("resp")...)
	b = append(b, `","object":"response","created_at":`...)
	b = strconv.AppendInt(b, r.created, 10)
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","background":false,"error":null,"incomplete_details":`...)
	if final && r.cut {
		b = append(b, `{"reason":"max_output_tokens"}`...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"instructions":null,"max_output_tokens":null,"model":`...)
	b = jsonstr.Append(b, r.model)
	b = append(b, `,"output":[`...)
	if final {
		b = r.appendItem(b, true)
	}
	b = append(b, `],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},`+
		`"store":false,"temperature":1.0,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1.0,`+
		`"truncation":"disabled"`...)
	if final && !r.noUsage {
		// The spec's usage is an object or absent: in progress, absent.
		d := r.detail
		prompt, completion := d.prompt(r.prompt), r.completion+d.Reasoning
		b = append(b, `,"usage":{"input_tokens":`...)
		b = strconv.AppendInt(b, int64(prompt), 10)
		b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(d.CacheRead), 10)
		b = append(b, `,"cache_write_tokens":`...)
		b = strconv.AppendInt(b, int64(d.CacheWrite), 10)
		b = append(b, `},"output_tokens":`...)
		b = strconv.AppendInt(b, int64(completion), 10)
		b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(d.Reasoning), 10)
		b = append(b, `},"total_tokens":`...)
		b = strconv.AppendInt(b, int64(prompt+completion), 10)
		b = append(b, '}')
	}
	return append(b, `,"metadata":{}}`...)
}

// stream builds the event sequence of a streamed answer, the text in
// chunks deltas.
func (r *responsesReply) stream(chunks int) *stream {
	if chunks <= 0 {
		chunks = defaultChunks
	}
	sm := &stream{contentType: "text/event-stream; charset=utf-8", buf: make([]byte, 0, 4096)}
	seq := 0
	event := func(name string, body func(b []byte) []byte) {
		sm.buf = append(sm.buf, "event: "+name+"\ndata: {\"type\":\""+name+"\",\"sequence_number\":"...)
		sm.buf = strconv.AppendInt(sm.buf, int64(seq), 10)
		seq++
		sm.buf = body(append(sm.buf, ','))
		sm.buf = append(sm.buf, "}\n\n"...)
		sm.end()
	}
	at := func(b []byte) []byte {
		b = append(b, `"item_id":"`...)
		b = append(b, r.id("msg")...)
		return append(b, `","output_index":0,"content_index":0,`...)
	}
	full := r.answer()
	event("response.created", func(b []byte) []byte {
		return r.appendResponse(append(b, `"response":`...), "in_progress", false)
	})
	event("response.in_progress", func(b []byte) []byte {
		return r.appendResponse(append(b, `"response":`...), "in_progress", false)
	})
	event("response.output_item.added", func(b []byte) []byte {
		return r.appendItem(append(b, `"output_index":0,"item":`...), false)
	})
	if r.tool != "" {
		r.streamCall(sm, event, full, chunks)
		return sm
	}
	event("response.content_part.added", func(b []byte) []byte {
		return appendOutputText(append(at(b), `"part":`...), "")
	})
	sm.first = len(sm.ends)
	pieces(full, chunks, func(p string) {
		event("response.output_text.delta", func(b []byte) []byte {
			b = append(at(b), `"delta":`...)
			b = jsonstr.Append(b, p)
			return append(b, `,"logprobs":[]`...)
		})
	})
	sm.last = len(sm.ends)
	event("response.output_text.done", func(b []byte) []byte {
		b = append(at(b), `"text":`...)
		b = jsonstr.Append(b, full)
		return append(b, `,"logprobs":[]`...)
	})
	event("response.content_part.done", func(b []byte) []byte {
		return appendOutputText(append(at(b), `"part":`...), full)
	})
	event("response.output_item.done", func(b []byte) []byte {
		return r.appendItem(append(b, `"output_index":0,"item":`...), true)
	})
	final := "response.completed"
	if r.cut {
		final = "response.incomplete"
	}
	event(final, func(b []byte) []byte {
		return r.appendResponse(append(b, `"response":`...), "completed", true)
	})
	return sm
}

// streamCall appends the events of a function call after its
// output_item.added, into sm: the arguments args in chunks deltas (the
// content frames), their done
// event, the item's done event and response.completed.
func (r *responsesReply) streamCall(sm *stream, event func(string, func([]byte) []byte), args string, chunks int) {
	at := func(b []byte) []byte {
		b = append(b, `"item_id":"`...)
		b = append(b, r.id("fc")...)
		return append(b, `","output_index":0,`...)
	}
	sm.first = len(sm.ends)
	pieces(args, chunks, func(p string) {
		event("response.function_call_arguments.delta", func(b []byte) []byte {
			return jsonstr.Append(append(at(b), `"delta":`...), p)
		})
	})
	sm.last = len(sm.ends)
	event("response.function_call_arguments.done", func(b []byte) []byte {
		return jsonstr.Append(append(at(b), `"arguments":`...), args)
	})
	event("response.output_item.done", func(b []byte) []byte {
		return r.appendItem(append(b, `"output_index":0,"item":`...), true)
	})
	event("response.completed", func(b []byte) []byte {
		return r.appendResponse(append(b, `"response":`...), "completed", true)
	})
}
