// Package bedrock is the codec of Amazon Bedrock: the Converse and
// ConverseStream APIs (AWS event-stream framing, SigV4-signed calls) for
// chat, and InvokeModel for the Titan and Cohere embedding models,
// translated from and to the OpenAI schema.
package bedrock

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/encoding/httpbinding"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/proxy/providers"
)

// The Bedrock adapter speaks the Bedrock runtime API: Converse and
// ConverseStream for chat, InvokeModel for the Titan and Cohere embedding
// models. Every request is signed with SigV4 by the AWS SDK's signer; the
// call itself goes through the shared fasthttp Client. The files:
//
//	bedrock.go          the adapter: endpoint, signing, calls, errors
//	bedrock_request.go  OpenAI chat request → Converse request
//	bedrock_answer.go   Converse answer → chat.completion; usage
//	bedrock_stream.go   ConverseStream event stream → chat.completion.chunk
//	bedrock_embed.go    OpenAI embeddings ↔ InvokeModel (Titan, Cohere)

const (
	// service is the SigV4 signing name of the Bedrock runtime.
	service = "bedrock"
	// fallbackRegion signs requests of a key that has a base_url
	// but no options.region (a proxy or a mock in front of Bedrock).
	fallbackRegion = "us-east-1"
)

// Bedrock is the adapter for Amazon Bedrock. A key's secret is the AWS
// secret access key; options.access_key_id and options.region complete
// the credential, and base_url, when set, replaces
// https://bedrock-runtime.{region}.amazonaws.com.
type Bedrock struct {
	c      *providers.Client
	signer *v4.Signer
	// now is the signing time and the "created" of answers; newID makes
	// answer ids. Tests fix both.
	now   func() time.Time
	newID func() string
}

var (
	_ providers.Codec     = (*Bedrock)(nil)
	_ providers.Provider  = (*Bedrock)(nil)
	_ providers.Embedder  = (*Bedrock)(nil)
	_ providers.Validator = (*Bedrock)(nil)
)

// New returns the Bedrock adapter, which sends its calls through c.
func New(c *providers.Client) *Bedrock {
	return &Bedrock{c: c, signer: v4.NewSigner(), now: time.Now, newID: randomID}
}

// Name returns "bedrock".
func (b *Bedrock) Name() string { return "bedrock" }

// Validate refuses, before any attempt, what Bedrock cannot serve: n > 1,
// image URLs, response_format JSON modes, seed, logprobs, … for chat, and
// model families without an embeddings mapping for embeddings.
func (b *Bedrock) Validate(req *providers.Request) error {
	if req.Op == llm.OpEmbeddings {
		_, err := embedPlan(req)
		return err
	}
	_, err := converseBody(req.Body, req.Neutral, callOf(req, req.Stream))
	return err
}

// Chat sends a Converse request and translates the answer.
func (b *Bedrock) Chat(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return providers.Call(ctx, b.c, b, req, llm.OpChat)
}

// ChatStream sends a ConverseStream request. It returns once Bedrock
// answered with a success status and the stream's first chunk arrived (or
// the exception sent in its place, as an *Error).
func (b *Bedrock) ChatStream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return providers.OpenStream(ctx, b.c, b, req, llm.OpChat)
}

// EncodeRequest translates a chat request into a signed Converse (or
// ConverseStream) call.
func (b *Bedrock) EncodeRequest(ctx context.Context, req *providers.Request, _ llm.Operation, stream bool) (providers.Encoded, error) {
	body, err := converseBody(req.Body, req.Neutral, callOf(req, stream))
	if err != nil {
		return providers.Encoded{}, err
	}
	op := "converse"
	if stream {
		op = "converse-stream"
	}
	hr, err := b.httpRequest(ctx, req, op, body)
	return providers.Encoded{HTTP: hr}, err
}

// DecodeResponse translates a Converse answer into a chat completion.
func (b *Bedrock) DecodeResponse(body []byte, req *providers.Request, _ any) (*providers.Response, error) {
	p := providers.BodyParsers.Get()
	defer providers.BodyParsers.Put(p)
	out, usage, err := chatAnswer(p, body, b.answerMeta(req))
	if err != nil {
		return nil, scrubbed(err, req.Cred)
	}
	return &providers.Response{Body: out, Usage: usage}, nil
}

