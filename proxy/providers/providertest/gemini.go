package providertest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/jsonstr"
)

// The Gemini API wire format (provider "google"):
//
//	POST /v1beta/models/{model}:generateContent
//	POST /v1beta/models/{model}:streamGenerateContent   ?alt=sse: server-sent events; without it a JSON array
//	POST /v1beta/models/{model}:embedContent
//	POST /v1beta/models/{model}:batchEmbedContents
//
// The key is the x-goog-api-key header or the key query parameter; without
// one the answer is 403 PERMISSION_DENIED, as Gemini's. Errors have Gemini's
// shape {"error":{"code","message","status"}}. Everything else follows the
// OpenAI format's rules (see the package doc): the echoed answer, words as
// tokens, Steps and model-name directives ("gemini-2.5-flash@chunks=5" in
// the path), the same embeddings. A stream has one event per content chunk
// and then one with the finishReason and the usage, so a reset cuts it
// before any finishReason. A generateContent request with function
// calling mode ANY whose last content is not a function response is
// answered with one functionCall part (the first allowed name, else the
// first declaration; args {"text":<the echoed text>}), finishReason STOP;
// streamed, in a single event.

const geminiPrefix = "/v1beta/models/"

// maxGeminiCandidates is Gemini's limit on candidateCount.
const maxGeminiCandidates = 8

// geminiRoutes registers the paths of the Gemini API, which carry the model
// and the method: /v1beta/models/{model}:{method}.
func (s *Server) geminiRoutes() {
	s.prefixRoutes = append(s.prefixRoutes, prefixRoute{prefix: geminiPrefix, ep: s.serveGemini})
}

// geminiRequest holds the fields of the requests the mock reads.
type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	GenerationConfig  struct {
		CandidateCount   int    `json:"candidateCount"`
		MaxOutputTokens  int    `json:"maxOutputTokens"`
		ResponseMIMEType string `json:"responseMimeType"` // application/json: the answer is JSON

	} `json:"generationConfig"`
	// Content is embedContent's; Requests batchEmbedContents'.
	Content  *geminiContent `json:"content"`
	Requests []struct {
		Model   string        `json:"model"`
		Content geminiContent `json:"content"`
	} `json:"requests"`
	// Tools and ToolConfig: mode ANY forces a function call.
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	ToolConfig struct {
		FunctionCallingConfig struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig"`
}

// forcedTool is the function a generateContent request forces a call of
// (mode ANY: the first allowed name, else the first declaration); "" when
// none is forced or the last content already holds a function response.
func (req *geminiRequest) forcedTool() string {
	fc := &req.ToolConfig.FunctionCallingConfig
	if fc.Mode != "ANY" || len(req.Contents) == 0 {
		return ""
	}
	for _, p := range req.Contents[len(req.Contents)-1].Parts {
		if p.FunctionResponse != nil {
			return ""
		}
	}
	if len(fc.AllowedFunctionNames) > 0 {
		return fc.AllowedFunctionNames[0]
	}
	for _, t := range req.Tools {
		if len(t.FunctionDeclarations) > 0 {
			return t.FunctionDeclarations[0].Name
		}
	}
	return ""
}

type geminiContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text             string          `json:"text"`
		FunctionResponse json.RawMessage `json:"functionResponse"`
	} `json:"parts"`
}

