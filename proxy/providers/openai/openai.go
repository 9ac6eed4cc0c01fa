// Package openai is the codec of the OpenAI wire format, spoken by the
// OpenAI-compatible providers of the catalog (openai, groq, mistral,
// deepseek, xai, together, fireworks, openrouter, perplexity, cerebras,
// ollama, openai-compatible) and by Azure OpenAI, which differs only in
// its URL and auth header. It is the same-wire fast path: the client's
// body goes out as it came but for the model, usage reporting and an
// output cap, and the answer comes back unchanged.
package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/sse"
)

// OpenAI is the adapter for every upstream that speaks the OpenAI wire
// format (openai, groq, mistral, deepseek, xai, together, fireworks,
// openrouter, perplexity, cerebras, ollama, openai-compatible). The
// request goes out as the client sent it, but for the model and, on
// streams, usage reporting; the answer comes back unchanged.
//
// OpenAI implements Completer and Embedder for all of them; the Registry
// hands out values that implement only what the catalog says each
// provider serves.
type OpenAI struct {
	id             string
	defaultBaseURL string
	c              *providers.Client
}

var (
	_ providers.Provider  = (*OpenAI)(nil)
	_ providers.Completer = (*OpenAI)(nil)
	_ providers.Embedder  = (*OpenAI)(nil)
	_ providers.Codec     = (*OpenAI)(nil)
)

// New returns the adapter for provider id, which sends its calls
// through c.
func New(id string, c *providers.Client) *OpenAI {
	p, _ := catalog.LookupProvider(id)
	return &OpenAI{id: id, defaultBaseURL: p.DefaultBaseURL, c: c}
}

// Name returns the provider id.
func (o *OpenAI) Name() string { return o.id }

// Chat sends a chat completion and waits for the whole answer.
func (o *OpenAI) Chat(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return providers.Call(ctx, o.c, o, req, llm.OpChat)
}

// ChatStream sends a streamed chat completion.
func (o *OpenAI) ChatStream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return providers.OpenStream(ctx, o.c, o, req, llm.OpChat)
}

// Complete sends a legacy text completion.
func (o *OpenAI) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return providers.Call(ctx, o.c, o, req, llm.OpCompletions)
}

// CompleteStream sends a streamed legacy text completion.
func (o *OpenAI) CompleteStream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return providers.OpenStream(ctx, o.c, o, req, llm.OpCompletions)
}

// Embed sends an embeddings request.
func (o *OpenAI) Embed(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return providers.Call(ctx, o.c, o, req, llm.OpEmbeddings)
}

// bodyArenas hold the few values the request rewrite adds.
var bodyArenas fastjson.ArenaPool

// outputCap is a maximum output the gateway adds to an OpenAI-wire body
// (Request.MaxOutputTokens): n tokens in field; the zero value adds none.
type outputCap struct {
	field string
	n     int64
}

// openAICap is the output cap of req in the OpenAI wire format of
// provider: max_tokens, which every OpenAI-compatible server reads and
// legacy completions take, except for the chat models of OpenAI and Azure
// OpenAI that refuse it (the o-series and GPT-5 families), which take
// max_completion_tokens.
func openAICap(provider string, req *providers.Request) outputCap {
	if req.MaxOutputTokens <= 0 || req.Op == llm.OpEmbeddings {
		return outputCap{}
	}
	if req.Op == llm.OpChat && (provider == "openai" || provider == "azure-openai") && refusesMaxTokens(req.Model) {
		return outputCap{"max_completion_tokens", req.MaxOutputTokens}
	}
	return outputCap{"max_tokens", req.MaxOutputTokens}
}

// refusesMaxTokens reports whether an OpenAI model id is of a family whose
// chat completions refuse max_tokens: o1, o3, o4-mini, … and gpt-5….
func refusesMaxTokens(model string) bool {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	model = strings.ToLower(model)
	return strings.HasPrefix(model, "gpt-5") || len(model) >= 2 && model[0] == 'o' && model[1] >= '1' && model[1] <= '9'
}

