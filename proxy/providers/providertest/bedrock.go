package providertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/jsonstr"
)

// The Bedrock runtime wire format:
//
//	POST /model/{modelId}/converse          Converse
//	POST /model/{modelId}/converse-stream   ConverseStream (AWS event stream)
//	POST /model/{modelId}/invoke            InvokeModel, for amazon.titan-embed-* and cohere.embed-*
//
// The model id is path-escaped as the AWS SDKs send it (':' as %3A) and may
// carry the mock's directives ("amazon.nova-lite-v1:0@chunks=5").
//
// Requests must be SigV4-signed: an Authorization header starting
// "AWS4-HMAC-SHA256 Credential=" and an X-Amz-Date header, else 403. A
// request signed with MockAccessKeyID is verified against
// MockSecretAccessKey with the AWS SDK's signer (403
// InvalidSignatureException on a mismatch); other access key ids are taken
// on trust, so any key pair works against the mock.
//
// Usage counts cacheReadInputTokens and cacheWriteInputTokens at the
// request's cachePoint blocks (in toolConfig.tools, system and message
// content) as caching.go says; a cachePoint for a model other than Claude
// or Nova is a 400, as Bedrock's. When the echoed text holds one of
// inferenceConfig.stopSequences the answer stops before it with
// stopReason "stop_sequence", and, when additionalModelResponseFieldPaths
// asks for /stop_sequence (or /delta/stop_sequence), the sequence in
// additionalModelResponseFields as Claude's Converse gives it.
//
// Errors have Bedrock's shape: the x-amzn-ErrorType header and
// {"message":…}. A Step's error status or Body is answered before the
// signature is checked, as for the other formats.

// MockAccessKeyID and MockSecretAccessKey are the key pair whose
// signatures the mock verifies.
const (
	MockAccessKeyID     = "AKIAMOCKSLUICE000001"
	MockSecretAccessKey = "mockSecretAccessKey/0123456789abcdefghij"
)

const (
	bedrockEventStreamType = "application/vnd.amazon.eventstream"
	sigV4Prefix            = "AWS4-HMAC-SHA256 Credential="
	amzDateFormat          = "20060102T150405Z"
)

// bedrockRoutes registers the paths of the Bedrock runtime (/model/{id}/converse, /converse-stream, /invoke) wire format.
func (s *Server) bedrockRoutes() {
	s.prefixRoutes = append(s.prefixRoutes, prefixRoute{prefix: "/model/", ep: s.serveBedrock})
}

// bedrockConverseIn is the part of a Converse request the mock reads.
type bedrockConverseIn struct {
	Messages []struct {
		Role    string           `json:"role"`
		Content []bedrockBlockIn `json:"content"`
	} `json:"messages"`
	System []struct {
		Text       string    `json:"text"`
		CachePoint *struct{} `json:"cachePoint"`
	} `json:"system"`
	InferenceConfig struct {
		MaxTokens     int      `json:"maxTokens"`
		StopSequences []string `json:"stopSequences"`
	} `json:"inferenceConfig"`
	AdditionalModelResponseFieldPaths []string `json:"additionalModelResponseFieldPaths"`
	ToolConfig                        *struct {
		Tools []struct {
			ToolSpec struct {
				Name string `json:"name"`
			} `json:"toolSpec"`
			CachePoint *struct{} `json:"cachePoint"`
		} `json:"tools"`
		ToolChoice *struct {
			Any  *struct{} `json:"any"`
			Tool *struct {
				Name string `json:"name"`
			} `json:"tool"`
		} `json:"toolChoice"`
	} `json:"toolConfig"`
}