// text joins the text parts by spaces; other parts are ignored.
func (c *geminiContent) text() string {
	var b strings.Builder
	for _, p := range c.Parts {
		if p.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

func (s *Server) serveGemini(ctx *fasthttp.RequestCtx, st Step) {
	rest := string(ctx.Path()[len(geminiPrefix):])
	i := strings.LastIndexByte(rest, ':')
	method := ""
	if i > 0 {
		method = rest[i+1:]
	}
	switch method {
	case "generateContent", "streamGenerateContent", "embedContent", "batchEmbedContents":
	default:
		writeGeminiError(ctx, fasthttp.StatusNotFound, "Method not found.")
		return
	}
	if !ctx.IsPost() {
		writeGeminiError(ctx, fasthttp.StatusMethodNotAllowed, "Method not allowed; use POST.")
		return
	}
	if st.Status >= 400 || st.Body != "" {
		geminiFail(ctx, st)
		return
	}
	if !hasGeminiKey(ctx) {
		writeGeminiError(ctx, fasthttp.StatusForbidden,
			"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.")
		return
	}
	name := rest[:i]
	model, dirs, err := parseModel(name)
	if err != nil {
		writeGeminiError(ctx, fasthttp.StatusBadRequest, err.Error())
		return
	}
	dirs.apply(&st)
	if st.Status >= 400 {
		geminiFail(ctx, st)
		return
	}
	var req geminiRequest
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		writeGeminiError(ctx, fasthttp.StatusBadRequest, "Invalid JSON payload received (mock: "+err.Error()+").")
		return
	}
	r := geminiReply{model: model, seq: s.seq.Add(1), noUsage: st.NoUsage, detail: st.Detail}
	switch method {
	case "embedContent":
		if req.Content == nil || len(req.Content.Parts) == 0 {
			writeGeminiError(ctx, fasthttp.StatusBadRequest, "* EmbedContentRequest.content: contents is not specified")
			return
		}
		r.texts = []string{req.Content.text()}
	case "batchEmbedContents":
		if len(req.Requests) == 0 {
			writeGeminiError(ctx, fasthttp.StatusBadRequest, "* BatchEmbedContentsRequest.requests: requests is not specified")
			return
		}
		for i, e := range req.Requests {
			if e.Model != "models/"+name && e.Model != "models/"+model {
				writeGeminiError(ctx, fasthttp.StatusBadRequest, "* BatchEmbedContentsRequest.requests["+strconv.Itoa(i)+
					"].model: the model of each request must match the model of the batch, models/"+model)
				return
			}
			r.texts = append(r.texts, e.Content.text())
		}
		r.batch = true
	default:
		if len(req.Contents) == 0 {
			writeGeminiError(ctx, fasthttp.StatusBadRequest, "* GenerateContentRequest.contents: contents is not specified")
			return
		}
		r.candidates = max(req.GenerationConfig.CandidateCount, 1)
		if r.candidates > maxGeminiCandidates {
			writeGeminiError(ctx, fasthttp.StatusBadRequest, "* GenerateContentRequest.generation_config.candidate_count: must be at most 8")
			return
		}
		if req.SystemInstruction != nil {
			r.prompt += words(req.SystemInstruction.text())
		}
		for i := range req.Contents {
			t := req.Contents[i].text()
			r.prompt += words(t)
			// A function response alone keeps the question.
			if role := req.Contents[i].Role; (role == "user" || role == "") && t != "" {
				r.text = t
			}
		}
		r.prompt = max(r.prompt, 1)
		r.text = echo(r.text)
		r.completion = 3 + words(r.text)
		r.tool = req.forcedTool()
		r.json = req.GenerationConfig.ResponseMIMEType == "application/json"
		if st.AnswerTokens > 0 && r.tool == "" {
			r.text, r.completion, r.cut = longAnswer(st, req.GenerationConfig.MaxOutputTokens)
		}
	}
	if st.PromptTokens > 0 && r.texts == nil {
		r.prompt = st.PromptTokens
	}

	if !sleep(ctx, st.Latency) {
		return
	}
	stream := method == "streamGenerateContent"
	sse := stream && string(ctx.QueryArgs().Peek("alt")) == "sse"
	if st.ResetAfter > 0 && !sse {
		abort(ctx)
		return
	}
	if st.RetryAfter != "" {
		ctx.Response.Header.Set("Retry-After", st.RetryAfter)
	}
	if sse {
		s.sendStream(ctx, r.stream(st.Chunks), st)
		return
	}
	if st.Status != 0 {
		ctx.SetStatusCode(st.Status)
	}
	ctx.SetContentType("application/json; charset=UTF-8")
	switch {
	case r.texts != nil:
		ctx.SetBody(r.appendEmbeddings(nil))
	case stream: // the JSON array of the events
		sm := r.stream(st.Chunks)
		b := []byte{'['}
		for i := range sm.ends {
			if i > 0 {
				b = append(b, ",\n"...)
			}
			b = append(b, bytes.TrimSuffix(bytes.TrimPrefix(sm.frame(i), []byte("data: ")), []byte("\r\n\r\n"))...)
		}
		ctx.SetBody(append(b, ']'))
	case r.json:
		ctx.SetBody(r.appendResponse(nil, jsonAnswer(r.text), false, true))
	default:
		ctx.SetBody(r.appendResponse(nil, r.text, true, true))
	}
}

// hasGeminiKey reports whether the request carries a key, in the header or
// the query.
func hasGeminiKey(ctx *fasthttp.RequestCtx) bool {
	return len(bytes.TrimSpace(ctx.Request.Header.Peek("X-Goog-Api-Key"))) > 0 || len(ctx.QueryArgs().Peek("key")) > 0
}

// geminiReply is what a request is answered with, before encoding.
type geminiReply struct {
	model              string
	seq                uint64
	text               string   // the echoed text; the answer is answerPrefix + text
	texts              []string // embeddings: one vector each
	batch              bool     // batchEmbedContents
	candidates         int
	prompt, completion int
	noUsage            bool
	detail             UsageDetail
	cut                bool   // the answer stopped at maxOutputTokens
	tool               string // the answer calls this function instead of answering text
	json               bool   // the answer is jsonAnswer
}

// appendResponse appends a GenerateContentResponse whose candidates each
// hold text (after answerPrefix when prefix); final adds the finishReason
// and the complete usage, else the usage has only the prompt.
func (r *geminiReply) appendResponse(b []byte, text string, prefix, final bool) []byte {
	b = append(b, `{"candidates":[`...)
	for i := range r.candidates {
		if i > 0 {
			b = append(b, ',')
		}
		if r.tool != "" {
			b = append(b, `{"content":{"parts":[{"functionCall":{"name":`...)
			b = jsonstr.Append(b, r.tool)
			b = append(b, `,"args":`...)
			b = append(b, toolArguments(r.text)...)
			b = append(b, `}}],"role":"model"}`...)
		} else {
			b = append(b, `{"content":{"parts":[{"text":"`...)
			if prefix {
				b = append(b, answerPrefix...)
			}
			b = jsonstr.AppendEscaped(b, text)
			b = append(b, `"}],"role":"model"}`...)
		}
		if final && r.cut {
			b = append(b, `,"finishReason":"MAX_TOKENS"`...)
		} else if final {
			b = append(b, `,"finishReason":"STOP"`...)
		}
		b = append(b, `,"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '}')
	}
	b = append(b, ']')
	if !r.noUsage {
		// Gemini reports no cache writes; its prompt count includes the
		// cache reads, its thoughts are apart from the candidates.
		d := r.detail
		prompt := r.prompt + d.CacheRead
		b = append(b, `,"usageMetadata":{"promptTokenCount":`...)
		b = strconv.AppendInt(b, int64(prompt), 10)
		total := prompt
		if d.CacheRead > 0 {
			b = append(b, `,"cachedContentTokenCount":`...)
			b = strconv.AppendInt(b, int64(d.CacheRead), 10)
		}
		if final {
			completion := r.completion * r.candidates
			total += completion + d.Reasoning
			b = append(b, `,"candidatesTokenCount":`...)
			b = strconv.AppendInt(b, int64(completion), 10)
			if d.Reasoning > 0 {
				b = append(b, `,"thoughtsTokenCount":`...)
				b = strconv.AppendInt(b, int64(d.Reasoning), 10)
			}
		}
		b = append(b, `,"totalTokenCount":`...)
		b = strconv.AppendInt(b, int64(total), 10)
		b = append(b, `,"promptTokensDetails":[{"modality":"TEXT","tokenCount":`...)
		b = strconv.AppendInt(b, int64(r.prompt), 10)
		b = append(b, `}]}`...)
	}
	b = append(b, `,"modelVersion":`...)
	b = jsonstr.Append(b, r.model)
	b = append(b, `,"responseId":"mock-`...)
	b = strconv.AppendUint(b, r.seq, 10)
	return append(b, `"}`...)
}

// answer is the whole text of the answer.
func (r *geminiReply) answer() string {
	if r.json {
		return jsonAnswer(r.text)
	}
	return answerPrefix + r.text
}

// stream builds the events of a stream: chunks content events, then one
// with the finishReason and the usage. Events end in CRLF CRLF, as
// Gemini's do.
func (r *geminiReply) stream(chunks int) *stream {
	if chunks <= 0 {
		chunks = defaultChunks
	}
	sm := &stream{contentType: "text/event-stream", buf: make([]byte, 0, (chunks+1)*(256+len(r.text)/chunks))}
	if r.tool != "" {
		// Gemini streams a function call whole, in the last event.
		sm.buf = append(sm.buf, "data: "...)
		sm.buf = r.appendResponse(sm.buf, "", false, true)
		sm.buf = append(sm.buf, "\r\n\r\n"...)
		sm.end()
		sm.last = len(sm.ends)
		return sm
	}
	pieces(r.answer(), chunks, func(p string) {
		sm.buf = append(sm.buf, "data: "...)
		sm.buf = r.appendResponse(sm.buf, p, false, false)
		sm.buf = append(sm.buf, "\r\n\r\n"...)
		sm.end()
	})
	sm.last = len(sm.ends)
	sm.buf = append(sm.buf, "data: "...)
	sm.buf = r.appendResponse(sm.buf, "", false, true)
	sm.buf = append(sm.buf, "\r\n\r\n"...)
	sm.end()
	return sm
}

// appendEmbeddings appends embedContent's {"embedding":{"values":[…]}} or
// batchEmbedContents' {"embeddings":[{"values":[…]},…]}.
func (r *geminiReply) appendEmbeddings(b []byte) []byte {
	if !r.batch {
		b = append(b, `{"embedding":{"values":`...)
		b = appendEmbedding(b, embedding(r.texts[0]), false)
		return append(b, "}}"...)
	}
	b = append(b, `{"embeddings":[`...)
	for i, t := range r.texts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"values":`...)
		b = appendEmbedding(b, embedding(t), false)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// geminiFail answers a Step's error status or raw body, after its latency.
func geminiFail(ctx *fasthttp.RequestCtx, st Step) {
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
	writeGeminiError(ctx, status, geminiMessageFor(status))
}

// geminiMessageFor is the message Gemini answers a status with, as near as
// the mock needs.
func geminiMessageFor(status int) string {
	switch status {
	case 400:
		return "Request contains an invalid argument. (mock)"
	case 401:
		return "Request had invalid authentication credentials. (mock)"
	case 403:
		return "The caller does not have permission. (mock)"
	case 404:
		return "Requested entity was not found. (mock)"
	case 429:
		return "Resource has been exhausted (e.g. check quota). (mock)"
	case 500:
		return "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting (mock)"
	case 503:
		return "The model is overloaded. Please try again later. (mock)"
	case 504:
		return "The request timed out. Please try again. (mock)"
	}
	return "Request failed with status " + strconv.Itoa(status) + " (mock)."
}

// geminiStatus is the canonical status name Google APIs pair with an HTTP
// status.
func geminiStatus(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 500:
		return "INTERNAL"
	case 501:
		return "UNIMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if code >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

// writeGeminiError answers an error in Gemini's shape.
func writeGeminiError(ctx *fasthttp.RequestCtx, status int, msg string) {
	b := make([]byte, 0, 80+len(msg))
	b = append(b, `{"error":{"code":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"message":`...)
	b = jsonstr.Append(b, msg)
	b = append(b, `,"status":"`...)
	b = append(b, geminiStatus(status)...)
	b = append(b, `"}}`...)
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json; charset=UTF-8")
	ctx.Response.SetBodyRaw(b)
}