// isNull reports whether a field is absent or null: not set.
func isNull(v *fastjson.Value) bool { return v == nil || v.Type() == fastjson.TypeNull }

// rewriteBody appends to dst the request body with "model" set to model
// and, for a stream, "stream" set to true and
// stream_options.include_usage set to true (other stream_options fields
// are kept), and the field of capOut when it is set and the body sets no
// maximum output (null is none). Everything else is
// re-serialised as it came: key order, number text and string escapes
// are preserved.
func rewriteBody(dst, body []byte, model string, stream bool, capOut outputCap) ([]byte, error) {
	p := providers.BodyParsers.Get()
	defer providers.BodyParsers.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil {
		return dst, fmt.Errorf("parse request body: %w", err)
	}
	if v.Type() != fastjson.TypeObject {
		return dst, errors.New("request body is not a JSON object")
	}
	a := bodyArenas.Get()
	defer bodyArenas.Put(a)
	v.Set("model", a.NewString(model))
	if capOut.n > 0 && isNull(v.Get("max_tokens")) && isNull(v.Get("max_completion_tokens")) {
		v.Set(capOut.field, a.NewNumberInt(int(capOut.n)))
	}
	if stream {
		// Without stream true, OpenAI refuses stream_options.
		v.Set("stream", a.NewTrue())
		if so := v.Get("stream_options"); so != nil && so.Type() == fastjson.TypeObject {
			so.Set("include_usage", a.NewTrue())
		} else {
			so := a.NewObject()
			so.Set("include_usage", a.NewTrue())
			v.Set("stream_options", so)
		}
	}
	return v.MarshalTo(dst), nil
}

// EncodeRequest describes the upstream call of op for req: the body as
// the client sent it (rewriteBody), at {base}/{op} with the key as a
// bearer token.
func (o *OpenAI) EncodeRequest(_ context.Context, req *providers.Request, op llm.Operation, stream bool) (providers.Encoded, error) {
	var enc providers.Encoded
	var err error
	if req.Wire == llm.WireOpenAIResponses {
		// The native Responses door: the body goes to /responses as it
		// came (responses.go).
		enc, err = encodeResponsesBody(req)
		op = llm.OpResponses
	} else {
		enc, err = encodeOpenAIBody(req, o.id, stream)
	}
	if err != nil {
		return enc, err
	}
	base := req.Cred.BaseURL
	if base == "" {
		base = o.defaultBaseURL
	}
	if base == "" {
		return enc, fmt.Errorf("provider %s has no base URL configured", o.id)
	}
	enc.HTTP.BaseURL = base
	enc.HTTP.Path = op.String()
	enc.HTTP.Key = req.Cred.Key // sent as Authorization: Bearer <key>
	return enc, nil
}

// encodeOpenAIBody writes the OpenAI-wire body of req for provider (see
// rewriteBody) into a pooled buffer, which the transport returns to the
// pool after the call, and fills what every OpenAI-wire call shares.
func encodeOpenAIBody(req *providers.Request, provider string, stream bool) (providers.Encoded, error) {
	bp := providers.BodyBufs.Get().(*[]byte)
	body, err := rewriteBody((*bp)[:0], req.Body, req.Model, stream, openAICap(provider, req))
	*bp = body
	enc := providers.Encoded{Buf: bp}
	if err != nil {
		return enc, err
	}
	enc.HTTP = providers.HTTPRequest{Traceparent: req.Traceparent, Header: req.Header, Body: body, Deadline: req.Deadline}
	return enc, nil
}

// DecodeResponse reads the usage and model of an OpenAI answer, which is
// relayed as it came.
func (o *OpenAI) DecodeResponse(body []byte, req *providers.Request, _ any) (*providers.Response, error) {
	if req.Wire == llm.WireOpenAIResponses {
		return providers.NativeAnswer(responsesWire{}, body, req.Cred.Key)
	}
	return decodeOpenAIResponse(body, req)
}