type bedrockBlockIn struct {
	Text       *string   `json:"text"`
	CachePoint *struct{} `json:"cachePoint"`
	ToolResult *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"toolResult"`
}

// bedrockReply is what a Converse request is answered with.
type bedrockReply struct {
	text               string // the echoed text; the answer is answerPrefix + text
	tool               string // when set, the answer is a call of this tool
	toolID             string
	prompt, completion int
	// read and written are the prompt tokens read from and written to
	// the prompt cache (caching.go), part of prompt.
	read, written int
	// stopSequence is the stop sequence the answer stopped at;
	// stopPath is where additionalModelResponseFields gives it ("" for
	// nowhere, "/stop_sequence" or "/delta/stop_sequence").
	stopSequence, stopPath string
	noUsage                bool
	// detail adds scripted cache and reasoning counts (Step.Detail).
	detail UsageDetail
	cut    bool // the answer stopped at inferenceConfig.maxTokens
}

func (s *Server) serveBedrock(ctx *fasthttp.RequestCtx, st Step) {
	rawPath := string(ctx.Request.URI().PathOriginal())
	rest, _ := strings.CutPrefix(rawPath, "/model/")
	i := strings.LastIndexByte(rest, '/')
	var op, escID string
	if i > 0 {
		escID, op = rest[:i], rest[i+1:]
	}
	id, err := url.PathUnescape(escID)
	if err != nil || (op != "converse" && op != "converse-stream" && op != "invoke") {
		writeBedrockError(ctx, fasthttp.StatusNotFound, "UnknownOperationException", "Unknown operation (mock): "+rawPath)
		return
	}
	if !ctx.IsPost() {
		writeBedrockError(ctx, fasthttp.StatusMethodNotAllowed, "ValidationException", "Method not allowed; use POST (mock).")
		return
	}
	if st.Status >= 400 || st.Body != "" {
		bedrockFail(ctx, st)
		return
	}
	if status, typ, msg := checkSigV4(ctx, rawPath); status != 0 {
		writeBedrockError(ctx, status, typ, msg)
		return
	}
	model, dirs, err := parseModel(id)
	if err != nil {
		writeBedrockError(ctx, fasthttp.StatusBadRequest, "ValidationException", err.Error())
		return
	}
	dirs.apply(&st)
	if st.Status >= 400 {
		bedrockFail(ctx, st)
		return
	}
	if op == "invoke" {
		s.serveBedrockInvoke(ctx, model, st)
		return
	}
	var req bedrockConverseIn
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		writeBedrockError(ctx, fasthttp.StatusBadRequest, "SerializationException", "Could not parse the request body (mock: "+err.Error()+").")
		return
	}
	if len(req.Messages) == 0 {
		writeBedrockError(ctx, fasthttp.StatusBadRequest, "ValidationException", "A conversation must start with a user message (mock).")
		return
	}
	r := bedrockReply{noUsage: st.NoUsage, detail: st.Detail}
	for _, sys := range req.System {
		r.prompt += words(sys.Text)
	}
	for _, m := range req.Messages {
		var sb strings.Builder
		for _, b := range m.Content {
			if b.Text != nil {
				r.prompt += words(*b.Text)
				sb.WriteString(*b.Text)
			}
			if b.ToolResult != nil {
				for _, c := range b.ToolResult.Content {
					r.prompt += words(c.Text)
				}
			}
		}
		if m.Role == "user" && sb.Len() > 0 {
			r.text = sb.String()
		}
	}
	r.prompt = max(r.prompt, 1)
	p, points := bedrockPrefix(&req)
	if points > 0 && !strings.Contains(model, "anthropic.claude") && !strings.Contains(model, "amazon.nova") {
		writeBedrockError(ctx, fasthttp.StatusBadRequest, "ValidationException", "This model doesn't support caching (mock).")
		return
	}
	r.read, r.written = s.promptCache(p)
	r.prompt = max(r.prompt, r.read+r.written) // the tools' names count too
	r.text, r.stopSequence = stopAt(echo(r.text), req.InferenceConfig.StopSequences)
	for _, path := range req.AdditionalModelResponseFieldPaths {
		if path == "/stop_sequence" || path == "/delta/stop_sequence" {
			r.stopPath = path
		}
	}
	r.completion = 3 + words(r.text)
	if tc := req.ToolConfig; tc != nil && tc.ToolChoice != nil && len(tc.Tools) > 0 {
		switch {
		case tc.ToolChoice.Tool != nil:
			r.tool = tc.ToolChoice.Tool.Name
		case tc.ToolChoice.Any != nil:
			r.tool = tc.Tools[0].ToolSpec.Name
		}
		r.toolID = "tooluse_mock_" + strconv.FormatUint(s.seq.Add(1), 10)
	}
	if st.AnswerTokens > 0 && r.tool == "" {
		r.text, r.completion, r.cut = longAnswer(st, req.InferenceConfig.MaxTokens)
	}
	if st.PromptTokens > 0 {
		r.prompt = st.PromptTokens
	}

	if !sleep(ctx, st.Latency) {
		return
	}
	if st.ResetAfter > 0 && op == "converse" {
		abort(ctx)
		return
	}
	if st.RetryAfter != "" {
		ctx.Response.Header.Set("Retry-After", st.RetryAfter)
	}
	if op == "converse-stream" {
		s.sendStream(ctx, r.stream(st.Chunks), st)
		return
	}
	if st.Status != 0 {
		ctx.SetStatusCode(st.Status)
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(r.appendBody(make([]byte, 0, 256+len(r.text))))
}

// toolInput is the input of the mock's tool call: the echoed text.
func (r *bedrockReply) toolInput() string {
	return toolArguments(r.text)
}

// appendUsage appends the usage: inputTokens are the prompt tokens
// neither read from nor written to the cache, which come apart when there
// are any.
func (r *bedrockReply) appendUsage(b []byte) []byte {
	d := r.detail
	completion := r.completion + d.Reasoning
	b = append(b, `"usage":{"inputTokens":`...)
	b = strconv.AppendInt(b, int64(max(r.prompt-r.read-r.written, 0)), 10)
	b = append(b, `,"outputTokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	b = append(b, `,"totalTokens":`...)
	b = strconv.AppendInt(b, int64(d.prompt(r.prompt)+completion), 10)
	if read, written := r.read+d.CacheRead, r.written+d.CacheWrite; read+written > 0 {
		b = append(b, `,"cacheReadInputTokens":`...)
		b = strconv.AppendInt(b, int64(read), 10)
		b = append(b, `,"cacheWriteInputTokens":`...)
		b = strconv.AppendInt(b, int64(written), 10)
	}
	return append(b, '}')
}

// stop appends the stop reason of the answer, the stopReason
// field's value up to its closing quote, and the stop sequence in
// additionalModelResponseFields when the request asked for it.
func (r *bedrockReply) appendStop(b []byte, stop string) []byte {
	if stop == "end_turn" && r.stopSequence != "" {
		stop = "stop_sequence"
	}
	b = append(b, stop...)
	b = append(b, '"')
	if stop != "stop_sequence" || r.stopPath == "" {
		return b
	}
	b = append(b, `,"additionalModelResponseFields":{`...)
	if r.stopPath == "/delta/stop_sequence" {
		b = append(b, `"delta":{"stop_sequence":`...)
		b = jsonstr.Append(b, r.stopSequence)
		return append(b, "}}"...)
	}
	b = append(b, `"stop_sequence":`...)
	b = jsonstr.Append(b, r.stopSequence)
	return append(b, '}')
}

// bedrockPrefix is the prompt of req as the mock's prompt cache reads
// it (tools, system, messages, with their cachePoints), and the number
// of cachePoints.
func bedrockPrefix(req *bedrockConverseIn) (*prefix, int) {
	p, n := newPrefix(), 0
	point := func(text string) {
		p.add(text, true)
		n++
	}
	if tc := req.ToolConfig; tc != nil {
		for _, t := range tc.Tools {
			if t.CachePoint != nil {
				point("")
			} else {
				p.add(t.ToolSpec.Name, false)
			}
		}
	}
	for _, sys := range req.System {
		if sys.CachePoint != nil {
			point("")
		} else {
			p.add(sys.Text, false)
		}
	}
	for _, m := range req.Messages {
		for _, b := range m.Content {
			switch {
			case b.CachePoint != nil:
				point("")
			case b.Text != nil:
				p.add(*b.Text, false)
			default:
				p.add("", false)
			}
		}
	}
	return p, n
}

// appendBody appends the Converse answer.
func (r *bedrockReply) appendBody(b []byte) []byte {
	b = append(b, `{"output":{"message":{"role":"assistant","content":[`...)
	stop := "end_turn"
	if r.tool != "" {
		b = append(b, `{"toolUse":{"toolUseId":`...)
		b = jsonstr.Append(b, r.toolID)
		b = append(b, `,"name":`...)
		b = jsonstr.Append(b, r.tool)
		b = append(b, `,"input":`...)
		b = append(b, r.toolInput()...)
		b = append(b, "}}"...)
		stop = "tool_use"
	} else {
		b = append(b, `{"text":"`+answerPrefix...)
		b = jsonstr.AppendEscaped(b, r.text)
		b = append(b, `"}`...)
		if r.cut {
			stop = "max_tokens"
		}
	}
	b = append(b, `]}},"stopReason":"`...)
	b = r.appendStop(b, stop)
	if !r.noUsage {
		b = append(b, ',')
		b = r.appendUsage(b)
	}
	return append(b, `,"metrics":{"latencyMs":1}}`...)
}

// stream builds the ConverseStream answer: messageStart, the answer (or
// the tool input) in chunks content deltas, contentBlockStop, messageStop
// and metadata with the usage (without it when NoUsage). Deltas carry a
// "p" padding field as Bedrock's do.
func (r *bedrockReply) stream(chunks int) *stream {
	if chunks <= 0 {
		chunks = defaultChunks
	}
	sm := &stream{contentType: bedrockEventStreamType, buf: make([]byte, 0, (chunks+5)*160+len(r.text))}
	enc := eventstream.NewEncoder()
	w := bytes.NewBuffer(nil)
	event := func(typ string, payload []byte) {
		w.Reset()
		// Encoding into a bytes.Buffer cannot fail.
		_ = enc.Encode(w, eventstream.Message{
			Headers: eventstream.Headers{
				{Name: ":event-type", Value: eventstream.StringValue(typ)},
				{Name: ":content-type", Value: eventstream.StringValue("application/json")},
				{Name: ":message-type", Value: eventstream.StringValue("event")},
			},
			Payload: payload,
		})
		sm.buf = append(sm.buf, w.Bytes()...)
		sm.end()
	}
	event("messageStart", []byte(`{"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW","role":"assistant"}`))
	content, stop := answerPrefix+r.text, "end_turn"
	if r.cut {
		stop = "max_tokens"
	}
	if r.tool != "" {
		content, stop = r.toolInput(), "tool_use"
		p := []byte(`{"contentBlockIndex":0,"p":"abcd","start":{"toolUse":{"name":`)
		p = jsonstr.Append(p, r.tool)
		p = append(p, `,"toolUseId":`...)
		p = jsonstr.Append(p, r.toolID)
		event("contentBlockStart", append(p, "}}}"...))
	}
	sm.first = len(sm.ends)
	pieces(content, chunks, func(piece string) {
		p := []byte(`{"contentBlockIndex":0,"delta":{`)
		if r.tool != "" {
			p = append(p, `"toolUse":{"input":`...)
			p = jsonstr.Append(p, piece)
			p = append(p, '}')
		} else {
			p = append(p, `"text":`...)
			p = jsonstr.Append(p, piece)
		}
		event("contentBlockDelta", append(p, `},"p":"abcdefghijklm"}`...))
	})
	sm.last = len(sm.ends)
	event("contentBlockStop", []byte(`{"contentBlockIndex":0,"p":"abcdefghijklmnopqrstu"}`))
	event("messageStop", append(r.appendStop([]byte(`{"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJK","stopReason":"`), stop), '}'))
	meta := []byte(`{"metrics":{"latencyMs":1},"p":"abcdefghijkl"`)
	if !r.noUsage {
		meta = append(meta, ',')
		meta = r.appendUsage(meta)
	}
	event("metadata", append(meta, '}'))
	return sm
}

// serveBedrockInvoke answers InvokeModel for the Titan and Cohere
// embedding models, with vectors like the OpenAI format's and the input
// token count in X-Amzn-Bedrock-Input-Token-Count (both left out with
// NoUsage).
func (s *Server) serveBedrockInvoke(ctx *fasthttp.RequestCtx, model string, st Step) {
	var in struct {
		InputText *string  `json:"inputText"`
		Texts     []string `json:"texts"`
	}
	if err := json.Unmarshal(ctx.PostBody(), &in); err != nil {
		writeBedrockError(ctx, fasthttp.StatusBadRequest, "ValidationException", "Malformed input request, please reformat your input and try again (mock).")
		return
	}
	titan := strings.Contains(model, "amazon.titan-embed")
	switch {
	case titan && in.InputText == nil:
		writeBedrockError(ctx, fasthttp.StatusBadRequest, "ValidationException", "Malformed input request: required key [inputText] not found (mock).")
		return
	case !titan && strings.Contains(model, "cohere.embed") && len(in.Texts) == 0:
		writeBedrockError(ctx, fasthttp.StatusBadRequest, "ValidationException", "Malformed input request: texts must not be empty (mock).")
		return
	case !titan && !strings.Contains(model, "cohere.embed"):
		writeBedrockError(ctx, fasthttp.StatusBadRequest, "ValidationException", "The mock serves InvokeModel only for amazon.titan-embed and cohere.embed models.")
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
	if st.Status != 0 {
		ctx.SetStatusCode(st.Status)
	}
	b := make([]byte, 0, 256)
	tokens := 0
	if titan {
		tokens = max(words(*in.InputText), 1)
		b = append(b, `{"embedding":`...)
		b = appendEmbedding(b, embedding(*in.InputText), false)
		if !st.NoUsage {
			b = append(b, `,"inputTextTokenCount":`...)
			b = strconv.AppendInt(b, int64(tokens), 10)
		}
	} else {
		b = append(b, `{"embeddings":[`...)
		for i, t := range in.Texts {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendEmbedding(b, embedding(t), false)
			tokens += max(words(t), 1)
		}
		b = append(b, `],"id":"mock-`...)
		b = strconv.AppendUint(b, s.seq.Add(1), 10)
		b = append(b, `","response_type":"embeddings_floats","texts":[`...)
		for i, t := range in.Texts {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, strings.ToLower(t))
		}
		b = append(b, ']')
	}
	if !st.NoUsage {
		ctx.Response.Header.Set("X-Amzn-Bedrock-Input-Token-Count", strconv.Itoa(tokens))
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(append(b, '}'))
}

// checkSigV4 checks the request's SigV4 headers. It returns status 0 when
// they are acceptable, else the status, error type and message to answer.
func checkSigV4(ctx *fasthttp.RequestCtx, rawPath string) (int, string, string) {
	auth := string(ctx.Request.Header.Peek("Authorization"))
	date := string(ctx.Request.Header.Peek("X-Amz-Date"))
	if !strings.HasPrefix(auth, sigV4Prefix) || date == "" {
		return fasthttp.StatusForbidden, "MissingAuthenticationTokenException",
			"Missing Authentication Token: requests need a SigV4 Authorization header and X-Amz-Date (mock)."
	}
	credential, _, _ := strings.Cut(auth[len(sigV4Prefix):], ",")
	scope := strings.Split(credential, "/") // key id, date, region, service, aws4_request
	_, signed, _ := strings.Cut(auth, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	if len(scope) != 5 || scope[4] != "aws4_request" || signed == "" || !strings.Contains(auth, "Signature=") {
		return fasthttp.StatusForbidden, "IncompleteSignatureException",
			"Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' (mock)."
	}
	if scope[0] != MockAccessKeyID {
		return 0, "", ""
	}
	signingTime, err := time.Parse(amzDateFormat, date)
	if err != nil {
		return fasthttp.StatusForbidden, "IncompleteSignatureException", "X-Amz-Date must be in the format YYYYMMDD'T'HHMMSS'Z' (mock)."
	}
	body := ctx.PostBody()
	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	if h := ctx.Request.Header.Peek("X-Amz-Content-Sha256"); len(h) > 0 && string(h) != payloadHash {
		return fasthttp.StatusBadRequest, "ValidationException", "The provided x-amz-content-sha256 header does not match what was computed (mock)."
	}
	path, err := url.PathUnescape(rawPath)
	if err != nil {
		return fasthttp.StatusBadRequest, "ValidationException", "Invalid path (mock)."
	}
	hr := &http.Request{
		Method: string(ctx.Method()),
		URL:    &url.URL{Path: path, RawPath: rawPath, RawQuery: string(ctx.URI().QueryString())},
		Host:   string(ctx.Host()),
		Header: http.Header{},
	}
	for _, name := range strings.Split(signed, ";") {
		switch name {
		case "host":
		case "content-length":
			hr.ContentLength = int64(len(body))
		default:
			hr.Header[http.CanonicalHeaderKey(name)] = []string{string(ctx.Request.Header.Peek(name))}
		}
	}
	creds := aws.Credentials{AccessKeyID: MockAccessKeyID, SecretAccessKey: MockSecretAccessKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, hr, payloadHash, scope[3], scope[2], signingTime); err != nil ||
		hr.Header.Get("Authorization") != auth {
		return fasthttp.StatusForbidden, "InvalidSignatureException",
			"The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method (mock)."
	}
	return 0, "", ""
}

// bedrockFail answers a Step's error status or raw body, after its latency.
func bedrockFail(ctx *fasthttp.RequestCtx, st Step) {
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
	typ, msg := bedrockErrorFor(status)
	writeBedrockError(ctx, status, typ, msg)
}

// bedrockErrorFor is the error Bedrock answers with a status, as near as
// the mock needs.
func bedrockErrorFor(status int) (typ, msg string) {
	switch status {
	case 400:
		return "ValidationException", "Malformed input request (mock)."
	case 401:
		return "UnrecognizedClientException", "The security token included in the request is invalid (mock)."
	case 403:
		return "AccessDeniedException", "You don't have access to the model with the specified model ID (mock)."
	case 404:
		return "ResourceNotFoundException", "Could not resolve the foundation model from the provided model identifier (mock)."
	case 408:
		return "ModelTimeoutException", "Model has timed out in processing the request (mock)."
	case 424:
		return "ModelErrorException", "The model returned an error (mock)."
	case 429:
		return "ThrottlingException", "Too many requests, please wait before trying again (mock)."
	case 503:
		return "ServiceUnavailableException", "Bedrock is unable to process your request (mock)."
	}
	if status >= 500 {
		return "InternalServerException", "The server encountered an internal error (mock)."
	}
	return "ValidationException", "Request failed with status " + strconv.Itoa(status) + " (mock)."
}

// writeBedrockError answers an error in Bedrock's shape: the error type in
// x-amzn-ErrorType and {"message":…}.
func writeBedrockError(ctx *fasthttp.RequestCtx, status int, typ, msg string) {
	ctx.SetStatusCode(status)
	ctx.Response.Header.Set("X-Amzn-ErrorType", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	ctx.SetContentType("application/json")
	b := append([]byte(`{"message":`), jsonstr.Append(nil, msg)...)
	ctx.Response.SetBodyRaw(append(b, '}'))
}
