package providertest

import (
	"bytes"
	"net/url"
	"regexp"
	"strconv"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/jsonstr"
)

// The Azure OpenAI wire format: the OpenAI format under deployment paths,
//
//	POST /openai/deployments/{deployment}/chat/completions?api-version=…
//	POST /openai/deployments/{deployment}/completions?api-version=…
//	POST /openai/deployments/{deployment}/embeddings?api-version=…
//
// with the key in an api-key header (else 401) and a dated api-version
// (2024-10-21, 2025-01-01-preview; else 404, as Azure answers). Errors
// have Azure's shape {"error":{"code","message"}}; an unknown operation
// is a 404.
//
// The deployment plays the model's part: the body's "model" is ignored, as
// Azure ignores it, and the answer names the deployment (without its
// directives). Everything else — answers, usage, streams, Steps and
// model-name directives, which go in the deployment name
// ("gpt-4o-mini@chunks=5") — is the OpenAI format's.

// azurePrefix starts every Azure OpenAI path.
const azurePrefix = "/openai/deployments/"

// azureAPIVersion is what the mock accepts as an api-version.
var azureAPIVersion = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(-preview)?$`)

// azureRoutes registers the paths of the Azure OpenAI (/openai/deployments/{deployment}/…?api-version=…) wire format.
func (s *Server) azureRoutes() {
	s.prefixRoutes = append(s.prefixRoutes, prefixRoute{prefix: azurePrefix, ep: s.serveAzure})
}

// azureOps maps the operation part of a path to the OpenAI kind.
var azureOps = map[string]openAIKind{
	"chat/completions": openAIChat,
	"completions":      openAICompletion,
	"embeddings":       openAIEmbedding,
}

var azureParsers fastjson.ParserPool

func (s *Server) serveAzure(ctx *fasthttp.RequestCtx, st Step) {
	// The raw path: a deployment may hold an escaped '/'.
	rest, ok := bytes.CutPrefix(ctx.URI().PathOriginal(), []byte(azurePrefix))
	i := bytes.IndexByte(rest, '/')
	kind, known := openAIKind(0), false
	if ok && i > 0 {
		kind, known = azureOps[string(rest[i+1:])]
	}
	deployment := ""
	if known {
		d, err := url.PathUnescape(string(rest[:i]))
		deployment, known = d, err == nil && d != ""
	}
	switch {
	case !ctx.IsPost():
		writeAzureError(ctx, fasthttp.StatusMethodNotAllowed, "405", "The requested method is not allowed; use POST.")
		return
	case st.Status >= 400 || st.Body != "":
		azureFail(ctx, st)
		return
	case len(bytes.TrimSpace(ctx.Request.Header.Peek("api-key"))) == 0:
		writeAzureError(ctx, fasthttp.StatusUnauthorized, "401",
			"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.")
		return
	case !known || !azureAPIVersion.Match(ctx.QueryArgs().Peek("api-version")):
		writeAzureError(ctx, fasthttp.StatusNotFound, "404", "Resource not found")
		return
	}
	// The OpenAI format does the rest: it reads the key from Authorization
	// and the model from the body, so both are set from Azure's.
	p := azureParsers.Get()
	defer azureParsers.Put(p)
	v, err := p.ParseBytes(ctx.PostBody())
	if err != nil || v.Type() != fastjson.TypeObject {
		writeAzureError(ctx, fasthttp.StatusBadRequest, "BadRequest", "The request body is not a JSON object (mock).")
		return
	}
	var a fastjson.Arena
	v.Set("model", a.NewString(deployment))
	ctx.Request.SetBodyRaw(v.MarshalTo(nil))
	ctx.Request.Header.Set("Authorization", "Bearer "+string(ctx.Request.Header.Peek("api-key")))
	s.serveOpenAI(ctx, kind, st)
}

// azureFail answers a Step's error status or raw body, after its latency.
func azureFail(ctx *fasthttp.RequestCtx, st Step) {
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
	code, msg := strconv.Itoa(status), "Request failed with status "+strconv.Itoa(status)+" (mock)."
	switch status {
	case 400:
		// Azure's most distinctive 400: the prompt was filtered.
		ctx.SetStatusCode(status)
		ctx.SetContentType("application/json")
		ctx.SetBodyString(azureContentFilterError)
		return
	case 429:
		msg = "Requests to the ChatCompletions_Create Operation under Azure OpenAI API have exceeded token rate limit of your current pricing tier (mock)."
	case 500:
		code, msg = "InternalServerError", "The server had an error while processing your request (mock)."
	}
	writeAzureError(ctx, status, code, msg)
}

// azureContentFilterError is the 400 Azure answers when its content
// filter refuses a prompt.
const azureContentFilterError = `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry (mock).","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":true,"severity":"medium"}}}}}`

// writeAzureError answers an error in Azure's shape:
// {"error":{"code":…,"message":…}}.
func writeAzureError(ctx *fasthttp.RequestCtx, status int, code, msg string) {
	b := make([]byte, 0, 64+len(code)+len(msg))
	b = append(b, `{"error":{"code":`...)
	b = jsonstr.Append(b, code)
	b = append(b, `,"message":`...)
	b = jsonstr.Append(b, msg)
	b = append(b, "}}"...)
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.Response.SetBodyRaw(b)
}
