package bedrock

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
)

// The ConverseStream answer: AWS event-stream binary frames, decoded and
// CRC-checked by the AWS SDK's eventstream decoder, translated into
// neutral llm.Events, which the shared encoder writes as OpenAI
// chat.completion.chunk objects.
//
//	messageStart                  → EventRole (and an empty EventText)
//	contentBlockStart (toolUse)   → the first EventToolCall piece, with id and name
//	contentBlockDelta text        → EventText
//	contentBlockDelta toolUse     → an EventToolCall arguments piece
//	contentBlockDelta reasoningContent → EventThinking (text), EventThinkingSignature,
//	                                EventRedactedThinking; only for a door that asked
//	                                (providers.Request.ThinkingBlocks)
//	messageStop                   → EventFinish
//	metadata                      → EventUsage (only when the client asked)
//	exception frames              → an *Error with a status from the exception type
//
// The stream ends cleanly once messageStop and metadata have both been
// read; a body that ends before is an *Error.

// preludeLen is the total length, headers length and prelude CRC
// that start every frame; minFrame adds the message CRC.
const (
	preludeLen = 12
	minFrame   = preludeLen + 4
)

// frames reads the frames of an event stream one at a time. Each
// frame is read whole into buf after its prelude's lengths are checked
// against maxStreamEvent, so that a hostile length cannot make the
// decoder read or allocate without bound (buf grows with the bytes that
// actually arrive, not with the length claimed); the SDK decoder then
// checks both CRCs and parses the headers.
type frames struct {
	r       io.Reader
	dec     *eventstream.Decoder
	buf     bytes.Buffer // the current frame; keeps the largest frame's capacity
	payload []byte       // the decoder's payload buffer, reused
}

// next returns the next frame. It returns io.EOF when the body ends at a
// frame boundary, and io.ErrUnexpectedEOF when it ends inside a frame.
func (f *frames) next() (eventstream.Message, error) {
	var head [preludeLen]byte
	if n, err := io.ReadFull(f.r, head[:]); err != nil {
		if err == io.EOF && n == 0 {
			return eventstream.Message{}, io.EOF
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return eventstream.Message{}, err
	}
	total := binary.BigEndian.Uint32(head[0:4])
	headers := binary.BigEndian.Uint32(head[4:8])
	if total < minFrame || headers > total-minFrame {
		return eventstream.Message{}, &providers.Error{Status: http.StatusBadGateway,
			Message: "upstream sent an invalid event stream frame (bad lengths)"}
	}
	if total > providers.MaxStreamEvent {
		return eventstream.Message{}, &providers.Error{Status: http.StatusBadGateway,
			Message: fmt.Sprintf("upstream sent a stream event larger than %d bytes", providers.MaxStreamEvent)}
	}
	f.buf.Reset()
	f.buf.Write(head[:])
	if n, err := io.CopyN(&f.buf, f.r, int64(total)-preludeLen); err != nil {
		if err == io.EOF || n < int64(total)-preludeLen {
			err = io.ErrUnexpectedEOF
		}
		return eventstream.Message{}, err
	}
	msg, err := f.dec.Decode(bytes.NewReader(f.buf.Bytes()), f.payload[:0])
	if err != nil {
		var ce eventstream.ChecksumError
		if errors.As(err, &ce) {
			return eventstream.Message{}, &providers.Error{Status: http.StatusBadGateway,
				Message: "upstream sent a corrupt event stream frame (checksum mismatch)"}
		}
		return eventstream.Message{}, &providers.Error{Status: http.StatusBadGateway,
			Message: "upstream sent an invalid event stream frame"}
	}
	if cap(msg.Payload) > cap(f.payload) {
		f.payload = msg.Payload[:0]
	}
	return msg, nil
}

// stream presents a ConverseStream answer as OpenAI chunks.
type stream struct {
	resp      *providers.StreamResponse // nil when reading a plain reader (tests)
	frames    frames
	parser    *fastjson.Parser // from bodyParsers; returned by Close
	meta      meta
	cred      providers.Credential // to scrub upstream messages
	wantUsage bool

	enc   providers.ChunkEncoder
	batch [2]llm.Event // the events translate returned; reused
	// pending is the chunk ChatStream read ahead, returned by the first
	// Next; it lives in the encoder's buffer, which no other call
	// touches before.
	pending []byte
	tools   map[int64]int
	usage   llm.Usage

	sawStop, sawMeta bool
	done             bool  // both seen: the stream ended cleanly
	err              error // sticky: io.EOF at the end, or why it broke
}

// newBedrockStream reads frames from r. The caller sets resp when r is an
// Upstream response, so that Close releases it.
func newBedrockStream(r io.Reader, m meta, wantUsage bool, cred providers.Credential) *stream {
	s := &stream{
		frames:    frames{r: r, dec: eventstream.NewDecoder()},
		parser:    providers.BodyParsers.Get(),
		meta:      m,
		cred:      cred,
		wantUsage: wantUsage,
	}
	s.enc.Encode(llm.Event{Kind: llm.EventStart, ID: []byte(m.id), Model: []byte(m.model), Created: m.created})
	return s
}

// Next returns the next chunk. Frames without a chunk of their own
// (contentBlockStop, metadata when the client did not ask for usage,
// unknown event types) are read past.
func (s *stream) Next() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.parser == nil {
		return nil, &providers.Error{Err: providers.ErrStreamClosed}
	}
	if p := s.pending; p != nil {
		s.pending = nil
		return p, nil
	}
	for {
		if s.sawStop && s.sawMeta {
			s.done, s.err = true, io.EOF
			return nil, io.EOF
		}
		msg, err := s.frames.next()
		if err != nil {
			s.err = s.broken(err)
			return nil, s.err
		}
		evs, err := s.translate(msg)
		if err != nil {
			s.err = err
			return nil, err
		}
		if out := s.enc.Encode(evs...); out != nil {
			return out, nil
		}
	}
}

