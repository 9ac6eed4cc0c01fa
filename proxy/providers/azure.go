package providers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/proxy/sse"
)

const (
	// AzureDefaultAPIVersion is the api-version sent when the key's options
	// name none: the latest GA version of the Azure OpenAI data-plane API
	// at the time of writing, and the first GA one that accepts
	// stream_options (so streams report their usage).
	AzureDefaultAPIVersion = "2024-10-21"
	// azureUsageSince is the first api-version (preview included) that
	// accepts stream_options.include_usage; older versions refuse the
	// field, so it is not added for them.
	azureUsageSince = "2024-09-01"
)

// Azure is the adapter for Azure OpenAI's deployment-based API:
//
//	POST {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=…
//
// and the same for /completions and /embeddings, with the key in the
// api-key header. The endpoint is the key's base_url when it has one (a
// custom domain, a proxy, or a test server), else
// https://{options.resource}.openai.azure.com. The deployment is
// options.deployments[model], or the model itself when the key maps none.
//
// Everything else is the OpenAI wire format, so the body rewrite, usage
// reading and stream iterator are the OpenAI adapter's: the body keeps its
// "model" (Azure ignores it; the deployment decides), and streams get
// stream_options.include_usage. Azure's errors are OpenAI-shaped and are
// passed on with their status, content-filter refusals (400, code
// content_filter) included; a filtered answer (finish_reason
// content_filter) is relayed as it is.
//
// The catalog says Azure OpenAI serves chat, completions and embeddings,
// so Azure implements Completer and Embedder.
type Azure struct {
	c *Client
}

var (
	_ Provider  = (*Azure)(nil)
	_ Completer = (*Azure)(nil)
	_ Embedder  = (*Azure)(nil)
)

// newAzure returns the azure-openai adapter, which sends its calls
// through c.
func newAzure(c *Client) Provider { return &Azure{c: c} }

// Name returns "azure-openai".
func (a *Azure) Name() string { return "azure-openai" }

// Chat sends a chat completion and waits for the whole answer.
func (a *Azure) Chat(ctx context.Context, req *Request) (*Response, error) {
	return a.call(ctx, req, "chat/completions")
}

// ChatStream sends a streamed chat completion.
func (a *Azure) ChatStream(ctx context.Context, req *Request) (Stream, error) {
	return a.stream(ctx, req, "chat/completions")
}

// Complete sends a legacy text completion.
func (a *Azure) Complete(ctx context.Context, req *Request) (*Response, error) {
	return a.call(ctx, req, "completions")
}

// CompleteStream sends a streamed legacy text completion.
func (a *Azure) CompleteStream(ctx context.Context, req *Request) (Stream, error) {
	return a.stream(ctx, req, "completions")
}

// Embed sends an embeddings request.
func (a *Azure) Embed(ctx context.Context, req *Request) (*Response, error) {
	return a.call(ctx, req, "embeddings")
}

// azureDeployment is the deployment that serves req.Model.
func azureDeployment(req *Request) string {
	if d := req.Cred.Options.Deployments[req.Model]; d != "" {
		return d
	}
	return req.Model
}

// azureAPIVersion is the key's api-version, or the default.
func azureAPIVersion(req *Request) string {
	if v := req.Cred.Options.APIVersion; v != "" {
		return v
	}
	return AzureDefaultAPIVersion
}

// azureStreamUsage reports whether api-version accepts
// stream_options.include_usage. Dated versions compare by their date
// (2024-09-01-preview and later do); anything else ("preview", "latest")
// is taken to be current.
func azureStreamUsage(version string) bool {
	if len(version) < len(azureUsageSince) || version[4] != '-' || version[7] != '-' {
		return true
	}
	return version[:len(azureUsageSince)] >= azureUsageSince
}