func decodeOpenAIResponse(body []byte, req *providers.Request) (*providers.Response, error) {
	p := providers.BodyParsers.Get()
	defer providers.BodyParsers.Put(p)
	usage, model, err := providers.InspectAnswer(p, body, req.Cred.Key)
	if err != nil {
		return nil, err
	}
	return &providers.Response{Body: body, Usage: usage, Model: model}, nil
}

// DecodeStream presents an OpenAI event stream as chunks.
func (o *OpenAI) DecodeStream(sr *providers.StreamResponse, req *providers.Request, _ any) (providers.Stream, error) {
	if req.Wire == llm.WireOpenAIResponses {
		return providers.NewNativeStream(responsesWire{}, sr, req.Cred.Key), nil
	}
	return decodeOpenAIStream(sr, req), nil
}

func decodeOpenAIStream(sr *providers.StreamResponse, req *providers.Request) providers.Stream {
	return &stream{
		resp:      sr,
		events:    sse.NewReader(sr, providers.MaxStreamEvent),
		parser:    providers.BodyParsers.Get(),
		wantUsage: req.ClientWantsUsage,
		key:       req.Cred.Key,
	}
}

// DecodeError returns err: OpenAI's errors need nothing beyond the
// shared transport's handling.
func (o *OpenAI) DecodeError(err error, _ *providers.Request) error { return err }

// stream presents an OpenAI event stream as chunks.
type stream struct {
	resp      *providers.StreamResponse
	events    *sse.Reader
	parser    *fastjson.Parser // from bodyParsers; returned by Close
	wantUsage bool
	key       secret.Value
	usage     llm.Usage
	done      bool  // [DONE] was read
	err       error // sticky: io.EOF after [DONE], or why it broke
}

var doneData = []byte("[DONE]")

// Next returns the next chunk to relay. Comment and empty events are
// skipped; usage is read from every chunk that has it; the usage-only
// chunk the gateway asked for is dropped when the client did not ask for
// it (a chunk with choices and usage is relayed as it is).
func (s *stream) Next() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.parser == nil {
		return nil, &providers.Error{Err: providers.ErrStreamClosed}
	}
	for {
		ev, err := s.events.Next()
		if err != nil {
			s.err = s.broken(err)
			return nil, s.err
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			continue
		}
		if bytes.Equal(data, doneData) {
			s.done, s.err = true, io.EOF
			return nil, io.EOF
		}
		c, err := providers.InspectChunk(s.parser, data, s.key)
		if err == nil && string(ev.Name) == "error" {
			// Some OpenAI-compatible servers name their error events.
			err = providers.ReportedError(http.StatusBadGateway, providers.ErrorMessage(data), s.key)
		}
		if err != nil {
			s.err = err
			return nil, err
		}
		if c.Usage.Present {
			s.usage = c.Usage
		}
		if c.UsageOnly && !s.wantUsage {
			continue
		}
		return data, nil
	}
}

// broken maps the error that ended the event stream before [DONE].
func (s *stream) broken(err error) error {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &providers.Error{Message: "the stream ended before [DONE]", Err: io.ErrUnexpectedEOF}
	case errors.Is(err, sse.ErrEventTooLarge):
		return &providers.Error{Status: http.StatusBadGateway,
			Message: fmt.Sprintf("upstream sent a stream event larger than %d bytes", providers.MaxStreamEvent)}
	case providers.AsError(err) != nil:
		return err
	}
	return &providers.Error{Err: providers.ScrubError(err, s.key)}
}

// Usage returns the usage seen so far.
func (s *stream) Usage() llm.Usage { return s.usage }

// Close releases the upstream connection; before [DONE] it closes it, so
// the upstream stops generating.
func (s *stream) Close() error {
	if s.parser == nil {
		return nil
	}
	providers.BodyParsers.Put(s.parser)
	s.parser = nil
	if s.err == nil {
		s.err = &providers.Error{Err: providers.ErrStreamClosed}
	}
	if s.done {
		return s.resp.Finish()
	}
	return s.resp.Close()
}