// broken maps the error that ended the frames early.
func (s *stream) broken(err error) error {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &providers.Error{Message: "the bedrock stream ended before messageStop and metadata", Err: io.ErrUnexpectedEOF}
	case providers.AsError(err) != nil:
		return err
	}
	return &providers.Error{Err: providers.ScrubError(err, s.cred.Key)}
}

// header returns a string header of msg, or "".
func header(msg eventstream.Message, name string) string {
	if v, ok := msg.Headers.Get(name).(eventstream.StringValue); ok {
		return string(v)
	}
	return ""
}

// reasoning translates a reasoningContent delta (Claude's thinking):
// text, signature or redactedContent; nil when it has none of them.
func (s *stream) reasoning(rc *fastjson.Value) []llm.Event {
	if t := rc.GetStringBytes("text"); len(t) > 0 {
		return s.events1(llm.Event{Kind: llm.EventThinking, Text: t})
	}
	if sig := rc.Get("signature"); sig != nil && sig.Type() == fastjson.TypeString {
		b, _ := sig.StringBytes()
		return s.events1(llm.Event{Kind: llm.EventThinkingSignature, Text: b})
	}
	if rd := rc.Get("redactedContent"); rd != nil && rd.Type() == fastjson.TypeString {
		b, _ := rd.StringBytes()
		return s.events1(llm.Event{Kind: llm.EventRedactedThinking, Text: b})
	}
	return nil
}

// events1 returns the batch of the one event ev, in s.batch.
func (s *stream) events1(ev llm.Event) []llm.Event {
	s.batch[0] = ev
	return s.batch[:1]
}