// azureHTTPRequest describes the call of operation op ("chat/completions",
// "completions", "embeddings") for req. A base URL that ends in /openai
// (the form the OpenAI SDKs' base_url takes) is not given a second one.
func azureHTTPRequest(req *Request, op string, body []byte) (HTTPRequest, error) {
	base := strings.TrimRight(req.Cred.BaseURL, "/")
	if base == "" {
		if req.Cred.Options.Resource == "" {
			return HTTPRequest{}, fmt.Errorf("provider azure-openai: the key has neither base_url nor options.resource")
		}
		base = "https://" + req.Cred.Options.Resource + ".openai.azure.com"
	}
	base = strings.TrimSuffix(base, "/openai")
	deployment := azureDeployment(req)
	if deployment == "" {
		return HTTPRequest{}, &Error{Status: http.StatusBadRequest, Message: "azure-openai: the request names no model, so no deployment"}
	}
	path := "openai/deployments/" + url.PathEscape(deployment) + "/" + op +
		"?api-version=" + url.QueryEscape(azureAPIVersion(req))
	return HTTPRequest{
		BaseURL:   base,
		Path:      path,
		Key:       req.Cred.Key,
		KeyHeader: "api-key", // the key as it is, without "Bearer "
		Header:    req.Header,
		Body:      body,
		Deadline:  req.Deadline,
	}, nil
}

// call does a non-streamed operation: the OpenAI adapter's, at Azure's URL.
func (a *Azure) call(ctx context.Context, req *Request, op string) (*Response, error) {
	bp := bodyBufs.Get().(*[]byte)
	defer putBodyBuf(bp)
	body, err := rewriteBody((*bp)[:0], req.Body, req.Model, false, openAICap("azure-openai", req))
	*bp = body
	if err != nil {
		return nil, err
	}
	hr, err := azureHTTPRequest(req, op, body)
	if err != nil {
		return nil, err
	}
	resp, err := a.c.Do(ctx, &hr)
	if err != nil {
		return nil, err
	}
	p := bodyParsers.Get()
	defer bodyParsers.Put(p)
	usage, model, err := inspectAnswer(p, resp.Body, req.Cred.Key)
	if err != nil {
		return nil, err
	}
	return &Response{Body: resp.Body, Usage: usage, Model: model}, nil
}

// stream starts a streamed operation. For api-versions that predate
// stream_options, the body is sent as the client wrote it (its "stream"
// is true), and the gateway estimates the usage.
func (a *Azure) stream(ctx context.Context, req *Request, op string) (Stream, error) {
	bp := bodyBufs.Get().(*[]byte)
	defer putBodyBuf(bp)
	body, err := rewriteBody((*bp)[:0], req.Body, req.Model, azureStreamUsage(azureAPIVersion(req)), openAICap("azure-openai", req))
	*bp = body
	if err != nil {
		return nil, err
	}
	hr, err := azureHTTPRequest(req, op, body)
	if err != nil {
		return nil, err
	}
	sr, err := a.c.Stream(ctx, &hr)
	if err != nil {
		return nil, err
	}
	return openAIEventStream(sr, req)
}

// openAIEventStream presents sr, an OpenAI-format event stream, as a
// Stream, once notAStream has found nothing wrong with it.
func openAIEventStream(sr *StreamResponse, req *Request) (Stream, error) {
	if err := notAStream(sr, req.Cred.Key); err != nil {
		return nil, err
	}
	return &openaiStream{
		resp:      sr,
		events:    sse.NewReader(sr, maxStreamEvent),
		parser:    bodyParsers.Get(),
		wantUsage: req.ClientWantsUsage,
		key:       req.Cred.Key,
	}, nil
}

// notAStream reports a streamed answer that is no event stream: an
// upstream that ignored "stream" answers application/json, a proxy in
// the way may answer HTML. It then reads what it needs of the body,
// closes sr and returns a 502 with the upstream's message. Other
// types (text/event-stream, and any +json type) are taken to be streams.
func notAStream(sr *StreamResponse, key secret.Value) error {
	ct := sr.Header("Content-Type")
	mt, _, _ := bytes.Cut(ct, []byte(";"))
	if !bytes.EqualFold(bytes.TrimSpace(mt), []byte("application/json")) && !bytes.Contains(ct, []byte("html")) {
		return nil
	}
	raw, _ := io.ReadAll(io.LimitReader(sr, maxErrorBody))
	_ = sr.Close()
	msg := scrub(errorMessage(raw), key)
	if msg == "" {
		msg = errInvalidResponse
	}
	return &Error{Status: http.StatusBadGateway, Message: msg}
}
