package openai

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
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
// Everything else is the OpenAI codec: Azure differs only in its URL and
// its auth header, so the body rewrite, usage reading and stream
// iterator are OpenAI's: the body keeps its "model" (Azure ignores it; the
// deployment decides), and streams get stream_options.include_usage when
// the api-version accepts it. Azure's errors are OpenAI-shaped and are
// passed on with their status, content-filter refusals (400, code
// content_filter) included; a filtered answer (finish_reason
// content_filter) is relayed as it is.
//
// The catalog says Azure OpenAI serves chat, completions and embeddings,
// so Azure implements Completer and Embedder.
type Azure struct {
	c *providers.Client
}

var (
	_ providers.Provider  = (*Azure)(nil)
	_ providers.Completer = (*Azure)(nil)
	_ providers.Embedder  = (*Azure)(nil)
	_ providers.Codec     = (*Azure)(nil)
)

// NewAzure returns the azure-openai adapter, which sends its calls
// through c.
func NewAzure(c *providers.Client) providers.Provider { return &Azure{c: c} }

// Name returns "azure-openai".
func (a *Azure) Name() string { return "azure-openai" }

// Chat sends a chat completion and waits for the whole answer.
func (a *Azure) Chat(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return providers.Call(ctx, a.c, a, req, llm.OpChat)
}

// ChatStream sends a streamed chat completion.
func (a *Azure) ChatStream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return providers.OpenStream(ctx, a.c, a, req, llm.OpChat)
}

// Complete sends a legacy text completion.
func (a *Azure) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return providers.Call(ctx, a.c, a, req, llm.OpCompletions)
}

// CompleteStream sends a streamed legacy text completion.
func (a *Azure) CompleteStream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return providers.OpenStream(ctx, a.c, a, req, llm.OpCompletions)
}

// Embed sends an embeddings request.
func (a *Azure) Embed(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return providers.Call(ctx, a.c, a, req, llm.OpEmbeddings)
}

// azureDeployment is the deployment that serves req.Model.
func azureDeployment(req *providers.Request) string {
	if d := req.Cred.Options.Deployments[req.Model]; d != "" {
		return d
	}
	return req.Model
}

// azureAPIVersion is the key's api-version, or the default.
func azureAPIVersion(req *providers.Request) string {
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

// EncodeRequest is the OpenAI codec's body at Azure's URL with the
// api-key header. A base URL that ends in /openai (the form the OpenAI
// SDKs' base_url takes) is not given a second one. For api-versions that
// predate stream_options, a streamed body is sent as the client wrote it
// (its "stream" is true), and the gateway estimates the usage.
func (a *Azure) EncodeRequest(_ context.Context, req *providers.Request, op llm.Operation, stream bool) (providers.Encoded, error) {
	enc, err := encodeOpenAIBody(req, "azure-openai", stream && azureStreamUsage(azureAPIVersion(req)))
	if err != nil {
		return enc, err
	}
	hr, err := azureHTTPRequest(req, op.String(), enc.HTTP.Body)
	enc.HTTP = hr
	return enc, err
}

// azureHTTPRequest describes the call of operation op ("chat/completions",
// "completions", "embeddings") for req: where Azure differs from OpenAI.
func azureHTTPRequest(req *providers.Request, op string, body []byte) (providers.HTTPRequest, error) {
	base := strings.TrimRight(req.Cred.BaseURL, "/")
	if base == "" {
		if req.Cred.Options.Resource == "" {
			return providers.HTTPRequest{}, fmt.Errorf("provider azure-openai: the key has neither base_url nor options.resource")
		}
		base = "https://" + req.Cred.Options.Resource + ".openai.azure.com"
	}
	base = strings.TrimSuffix(base, "/openai")
	deployment := azureDeployment(req)
	if deployment == "" {
		return providers.HTTPRequest{}, &providers.Error{Status: http.StatusBadRequest, Message: "azure-openai: the request names no model, so no deployment"}
	}
	return providers.HTTPRequest{
		BaseURL:   base,
		Path:      "openai/deployments/" + url.PathEscape(deployment) + "/" + op + "?api-version=" + url.QueryEscape(azureAPIVersion(req)),
		Key:       req.Cred.Key,
		KeyHeader: "api-key", // the key as it is, without "Bearer "
		Header:    req.Header,
		// The trace context, sent as the traceparent header.
		Traceparent: req.Traceparent,
		Body:        body,
		Deadline:    req.Deadline,
	}, nil
}

// DecodeResponse is the OpenAI codec's.
func (a *Azure) DecodeResponse(body []byte, req *providers.Request, _ any) (*providers.Response, error) {
	return decodeOpenAIResponse(body, req)
}

// DecodeStream is the OpenAI codec's.
func (a *Azure) DecodeStream(sr *providers.StreamResponse, req *providers.Request, _ any) (providers.Stream, error) {
	return decodeOpenAIStream(sr, req), nil
}

// DecodeError returns err, as the OpenAI codec does.
func (a *Azure) DecodeError(err error, _ *providers.Request) error { return err }
