// Package providers is what every upstream adapter shares: the Provider
// interface the proxy calls, the HTTP client, the Codec interface and the
// Call and OpenStream functions that own the transport (deadlines,
// cancellation, the connection, secret scrubbing, the classification of
// failed calls). Each wire format is a codec in its own subpackage
// (openai, anthropic, gemini, bedrock, cohere) and presents its provider in
// the OpenAI schema: requests come in as OpenAI JSON, responses and
// stream chunks go out as OpenAI JSON. Package registry maps provider ids
// to codecs.
//
// The core interface is small; what not every provider can do is an
// optional interface (Completer, Embedder), discovered with a type
// assertion, so a missing capability is a clear 400 and never a silent drop.
package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
)

// Credential is one provider key with where and how to use it.
type Credential struct {
	// KeyID identifies the key (provider_keys.id) in logs and breakers.
	KeyID string
	Alias string
	Key   secret.Value
	// BaseURL is the key's base URL or the provider's default, without a
	// trailing slash (OpenAI style: "https://api.openai.com/v1").
	BaseURL string
	Options KeyOptions
}

// KeyOptions are the provider-specific, non-secret settings of a key, in
// the adapters' own vocabulary: the snapshot converts the stored row into
// them, so that no adapter depends on the store.
type KeyOptions struct {
	// Resource is the Azure OpenAI resource name
	// (https://{resource}.openai.azure.com) used when the key has no base URL.
	Resource string
	// Deployments maps a model to its Azure deployment; a model without
	// one is its own deployment.
	Deployments map[string]string
	// APIVersion is the Azure api-version ("" means the default).
	APIVersion string
	// Region is the AWS region of a Bedrock key.
	Region string
	// AccessKeyID is the AWS access key id of a Bedrock key (its secret
	// access key is the key's secret).
	AccessKeyID string
}

// Request is one call to an upstream.
type Request struct {
	Op llm.Operation
	// Model is the provider's own model id.
	Model string
	// Body is the client's request as it came, in the wire format Wire
	// names, validated by the gateway (no duplicate keys, valid UTF-8, no
	// fields that choose a host): the raw side of the neutral model
	// (llm.Request.Raw). Adapters must not modify it: it may be reused for
	// the next attempt. A codec of the same wire passes it through (the
	// OpenAI codec sends a copy with "model" replaced and, for streams,
	// "stream": true and stream_options.include_usage set); a translating
	// codec decodes it into the neutral llm.Request (DecodeChat).
	Body []byte
	// Wire is the format of Body; the zero value is the OpenAI chat
	// completions format, the only front door today and the only wire
	// the codecs read. A door for another wire (Anthropic Messages,
	// OpenAI Responses) sets it, and each codec then passes Body through
	// when it speaks that wire, or reads the neutral llm.Request that
	// door's decoder gives.
	Wire llm.Wire
	// Neutral, when set, is the request decoded by a translating door
	// with what its OpenAI chat Body cannot carry: thinking parts with
	// their signatures and a thinking budget (llm.CarryThinking). A
	// translating codec encodes from it instead of decoding Body; a codec
	// that passes Body on ignores it. nil for most requests.
	Neutral *llm.Request
	// ThinkingBlocks asks a translating codec whose provider signs its
	// thinking (Anthropic) to write an answer's thinking blocks, their
	// signatures included, as message.thinking_blocks
	// (OpenAIOptions.ThinkingBlocks), and a stream's thinking, signatures
	// and redacted thinking as its chunks' delta reasoning_content and
	// thinking_blocks (llm.EventThinking and the like): set by the
	// Messages door, which gives them back to its client.
	ThinkingBlocks bool
	// Stream is the client's "stream" flag.
	Stream bool
	// ClientWantsUsage is true when the client set
	// stream_options.include_usage; adapters that add it upstream drop the
	// extra usage chunk again when this is false.
	ClientWantsUsage bool
	Cred             Credential
	// Traceparent is the W3C trace context sent upstream; empty sends none.
	// A field rather than a Header entry: a map per request cost three
	// allocations (issue 17).
	Traceparent string
	// Header holds other headers to propagate upstream (the Anthropic
	// Messages door's anthropic-version and anthropic-beta).
	Header http.Header
	// AnthropicBeta is the client's anthropic-beta header on the
	// translating Messages door (CONTRACT §12): the Anthropic codec sends
	// it as that header, the Bedrock codec the betas Bedrock knows as
	// Claude's additionalModelRequestFields.anthropic_beta; other codecs
	// ignore it. "" for other doors (the native door forwards the header
	// in Header).
	AnthropicBeta string
	// Deadline bounds the whole call (connect, time to first byte, body).
	Deadline time.Time
	// MaxOutputTokens, when positive, caps the output of each choice of a
	// request that sets no maximum of its own (neither
	// max_completion_tokens nor max_tokens): the gateway reserved budget
	// for that many tokens. Every adapter sends it in its wire format's
	// field (OpenAI max_tokens, or max_completion_tokens for the models
	// that refuse max_tokens; Anthropic max_tokens; Gemini
	// generationConfig.maxOutputTokens; Bedrock inferenceConfig.maxTokens;
	// Cohere max_tokens). Embeddings have no output to cap.
	MaxOutputTokens int64
}

