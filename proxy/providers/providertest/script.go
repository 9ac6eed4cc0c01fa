package providertest

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// defaultChunks is the number of content chunks of a stream when neither a
// Step nor a directive sets one.
const defaultChunks = 3

// Step is how the mock answers one request (or Times requests). The zero
// Step is the default behaviour.
type Step struct {
	// Status is the HTTP status to answer; 0 means 200. A status of 400 or
	// more answers Body, or else an error in the wire format's shape.
	Status int
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Body, when set, is answered raw instead of the default (an error JSON,
	// garbage HTML), never streamed. Its Content-Type follows its first
	// byte: JSON for { or [, HTML for <, else plain text.
	Body string
	// Latency is the wait before the status line.
	Latency time.Duration
	// ChunkDelay is the wait before each content chunk of a stream.
	ChunkDelay time.Duration
	// Chunks is the number of content chunks of a stream; 0 means 3.
	Chunks int
	// ResetAfter, when positive, closes the connection after that many
	// content chunks of a stream (at most Chunks), without the final chunk,
	// usage or [DONE]. A request that is not streamed is closed without any
	// response.
	ResetAfter int
	// NoUsage omits usage from responses, and the usage chunk from streams.
	NoUsage bool
	// AnswerTokens, when positive, makes the answer that many tokens
	// (words, answerPrefix's 3 included) long instead of the echo: a
	// long answer. When the request caps its output lower — in its wire
	// format's field: OpenAI max_completion_tokens or max_tokens,
	// Anthropic max_tokens, Gemini generationConfig.maxOutputTokens,
	// Bedrock inferenceConfig.maxTokens, Cohere max_tokens — the answer
	// stops at the cap with that format's "length" finish reason, as a
	// provider's does (never below answerPrefix's 3 tokens).
	AnswerTokens int
	// PromptTokens, when positive, is the prompt tokens the usage reports,
	// whatever the request holds: a provider whose tokenizer counts more
	// than the gateway's.
	PromptTokens int
	// Detail adds the usage details of prompt caching and reasoning to
	// the usage, each wire format in its own fields.
	Detail UsageDetail
	// Times repeats the step for that many requests; 0 means once.
	Times int
}

// UsageDetail is what a provider reports beside the plain token counts.
// Cache reads and writes are prompt tokens on top of the counted prompt
// (a cached prefix), reasoning tokens output tokens on top of the answer;
// each wire format reports them as its provider does: OpenAI's
// prompt_tokens and completion_tokens include them (with
// prompt_tokens_details.cached_tokens and cache_write_tokens and
// completion_tokens_details.reasoning_tokens), Anthropic's input_tokens
// excludes the cache (cache_read_input_tokens, cache_creation_input_tokens
// and its cache_creation.ephemeral_5m/1h split) and output_tokens
// includes the thinking, Gemini's promptTokenCount includes
// cachedContentTokenCount and thoughtsTokenCount is apart from
// candidatesTokenCount, Bedrock's inputTokens excludes
// cacheReadInputTokens and cacheWriteInputTokens, the Responses API's
// input_tokens and output_tokens include theirs, and Cohere's
// input_tokens includes cached_tokens. Gemini reports no cache writes.
type UsageDetail struct {
	CacheRead, CacheWrite int
	// CacheWrite1h is the part of CacheWrite written for one hour.
	CacheWrite1h int
	Reasoning    int
}

// prompt is the prompt count including the cache reads and writes.
func (d UsageDetail) prompt(counted int) int { return counted + d.CacheRead + d.CacheWrite }

// Recorded is one request the Server saw. It is the caller's copy.
type Recorded struct {
	Time   time.Time
	Method string
	// Path is the request path; Query the raw query without "?".
	Path  string
	Query string
	// Header holds every request header, Authorization included so that
	// tests can assert which key was sent.
	Header http.Header
	Body   []byte
}

// Script queues steps: the next requests to provider paths take them in
// order, each Times times. When the queue is empty the default behaviour
// applies.
func (s *Server) Script(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range steps {
		if st.Times <= 0 {
			st.Times = 1
		}
		s.script = append(s.script, st)
	}
}

// Requests returns the requests seen since New or Reset, oldest first: all
// of them, or the latest Options.MaxRecorded.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	recs := make([]record, 0, len(s.recs))
	recs = append(recs, s.recs[s.recsHead:]...)
	recs = append(recs, s.recs[:s.recsHead]...)
	s.mu.Unlock()
	out := make([]Recorded, len(recs))
	for i, r := range recs {
		out[i] = r.export()
	}
	return out
}