// DecodeStream translates a ConverseStream event stream into chunks.
//
// Bedrock reports throttling and overload as often in the stream as with
// a status. Reading up to the first chunk here gives an exception that
// arrives before any content its real status, while it can still be
// retried: nothing has reached the client yet.
func (b *Bedrock) DecodeStream(sr *providers.StreamResponse, req *providers.Request, _ any) (providers.Stream, error) {
	s := newBedrockStream(sr, b.answerMeta(req), req.ClientWantsUsage, req.Cred)
	s.resp = sr
	first, err := s.Next()
	if err != nil {
		_ = s.Close()
		if err == io.EOF {
			return nil, &providers.Error{Status: http.StatusBadGateway, Message: "the bedrock stream ended without content"}
		}
		return nil, err
	}
	s.pending = first
	return s, nil
}

// DecodeError scrubs the key's access key id, as well as its secret, from
// the message of a failed call.
func (b *Bedrock) DecodeError(err error, req *providers.Request) error {
	return scrubbed(err, req.Cred)
}

// callOf is the translation's view of req (request.go).
func callOf(req *providers.Request, stream bool) call {
	return call{model: req.Model, capOut: req.MaxOutputTokens, stream: stream, beta: req.AnthropicBeta}
}

// answerMeta is what every answer to req is stamped with.
func (b *Bedrock) answerMeta(req *providers.Request) meta {
	return meta{id: "chatcmpl-" + b.newID(), created: b.now().Unix(), model: req.Model, thinkingBlocks: req.ThinkingBlocks}
}

// target is where and as whom a key's requests go.
type target struct {
	origin string // scheme://host[:port], the port only when not the default
	prefix string // the base URL's path, escaped, without a trailing slash
	region string
	creds  aws.Credentials
}

// targetOf resolves the endpoint and credentials of cred.
func targetOf(ctx context.Context, cred providers.Credential) (target, error) {
	region := cred.Options.Region
	var t target
	if cred.BaseURL == "" {
		if region == "" {
			return t, &providers.Error{Status: http.StatusBadRequest, Message: "the bedrock key has no options.region and no base_url"}
		}
		// The region is held to DNS-label characters by the admin API;
		// checked again here because it becomes part of a host name.
		if !regionOK(region) {
			return t, &providers.Error{Status: http.StatusBadRequest, Message: "the bedrock key's options.region is not an AWS region"}
		}
		t.origin = "https://bedrock-runtime." + region + ".amazonaws.com"
	} else {
		u, err := url.Parse(cred.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return t, &providers.Error{Status: http.StatusBadRequest, Message: "the bedrock key's base_url is not an absolute http(s) URL"}
		}
		host := u.Host
		// A default port is dropped so that the Host header fasthttp sends
		// and the host the signer signs are the same string.
		if h, port, err := net.SplitHostPort(host); err == nil &&
			(u.Scheme == "https" && port == "443" || u.Scheme == "http" && port == "80") {
			host = h
			if strings.Contains(h, ":") {
				host = "[" + h + "]"
			}
		}
		t.origin = u.Scheme + "://" + host
		t.prefix = strings.TrimRight(u.EscapedPath(), "/")
		if region == "" {
			region = fallbackRegion
		}
	}
	t.region = region
	creds, err := credentials.NewStaticCredentialsProvider(cred.Options.AccessKeyID, cred.Key.Reveal(), "").Retrieve(ctx)
	if err != nil {
		return t, &providers.Error{Status: http.StatusUnauthorized,
			Message: "the bedrock key needs options.access_key_id and the secret access key as its key"}
	}
	t.creds = creds
	return t, nil
}

