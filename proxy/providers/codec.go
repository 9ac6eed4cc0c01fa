package providers

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
)

// Codec is one provider's wire format: it encodes a request into an
// Upstream call and decodes the answer, the stream and the errors. It
// never calls the HTTP client: Call and OpenStream own the transport
// (deadlines, cancellation, the connection, secret scrubbing, the status
// of a failed call), so that every adapter behaves the same on the wire
// and a new provider is only its translation.
//
// Each adapter is a codec plus one-line Provider methods:
//
//	func (a *Anthropic) Chat(ctx context.Context, req *Request) (*Response, error) {
//		return Call(ctx, a.c, a, req, llm.OpChat)
//	}
type Codec interface {
	// EncodeRequest describes the upstream call of operation op for req:
	// URL, credential header and body, with stream set for a streamed
	// call. It may refuse the request with a 400 *Error.
	EncodeRequest(ctx context.Context, req *Request, op llm.Operation, stream bool) (Encoded, error)
	// DecodeResponse translates a complete 2xx answer; state is the
	// Encoded.State of the call. body is owned by the decoder.
	DecodeResponse(body []byte, req *Request, state any) (*Response, error)
	// DecodeStream presents a 2xx event stream as OpenAI chunks; state is
	// the Encoded.State of the call. It owns sr: on error it must close it.
	DecodeStream(sr *StreamResponse, req *Request, state any) (Stream, error)
	// DecodeError finishes a failed call's *Error in the provider's terms
	// (its own statuses, secrets the shared scrubbing does not know) and
	// returns err.
	DecodeError(err error, req *Request) error
}

// Encoded is a codec's description of one upstream call.
type Encoded struct {
	HTTP HTTPRequest
	// State is what decoding the answer needs to know of the encoding
	// (e.g. the name of the tool that stands in for a JSON mode); nil for
	// most codecs.
	State any
	// Buf, when set, is the pooled buffer HTTP.Body was written into; the
	// transport returns it to BodyBufs once the call has been sent.
	Buf *[]byte
}

// Call sends a non-streamed operation through c, with codec translating
// the request, the answer and the errors.
func Call(ctx context.Context, c *Client, codec Codec, req *Request, op llm.Operation) (*Response, error) {
	enc, err := codec.EncodeRequest(ctx, req, op, false)
	if enc.Buf != nil {
		defer putBodyBuf(enc.Buf)
	}
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(ctx, &enc.HTTP)
	if err != nil {
		return nil, codec.DecodeError(err, req)
	}
	return codec.DecodeResponse(resp.Body, req, enc.State)
}

// OpenStream starts a streamed operation through c. It returns once the
// Upstream answered with a success status and headers (what DecodeStream
// reads before it returns included), so that an error before the first
// byte keeps its real status and can be retried. An answer that is no
// event stream (see notAStream) is a 502.
func OpenStream(ctx context.Context, c *Client, codec Codec, req *Request, op llm.Operation) (Stream, error) {
	enc, err := codec.EncodeRequest(ctx, req, op, true)
	if enc.Buf != nil {
		defer putBodyBuf(enc.Buf)
	}
	if err != nil {
		return nil, err
	}
	sr, err := c.Stream(ctx, &enc.HTTP)
	if err != nil {
		return nil, codec.DecodeError(err, req)
	}
	if err := notAStream(sr, req.Cred.Key); err != nil {
		return nil, codec.DecodeError(err, req)
	}
	return codec.DecodeStream(sr, req, enc.State)
}

// notAStream reports a streamed answer that is no event stream: an
// Upstream that ignored "stream" answers a JSON document, a proxy in the
// way may answer HTML. It then reads what it needs of the body, closes sr
// and returns a 502 with the upstream's message.
//
// The rule reads the media type, not the raw header: a JSON document is
// application/json or any structured "+json" type (application/problem+json,
// the error documents of RFC 9457); HTML is any type naming html. Event
// streams (text/event-stream, application/vnd.amazon.eventstream) and a
// missing type are taken to be streams, and parameters ("; charset=…")
// are ignored, so a parameter that happens to contain "json" does not
// turn a stream into an error.
func notAStream(sr *StreamResponse, key secret.Value) error {
	if !isDocumentType(sr.Header("Content-Type")) {
		return nil
	}
	raw, _ := io.ReadAll(io.LimitReader(sr, maxErrorBody))
	_ = sr.Close()
	msg := Scrub(ErrorMessage(raw), key)
	if msg == "" {
		msg = ErrInvalidResponse
	}
	return &Error{Status: http.StatusBadGateway, Message: msg}
}

// isDocumentType reports whether a Content-Type is a JSON document or
// HTML: what a 2xx answer to a streamed call must not be.
func isDocumentType(ct []byte) bool {
	mt, _, _ := bytes.Cut(ct, []byte(";"))
	mt = bytes.ToLower(bytes.TrimSpace(mt))
	return bytes.Equal(mt, []byte("application/json")) || bytes.HasSuffix(mt, []byte("+json")) ||
		bytes.Contains(mt, []byte("html"))
}