// Count returns how many requests to provider paths (and unknown paths)
// the Server has seen since New or Reset; /_mock paths are not counted.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// Reset forgets the recorded requests, the count and the queued steps.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script, s.recs, s.recsHead, s.count = nil, nil, 0, 0
}

// record counts and records the request and, for a provider path, takes
// the next scripted Step, all under one lock.
func (s *Server) record(ctx *fasthttp.RequestCtx, takeStep bool) Step {
	var r record
	if s.maxRec > 0 {
		r = newRecord(ctx)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	if s.maxRec > 0 {
		if len(s.recs) < s.maxRec {
			s.recs = append(s.recs, r)
		} else {
			s.recs[s.recsHead] = r
			s.recsHead = (s.recsHead + 1) % s.maxRec
		}
	}
	if !takeStep || len(s.script) == 0 {
		return Step{}
	}
	st := s.script[0]
	if s.script[0].Times--; s.script[0].Times == 0 {
		s.script = s.script[1:]
		if len(s.script) == 0 {
			s.script = nil
		}
	}
	return st
}

// record is a request as stored: everything in one allocation, raw holding
// the method, path, query, header lines ("name\nvalue\n" each) and body back
// to back, each ending at the offset named after it.
type record struct {
	at                       time.Time
	raw                      []byte
	method, path, query, hdr int
}

func newRecord(ctx *fasthttp.RequestCtx) record {
	req := &ctx.Request
	method, path, query, body := ctx.Method(), ctx.Path(), ctx.URI().QueryString(), req.Body()
	n := len(method) + len(path) + len(query) + len(body)
	for k, v := range req.Header.All() {
		n += len(k) + len(v) + 2
	}
	r := record{at: time.Now(), raw: make([]byte, 0, n)}
	r.raw = append(r.raw, method...)
	r.method = len(r.raw)
	r.raw = append(r.raw, path...)
	r.path = len(r.raw)
	r.raw = append(r.raw, query...)
	r.query = len(r.raw)
	for k, v := range req.Header.All() {
		r.raw = append(r.raw, k...)
		r.raw = append(r.raw, '\n')
		r.raw = append(r.raw, v...)
		r.raw = append(r.raw, '\n')
	}
	r.hdr = len(r.raw)
	r.raw = append(r.raw, body...)
	return r
}

func (r record) export() Recorded {
	out := Recorded{
		Time:   r.at,
		Method: string(r.raw[:r.method]),
		Path:   string(r.raw[r.method:r.path]),
		Query:  string(r.raw[r.path:r.query]),
		Header: http.Header{},
		Body:   bytes.Clone(r.raw[r.hdr:]),
	}
	if out.Body == nil {
		out.Body = []byte{}
	}
	lines := r.raw[r.query:r.hdr]
	for len(lines) > 0 {
		k, rest, _ := bytes.Cut(lines, []byte{'\n'})
		v, rest2, _ := bytes.Cut(rest, []byte{'\n'})
		out.Header.Add(string(k), string(v))
		lines = rest2
	}
	return out
}

// directives are the settings a model name carries ("gpt-4o@chunks=5");
// set records which were given.
type directives struct {
	chunks, status, reset int
	delay, latency        time.Duration
	detail                UsageDetail
	set                   uint16
}

const (
	setChunks uint16 = 1 << iota
	setDelay
	setLatency
	setStatus
	setReset
	setCacheRead
	setCacheWrite
	setCacheWrite1h
	setReasoning
)

// directiveError is a malformed or unknown model-name directive.
type directiveError struct{ msg string }

func (e *directiveError) Error() string { return e.msg }

// parseModel splits a model name from its directives. A name without "@"
// is returned as is, without allocating.
func parseModel(name string) (string, directives, error) {
	var d directives
	model, rest, ok := strings.Cut(name, "@")
	if !ok {
		return name, d, nil
	}
	for more := true; more; {
		var dir string
		dir, rest, more = strings.Cut(rest, "@")
		key, val, ok := strings.Cut(dir, "=")
		if !ok {
			return "", d, &directiveError{"mock directive @" + dir + " has no value (want @name=value)"}
		}
		var err error
		switch key {
		case "chunks":
			d.chunks, err = strconv.Atoi(val)
			if err == nil && d.chunks < 1 {
				err = errRange
			}
			d.set |= setChunks
		case "delay":
			d.delay, err = time.ParseDuration(val)
			if err == nil && d.delay < 0 {
				err = errRange
			}
			d.set |= setDelay
		case "latency":
			d.latency, err = time.ParseDuration(val)
			if err == nil && d.latency < 0 {
				err = errRange
			}
			d.set |= setLatency
		case "status":
			d.status, err = strconv.Atoi(val)
			if err == nil && (d.status < 100 || d.status > 599) {
				err = errRange
			}
			d.set |= setStatus
		case "reset":
			d.reset, err = strconv.Atoi(val)
			if err == nil && d.reset < 0 {
				err = errRange
			}
			d.set |= setReset
		case "cache_read", "cache_write", "cache_write_1h", "reasoning":
			err = d.setCount(key, val)
		default:
			return "", d, &directiveError{"unknown mock directive @" + key +
				" (known: chunks, delay, latency, status, reset, cache_read, cache_write, cache_write_1h, reasoning)"}
		}
		if err != nil {
			return "", d, &directiveError{"mock directive @" + dir + ": invalid value"}
		}
	}
	return model, d, nil
}

var errRange = &directiveError{"out of range"}

// setCount sets a usage-detail directive to a count of tokens.
func (d *directives) setCount(key, val string) error {
	n, err := strconv.Atoi(val)
	if err != nil {
		return err
	}
	if n < 0 {
		return errRange
	}
	switch key {
	case "cache_read":
		d.detail.CacheRead, d.set = n, d.set|setCacheRead
	case "cache_write":
		d.detail.CacheWrite, d.set = n, d.set|setCacheWrite
	case "cache_write_1h":
		d.detail.CacheWrite1h, d.set = n, d.set|setCacheWrite1h
	case "reasoning":
		d.detail.Reasoning, d.set = n, d.set|setReasoning
	}
	return nil
}

// apply overrides st's settings with the directives that were given.
func (d directives) apply(st *Step) {
	if d.set&setChunks != 0 {
		st.Chunks = d.chunks
	}
	if d.set&setDelay != 0 {
		st.ChunkDelay = d.delay
	}
	if d.set&setLatency != 0 {
		st.Latency = d.latency
	}
	if d.set&setStatus != 0 {
		st.Status = d.status
	}
	if d.set&setReset != 0 {
		st.ResetAfter = d.reset
	}
	for _, f := range []struct {
		bit      uint16
		dst, src *int
	}{{setCacheRead, &st.Detail.CacheRead, &d.detail.CacheRead}, {setCacheWrite, &st.Detail.CacheWrite, &d.detail.CacheWrite},
		{setCacheWrite1h, &st.Detail.CacheWrite1h, &d.detail.CacheWrite1h}, {setReasoning, &st.Detail.Reasoning, &d.detail.Reasoning}} {
		if d.set&f.bit != 0 {
			*f.dst = *f.src
		}
	}
	st.Detail.CacheWrite1h = min(st.Detail.CacheWrite1h, st.Detail.CacheWrite)
}