func regionOK(r string) bool {
	if r == "" || len(r) > 32 {
		return false
	}
	for i := 0; i < len(r); i++ {
		if c := r[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// httpRequest builds the signed call of operation op ("converse",
// "converse-stream", "invoke") on req's model.
//
// The signature is computed by the AWS SDK's SigV4 signer on a net/http
// request built only for that, carrying exactly the headers fasthttp will
// send and sign-worthy: Host, Content-Type, X-Amz-Date and
// X-Amz-Content-Sha256. Propagated headers (traceparent) are sent
// unsigned, which SigV4 allows.
func (b *Bedrock) httpRequest(ctx context.Context, req *providers.Request, op string, body []byte) (providers.HTTPRequest, error) {
	t, err := targetOf(ctx, req.Cred)
	if err != nil {
		return providers.HTTPRequest{}, err
	}
	if req.Model == "" {
		return providers.HTTPRequest{}, &providers.Error{Status: http.StatusBadRequest, Message: "bedrock needs a model id"}
	}
	// Model ids carry ':' (and ARNs '/'): every byte but the unreserved
	// ones is escaped, as the AWS SDKs do.
	path := t.prefix + "/model/" + httpbinding.EscapePath(req.Model, true) + "/" + op
	rawPath, err := url.PathUnescape(path)
	if err != nil {
		return providers.HTTPRequest{}, &providers.Error{Status: http.StatusBadRequest, Message: "the bedrock key's base_url has an invalid path"}
	}
	u, err := url.Parse(t.origin)
	if err != nil {
		return providers.HTTPRequest{}, &providers.Error{Status: http.StatusBadRequest, Message: "the bedrock key's base_url is not a valid URL"}
	}
	u.Path, u.RawPath = rawPath, path

	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	sr := &http.Request{
		Method: http.MethodPost,
		URL:    u,
		Host:   u.Host,
		Header: http.Header{
			"Content-Type":         {"application/json"},
			"X-Amz-Content-Sha256": {payloadHash},
		},
	}
	if err := b.signer.SignHTTP(ctx, t.creds, sr, payloadHash, service, t.region, b.now()); err != nil {
		return providers.HTTPRequest{}, &providers.Error{Err: fmt.Errorf("sign bedrock request: %w", err)}
	}
	auth := sr.Header.Get("Authorization")
	i := strings.LastIndex(auth, "Signature=")
	if i < 0 {
		return providers.HTTPRequest{}, &providers.Error{Err: errors.New("sign bedrock request: no signature")}
	}
	i += len("Signature=")

	h := make(http.Header, len(req.Header)+3)
	for name, values := range req.Header {
		// The signing headers are the adapter's alone.
		if len(name) < 6 || !strings.EqualFold(name[:6], "x-amz-") {
			h[name] = values
		}
	}
	for _, name := range []string{"X-Amz-Date", "X-Amz-Content-Sha256", "X-Amz-Security-Token"} {
		if v := sr.Header.Get(name); v != "" {
			h.Set(name, v)
		}
	}
	return providers.HTTPRequest{
		BaseURL: t.origin,
		Path:    path,
		// The Authorization header is sent as KeyPrefix+Key: the
		// credential scope and signed headers, then the signature as the
		// "key", so that the client scrubs the signature from errors. The
		// secret access key itself never leaves this process.
		Key:       secret.Value(auth[i:]),
		KeyHeader: "Authorization",
		KeyPrefix: auth[:i],
		Header:    h,
		// The trace context, sent as the traceparent header, unsigned.
		Traceparent: req.Traceparent,
		Body:        body,
		Deadline:    req.Deadline,
	}, nil
}

// Scrub makes an upstream message safe: the client already
// scrubbed the signature; this removes the secret access key and the
// access key id too.
func scrub(msg string, cred providers.Credential) string {
	if msg == "" {
		return ""
	}
	msg = providers.Scrub(msg, cred.Key)
	return providers.Scrub(msg, secret.Value(cred.Options.AccessKeyID))
}

// scrubbed scrubs the message of an *Error in place and returns err.
func scrubbed(err error, cred providers.Credential) error {
	if e := providers.AsError(err); e != nil {
		e.Message = scrub(e.Message, cred)
	}
	return err
}

// meta stamps an answer: its id, creation time and model.
type meta struct {
	id      string
	created int64
	model   string
	// thinkingBlocks keeps an answer's reasoning as thinking_blocks
	// (providers.Request.ThinkingBlocks).
	thinkingBlocks bool
}

// randomID returns 24 random hex digits.
func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// bedrockError is the 400 for a request feature Bedrock cannot serve; the
// message names the provider and the feature.
// bedrockRefusal is the 400 for a feature Bedrock cannot serve.
func bedrockRefusal(format string, args ...any) *providers.Error {
	return providers.Refusal("bedrock " + fmt.Sprintf(format, args...))
}

func bedrockError(format string, args ...any) *providers.Error {
	return &providers.Error{Status: http.StatusBadRequest, Message: "bedrock " + fmt.Sprintf(format, args...)}
}