// translate turns one frame into its events, valid until the next call,
// or nil when it has none.
func (s *stream) translate(msg eventstream.Message) ([]llm.Event, error) {
	switch header(msg, ":message-type") {
	case "event":
	case "exception":
		return nil, s.exception(header(msg, ":exception-type"), msg.Payload)
	case "error":
		m := scrub(header(msg, ":error-code")+": "+header(msg, ":error-message"), s.cred)
		return nil, &providers.Error{Status: http.StatusBadGateway, Message: m}
	default:
		return nil, &providers.Error{Status: http.StatusBadGateway, Message: "upstream sent an event stream frame without a known :message-type"}
	}
	event := header(msg, ":event-type")
	switch event {
	case "messageStart", "contentBlockStart", "contentBlockDelta", "messageStop", "metadata":
	default:
		return nil, nil // contentBlockStop, and event types added later
	}
	v, err := s.parser.ParseBytes(msg.Payload)
	if err != nil || v.Type() != fastjson.TypeObject {
		return nil, &providers.Error{Status: http.StatusBadGateway, Message: "upstream sent an invalid stream event"}
	}
	switch event {
	case "messageStart":
		s.batch[0] = llm.Event{Kind: llm.EventRole, Role: llm.RoleAssistant}
		s.batch[1] = llm.Event{Kind: llm.EventText}
		return s.batch[:2], nil
	case "contentBlockStart":
		tu := v.Get("start", "toolUse")
		if tu == nil || tu.Type() != fastjson.TypeObject {
			return nil, nil
		}
		if s.tools == nil {
			s.tools = make(map[int64]int)
		}
		idx := v.GetInt64("contentBlockIndex")
		if _, dup := s.tools[idx]; dup {
			return nil, &providers.Error{Status: http.StatusBadGateway, Message: "upstream started a stream content block twice"}
		}
		k := len(s.tools)
		s.tools[idx] = k
		return s.events1(llm.Event{Kind: llm.EventToolCall, Tool: llm.ToolCallDelta{Index: k, First: true,
			ID: tu.GetStringBytes("toolUseId"), Name: tu.GetStringBytes("name")}}), nil
	case "contentBlockDelta":
		delta := v.Get("delta")
		if delta == nil {
			return nil, nil
		}
		if t := delta.Get("text"); t != nil && t.Type() == fastjson.TypeString {
			text, _ := t.StringBytes()
			if len(text) == 0 {
				return nil, nil
			}
			return s.events1(llm.Event{Kind: llm.EventText, Text: text}), nil
		}
		if in := delta.Get("toolUse", "input"); in != nil && in.Type() == fastjson.TypeString {
			k, ok := s.tools[v.GetInt64("contentBlockIndex")]
			if !ok {
				return nil, &providers.Error{Status: http.StatusBadGateway, Message: "upstream sent tool input for a content block it did not start"}
			}
			args, _ := in.StringBytes()
			if len(args) == 0 {
				return nil, nil
			}
			return s.events1(llm.Event{Kind: llm.EventToolCall, Tool: llm.ToolCallDelta{Index: k, Arguments: args}}), nil
		}
		if rc := delta.Get("reasoningContent"); rc != nil && rc.Type() == fastjson.TypeObject && s.meta.thinkingBlocks {
			return s.reasoning(rc), nil
		}
		return nil, nil // citation deltas (and reasoning unless asked) have no OpenAI field
	case "messageStop":
		if s.sawStop {
			return nil, &providers.Error{Status: http.StatusBadGateway, Message: "upstream sent messageStop twice"}
		}
		s.sawStop = true
		return s.events1(llm.Event{Kind: llm.EventFinish, Finish: llm.FinishReason(finishReason(string(v.GetStringBytes("stopReason")))),
			Text: stopSequence(v)}), nil
	default: // metadata
		s.sawMeta = true
		if u := usage(v.Get("usage")); u.Present {
			s.usage = u
		}
		if !s.wantUsage || !s.usage.Present {
			return nil, nil
		}
		return s.events1(llm.Event{Kind: llm.EventUsage, Usage: s.usage}), nil
	}
}

// exception maps an exception frame to an *Error: throttling is 429,
// validation 400, the server-side failures 5xx (retryable only until the
// first byte reached the client, which the proxy decides).
func (s *stream) exception(kind string, payload []byte) error {
	status := http.StatusBadGateway
	switch kind {
	case "throttlingException":
		status = http.StatusTooManyRequests
	case "validationException":
		status = http.StatusBadRequest
	case "internalServerException":
		status = http.StatusInternalServerError
	case "serviceUnavailableException":
		status = http.StatusServiceUnavailable
	case "modelStreamErrorException":
		status = http.StatusBadGateway
	}
	msg := providers.ErrorMessage(payload)
	if kind == "" {
		kind = "exception"
	}
	if msg == "" {
		msg = "the model stream failed"
	}
	return &providers.Error{Status: status, Message: scrub(kind+": "+msg, s.cred)}
}

// Usage returns the usage of the metadata event, once it arrived.
func (s *stream) Usage() llm.Usage { return s.usage }

// Close releases the upstream connection; before the end it closes it, so
// that Bedrock stops generating.
func (s *stream) Close() error {
	if s.parser == nil {
		return nil
	}
	providers.BodyParsers.Put(s.parser)
	s.parser = nil
	if s.err == nil {
		s.err = &providers.Error{Err: providers.ErrStreamClosed}
	}
	if s.resp == nil {
		return nil
	}
	if s.done {
		return s.resp.Finish()
	}
	return s.resp.Close()
}