// Response is a complete (non-streamed) answer.
type Response struct {
	// Body is the answer in the OpenAI schema. It is owned by the caller.
	Body  []byte
	Usage llm.Usage
	// Model is the model the upstream says answered, when it says so.
	Model string
}

// Stream is an upstream stream presented as OpenAI chunks.
type Stream interface {
	// Next returns the next chunk: the JSON of one OpenAI
	// chat.completion.chunk (or text completion chunk), without "data: ".
	// The slice is valid until the next call. At the clean end of the
	// stream it returns io.EOF; any other error means the stream broke
	// (an *Error when the upstream said why).
	Next() ([]byte, error)
	// Usage returns the usage seen so far (complete after io.EOF).
	Usage() llm.Usage
	// Close releases the upstream connection; it cancels the upstream
	// call when the stream has not ended. It is safe to call twice.
	Close() error
}

// Provider is an upstream adapter. Chat is the one operation every
// provider serves.
type Provider interface {
	// Name is the provider id ("openai", "anthropic", …).
	Name() string
	// Chat sends a chat completion and waits for the whole answer.
	Chat(ctx context.Context, req *Request) (*Response, error)
	// ChatStream sends a chat completion with stream true. It returns once
	// the upstream answered with a success status and headers, so that an
	// error before the first byte keeps its real status and can be retried.
	ChatStream(ctx context.Context, req *Request) (Stream, error)
}

// Completer is a provider with the legacy completions endpoint.
type Completer interface {
	Complete(ctx context.Context, req *Request) (*Response, error)
	CompleteStream(ctx context.Context, req *Request) (Stream, error)
}

// Embedder is a provider with embeddings.
type Embedder interface {
	Embed(ctx context.Context, req *Request) (*Response, error)
}

// Validator is a provider that refuses request features it cannot serve
// (e.g. n > 1 on Anthropic). It runs before any attempt.
type Validator interface {
	Validate(req *Request) error
}

// Error is an upstream failure with what the gateway needs to classify it.
type Error struct {
	// Status is the upstream HTTP status, or 0 for a transport failure.
	Status int
	// Message is the upstream's own message, scrubbed of secrets.
	Message string
	// RetryAfter is the upstream's Retry-After, when it sent one.
	RetryAfter time.Duration
	// Timeout is true when the deadline passed.
	Timeout bool
	// KeyRejected is true when the upstream refused the gateway's
	// credentials: 401, 403, or Google's 400 with reason API_KEY_INVALID.
	// The client's own token was fine, so the gateway must not answer as
	// if it were not.
	KeyRejected bool
	// Unsupported is true when the adapter refused, before sending
	// anything, a feature its provider cannot serve: the client's answer
	// is 400 unsupported_feature naming it (CONTRACT §12).
	Unsupported bool
	// Err is the underlying transport error, if any.
	Err error
}

func (e *Error) Error() string {
	switch {
	case e.Timeout:
		return "upstream timed out"
	case e.Status == 0 && e.Message != "":
		return "upstream failed: " + e.Message
	case e.Status == 0:
		return fmt.Sprintf("upstream unreachable: %v", e.Err)
	}
	return fmt.Sprintf("upstream answered %d: %s", e.Status, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether another attempt may succeed: a connect error,
// a timeout before the first byte, or status 408, 429, 500, 502, 503, 504.
func (e *Error) Retryable() bool {
	var forbidden *ForbiddenAddrError
	if errors.As(e.Err, &forbidden) {
		return false // the address is refused by policy: no retry can help
	}
	if e.Timeout || e.Status == 0 {
		return true
	}
	switch e.Status {
	case 408, 429, 500, 502, 503, 504:
		return true
	}
	return false
}

// AsError returns err as an *Error, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// Refusal is the 400 of an adapter that cannot serve a feature of the
// request; message names the provider and the feature.
func Refusal(message string) *Error {
	return &Error{Status: http.StatusBadRequest, Message: message, Unsupported: true}
}
