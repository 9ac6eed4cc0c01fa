package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/sse"
)

// stream presents a streamGenerateContent?alt=sse body as OpenAI
// chunks: each event, a whole GenerateContentResponse, becomes a batch of
// neutral llm.Events (translate), which the shared encoder writes as one
// chunk. There is no [DONE], so the stream ended well when every
// candidate said why it finished before the body ended.
type stream struct {
	resp      *providers.StreamResponse // nil in the fuzz test
	events    *sse.Reader
	wantUsage bool
	key       secret.Value
	enc       providers.ChunkEncoder
	batch     []llm.Event // the events translate returned; reused
	text      []byte      // the texts of the batch's events

	id, model string
	created   int64
	named     bool          // the encoder has the current id and model
	choices   []choiceState // by candidate index
	calls     int           // tool calls so far, for their ids
	blocked   bool          // the prompt was blocked: nothing follows
	usage     llm.Usage
	last      *usage // the latest usageMetadata
	ended     bool   // the body ended well; the usage chunk may follow
	err       error  // sticky: io.EOF at the end, or why it broke
}

// choiceState is what the stream remembers of one candidate.
type choiceState struct {
	seen, finished, sawCall bool
	calls                   int // tool call index within the choice
}

// maxGeminiCandidates bounds candidate indexes (candidateCount is 1–8).
const maxGeminiCandidates = 8

func newGeminiStream(body io.Reader, req *providers.Request, now time.Time) *stream {
	s := &stream{
		events:    sse.NewReader(body, providers.MaxStreamEvent),
		wantUsage: req.ClientWantsUsage,
		key:       req.Cred.Key,
		model:     req.Model,
		created:   now.Unix(),
	}
	// Gemini's chunks carry completion_tokens_details, as Google's own
	// OpenAI compatibility layer writes them.
	s.enc.Options.ReasoningDetails = true
	return s
}

// Next returns the next chunk. Events that say nothing new (usage only)
// are read on; after a clean end comes the usage chunk, when the client
// asked for usage, then io.EOF.
func (s *stream) Next() ([]byte, error) {
	for s.err == nil {
		if s.ended {
			s.err = io.EOF
			if s.wantUsage && s.last != nil {
				u := s.last.usage()
				s.batch = s.name(s.batch[:0])
				return s.enc.Encode(append(s.batch, llm.Event{Kind: llm.EventUsage, Usage: u})...), nil
			}
			break
		}
		ev, err := s.events.Next()
		if err != nil {
			s.err = s.broken(err) // nil at a clean end: s.ended is set
			continue
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			continue
		}
		evs, err := s.translate(data)
		if err != nil {
			s.err = err
		} else if out := s.enc.Encode(evs...); out != nil {
			return out, nil
		}
	}
	return nil, s.err
}

// name appends the EventStart of the current id and model when the
// encoder does not have them yet; the batch must then be encoded.
func (s *stream) name(evs []llm.Event) []llm.Event {
	if s.named {
		return evs
	}
	if s.id == "" {
		s.id = completionID("")
	}
	s.named = true
	return append(evs, llm.Event{Kind: llm.EventStart, ID: []byte(s.id), Model: []byte(s.model), Created: s.created})
}

// broken maps the error that ended the events: a clean EOF after every
// candidate finished is the end, anything else a cut stream.
func (s *stream) broken(err error) error {
	switch {
	case errors.Is(err, io.EOF) && s.complete():
		s.ended = true
		return nil
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &providers.Error{Message: "the stream ended before a finish reason", Err: io.ErrUnexpectedEOF}
	case errors.Is(err, sse.ErrEventTooLarge):
		return &providers.Error{Status: http.StatusBadGateway,
			Message: fmt.Sprintf("upstream sent a stream event larger than %d bytes", providers.MaxStreamEvent)}
	case providers.AsError(err) != nil:
		return err
	}
	return &providers.Error{Err: providers.ScrubError(err, s.key)}
}

func (s *stream) complete() bool {
	if s.blocked {
		return true
	}
	n := 0
	for _, c := range s.choices {
		if c.seen && !c.finished {
			return false
		}
		if c.seen {
			n++
		}
	}
	return n > 0
}

// errInvalidEvent is the error of an event that cannot be translated.
func errInvalidEvent() error {
	return &providers.Error{Status: http.StatusBadGateway, Message: "upstream sent an invalid stream event"}
}

// translate turns one event into its batch of events, valid until the
// next call: per candidate its role (the first time), its text, its tool
// calls and its finish reason, after an EventStart when the id or the
// model is new. A batch without choice events writes no chunk.
func (s *stream) translate(data []byte) ([]llm.Event, error) {
	var ev response
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, errInvalidEvent()
	}
	if ev.Error != nil {
		return nil, ev.Error.asError(s.key)
	}
	if s.id == "" {
		s.id = completionID(ev.ResponseID)
	}
	if ev.ModelVersion != "" && ev.ModelVersion != s.model {
		s.model, s.named = ev.ModelVersion, false
	}
	if ev.UsageMetadata != nil {
		s.last = ev.UsageMetadata
		s.usage = ev.UsageMetadata.usage()
	}
	// The texts go into s.text, sized first so that the events' slices
	// of it stay valid.
	n := 0
	for i := range ev.Candidates {
		for j := range ev.Candidates[i].Content.Parts {
			n += len(ev.Candidates[i].Content.Parts[j].Text)
		}
	}
	if cap(s.text) < n {
		s.text = make([]byte, 0, n)
	}
	s.text = s.text[:0]
	evs := s.batch[:0]
	choices := false
	for i := range ev.Candidates {
		c := &ev.Candidates[i]
		idx := index(c.Index, i)
		if idx < 0 || idx >= maxGeminiCandidates {
			return nil, errInvalidEvent()
		}
		for len(s.choices) <= idx {
			s.choices = append(s.choices, choiceState{})
		}
		st := &s.choices[idx]
		if st.finished {
			continue // nothing may follow a finish reason
		}
		if !st.seen {
			st.seen = true
			evs = append(evs, llm.Event{Kind: llm.EventRole, Index: idx, Role: llm.RoleAssistant})
			choices = true
		}
		if text, ok := s.appendText(c.Content.Parts); ok {
			evs = append(evs, llm.Event{Kind: llm.EventText, Index: idx, Text: text})
			choices = true
		}
		for j := range c.Content.Parts {
			if p := &c.Content.Parts[j]; p.FunctionCall != nil {
				s.calls++
				call, err := toolCall(p, s.calls)
				if err != nil {
					return nil, errInvalidEvent()
				}
				evs = append(evs, llm.Event{Kind: llm.EventToolCall, Index: idx, Tool: llm.ToolCallDelta{
					Index: st.calls, First: true, ID: []byte(call.ID), Name: []byte(call.Name),
					Arguments: []byte(call.Arguments), Signature: []byte(call.Signature)}})
				st.calls++
				st.sawCall, choices = true, true
			}
		}
		if c.FinishReason != "" && c.FinishReason != "FINISH_REASON_UNSPECIFIED" {
			st.finished, choices = true, true
			evs = append(evs, llm.Event{Kind: llm.EventFinish, Index: idx, Finish: llm.FinishReason(geminiFinish(c.FinishReason, st.sawCall))})
		}
	}
	if len(ev.Candidates) == 0 && ev.PromptFeedback != nil && ev.PromptFeedback.BlockReason != "" && !s.blocked {
		s.blocked, choices = true, true
		evs = append(evs, llm.Event{Kind: llm.EventRole, Role: llm.RoleAssistant},
			llm.Event{Kind: llm.EventFinish, Finish: llm.FinishContentFilter})
	}
	s.batch = evs
	if !choices {
		return nil, nil
	}
	s.batch = s.name(s.batch) // the encoder reads a batch's EventStart first
	return s.batch, nil
}

// appendText appends the text parts of a candidate, thoughts left out,
// to s.text and returns them; ok is false when there are none.
func (s *stream) appendText(parts []part) (text []byte, ok bool) {
	start := len(s.text)
	for i := range parts {
		if parts[i].Thought || parts[i].FunctionCall != nil || parts[i].Text == "" {
			continue
		}
		s.text = append(s.text, parts[i].Text...)
		ok = true
	}
	return s.text[start:len(s.text):len(s.text)], ok
}

// Usage returns the usage of the latest usageMetadata.
func (s *stream) Usage() llm.Usage { return s.usage }

// Close releases the connection; before the end it closes it, which
// stops the generation.
func (s *stream) Close() error {
	if s.err == nil {
		s.err = &providers.Error{Err: providers.ErrStreamClosed}
	}
	if s.resp == nil {
		return nil
	}
	resp := s.resp
	s.resp = nil
	if s.ended {
		return resp.Finish()
	}
	return resp.Close()
}
