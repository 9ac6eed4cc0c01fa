package proxy

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/openaischema"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// event is one server-sent event as a client reads it.
type event struct {
	data string
	at   time.Time
}

// sseReader reads the events of a stream one at a time and notes when
// each arrived. Lines that are neither data nor comments nor blank are
// kept in junk: a well-formed OpenAI stream has none.
type sseReader struct {
	r    *bufio.Reader
	junk []string
}

func newSSEReader(r io.Reader) *sseReader { return &sseReader{r: bufio.NewReader(r)} }

// next returns the next event, or io.EOF at the end of the body.
func (s *sseReader) next() (event, error) {
	var data []string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if len(data) > 0 || line != "" {
				return event{}, io.ErrUnexpectedEOF
			}
			return event{}, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if len(data) > 0 {
				return event{data: strings.Join(data, "\n"), at: time.Now()}, nil
			}
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case strings.HasPrefix(line, ":"):
		default:
			s.junk = append(s.junk, line)
		}
	}
}

// all reads the remaining events until the end of the body.
func (s *sseReader) all(tb testing.TB) []event {
	tb.Helper()
	var out []event
	for {
		ev, err := s.next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			tb.Fatalf("read stream after %d events: %v", len(out), err)
		}
		out = append(out, ev)
	}
}

// openStream posts a streamed chat request and checks that it started.
func (h *harness) openStream(tb testing.TB, body string) (*http.Response, *sseReader) {
	tb.Helper()
	req, err := http.NewRequest("POST", h.url(chatPath), strings.NewReader(body))
	must(tb, err)
	req.Header = bearer(h.token)
	resp, err := h.hc.Do(req)
	must(tb, err)
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tb.Fatalf("stream answered %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		tb.Errorf("Content-Type %q, want text/event-stream", ct)
	}
	return resp, newSSEReader(resp.Body)
}

// chunkKind classifies an event of an OpenAI chat stream.
func chunkKind(data string) string {
	if data == "[DONE]" {
		return "done"
	}
	var c struct {
		Error   json.RawMessage   `json:"error"`
		Choices []json.RawMessage `json:"choices"`
		Usage   json.RawMessage   `json:"usage"`
	}
	if json.Unmarshal([]byte(data), &c) != nil {
		return "invalid"
	}
	switch {
	case c.Error != nil:
		return "error"
	case len(c.Choices) == 0 && len(c.Usage) > 0 && string(c.Usage) != "null":
		return "usage"
	case strings.Contains(data, `"content":"`) && !strings.Contains(data, `"role"`):
		return "content"
	}
	return "other"
}

func kinds(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = chunkKind(e.data)
	}
	return out
}

// streamError decodes an SSE error event.
func streamError(tb testing.TB, data string) (typ, code string) {
	tb.Helper()
	var e struct {
		Error struct{ Type, Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(data), &e); err != nil || e.Error.Message == "" {
		tb.Fatalf("error event %q: %v", data, err)
	}
	openaischema.Check(tb, openaischema.Error, "the error event", []byte(data))
	return e.Error.Type, e.Error.Code
}

func TestStreamFlushesEachChunk(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	// The usage the mock reports for this conversation.
	resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
	wantStatus(t, resp, b, 200)
	want := answerUsage(t, b)

	const delay = 150 * time.Millisecond
	h.mock.Script(providertest.Step{Chunks: 5, ChunkDelay: delay})
	start := time.Now()
	resp, sr := h.openStream(t, chatBody("openai/gpt-4o-mini", `,"stream":true`))
	defer resp.Body.Close()
	if resp.Header.Get("x-sluice-provider") != "openai" || resp.Header.Get(RequestIDHeader) == "" {
		t.Errorf("headers %v", resp.Header)
	}
	evs := sr.all(t)
	got := kinds(evs)
	wantKinds := []string{"other", "content", "content", "content", "content", "content", "other", "done"}
	if strings.Join(got, " ") != strings.Join(wantKinds, " ") {
		t.Fatalf("events %v, want %v", got, wantKinds)
	}
	// The content chunks came spread over the upstream's 4 delays, not
	// all at the end (TestStreamChunkReachesClientBeforeNextIsSent proves
	// it without timing).
	if d := evs[len(evs)-1].at.Sub(evs[1].at); d < 2*delay {
		t.Errorf("first content chunk only %s before [DONE]: the stream was buffered", d)
	}
	if d := evs[1].at.Sub(start); d > time.Duration(len(evs))*delay+2*time.Second {
		t.Errorf("first content chunk after %s", d)
	}
	if len(sr.junk) > 0 {
		t.Errorf("stream has lines that are not events: %q", sr.junk)
	}

	rec := h.record(resp.Header.Get(RequestIDHeader))
	if rec.Status != 200 || rec.TokensIn != want.PromptTokens || rec.TokensOut != want.CompletionTokens ||
		rec.CostUSD <= 0 || len(rec.Flags) != 0 || rec.Attempts != 1 || rec.ResponseBody == "" {
		t.Errorf("record status %d tokens %d/%d (want %d/%d) cost %v flags %v attempts %d body %d bytes",
			rec.Status, rec.TokensIn, rec.TokensOut, want.PromptTokens, want.CompletionTokens, rec.CostUSD, rec.Flags, rec.Attempts, len(rec.ResponseBody))
	}
	if rec.TTFBMS > rec.LatencyMS || rec.LatencyMS < (5*delay).Milliseconds() {
		t.Errorf("ttfb %d ms latency %d ms", rec.TTFBMS, rec.LatencyMS)
	}
	// The gateway asked the upstream for usage although the client did not.
	reqs := h.mock.Requests()
	var sent struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	must(t, json.Unmarshal(reqs[len(reqs)-1].Body, &sent))
	if !sent.Stream || !sent.StreamOptions.IncludeUsage {
		t.Errorf("upstream body %s: want stream and include_usage true", reqs[len(reqs)-1].Body)
	}
}

func TestStreamChunkReachesClientBeforeNextIsSent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	up := newSSEUpstream(t, 0, roleFrame, contentFrame("first"), contentFrame("second"), "data: [DONE]\n\n")
	up.hold = 2 // "second" waits until the client has read "first"
	h.addKeyAt(h.gw.ID, "openai-compatible", "gated", "sk-upstream-gated-01", up.srv.URL+"/v1")
	h.rebuild()
	// Headers and the first chunk must both arrive while the upstream
	// holds back the second chunk.
	type first struct {
		resp *http.Response
		sr   *sseReader
		data string
		err  error
	}
	got := make(chan first, 1)
	go func() {
		req, _ := http.NewRequest("POST", h.url(chatPath), strings.NewReader(chatBody("openai-compatible/m", `,"stream":true`)))
		req.Header = bearer(h.token)
		resp, err := h.hc.Do(req)
		if err != nil {
			got <- first{err: err}
			return
		}
		sr := newSSEReader(resp.Body)
		for {
			ev, err := sr.next()
			if err != nil || chunkKind(ev.data) == "content" {
				got <- first{resp, sr, ev.data, err}
				return
			}
		}
	}()
	var f first
	select {
	case f = <-got:
	case <-time.After(5 * time.Second):
		close(up.release)
		t.Fatal("the first chunk did not reach the client while the upstream held the next one: the relay buffers")
	}
	if f.err != nil {
		t.Fatal(f.err)
	}
	defer f.resp.Body.Close()
	if !strings.Contains(f.data, `"first"`) {
		t.Fatalf("first content event %q", f.data)
	}
	sr := f.sr
	close(up.release)
	evs := sr.all(t)
	if k := strings.Join(kinds(evs), " "); k != "content done" {
		t.Errorf("rest of the stream %q", k)
	}
}

func TestStreamIncludeUsage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	for _, tc := range []struct {
		name      string
		extra     string
		wantUsage bool
	}{
		{"asked", `,"stream":true,"stream_options":{"include_usage":true}`, true},
		{"not asked", `,"stream":true`, false},
		{"asked false", `,"stream":true,"stream_options":{"include_usage":false}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, sr := h.openStream(t, chatBody("openai/gpt-4o-mini", tc.extra))
			defer resp.Body.Close()
			evs := sr.all(t)
			n := 0
			var usage struct {
				Usage usage `json:"usage"`
			}
			for _, e := range evs {
				if chunkKind(e.data) == "usage" {
					n++
					must(t, json.Unmarshal([]byte(e.data), &usage))
				}
			}
			if tc.wantUsage != (n == 1) || n > 1 {
				t.Errorf("%d usage chunks, want %v", n, tc.wantUsage)
			}
			if last := evs[len(evs)-1].data; last != "[DONE]" {
				t.Errorf("last event %q, want [DONE]", last)
			}
			rec := h.record(resp.Header.Get(RequestIDHeader))
			if len(rec.Spans) != 2 || rec.Spans[0].AttributeMap()["attempt"] != "1" || rec.Spans[1].ParentID != "" {
				t.Errorf("spans %+v, want the attempt, then the root", rec.Spans)
			}
			if rec.TokensIn == 0 || rec.TokensOut == 0 {
				t.Errorf("record tokens %d/%d: usage not captured", rec.TokensIn, rec.TokensOut)
			}
			if tc.wantUsage && (usage.Usage.PromptTokens != rec.TokensIn || usage.Usage.CompletionTokens != rec.TokensOut) {
				t.Errorf("client usage %+v, record %d/%d", usage.Usage, rec.TokensIn, rec.TokensOut)
			}
		})
	}
}

func TestStreamUpstreamResetMidStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(3, 0)}})
	h.mock.Script(providertest.Step{Chunks: 5, ResetAfter: 2})
	resp, sr := h.openStream(t, chatBody("openai/gpt-4o-mini", `,"stream":true`))
	defer resp.Body.Close()
	evs := sr.all(t)
	got := strings.Join(kinds(evs), " ")
	if got != "other content content error" {
		t.Fatalf("events %q, want the chunks sent, then an error event and no [DONE]", got)
	}
	typ, code := streamError(t, evs[len(evs)-1].data)
	if typ != "api_error" || code != "upstream_error" {
		t.Errorf("error event type %q code %q", typ, code)
	}
	if n := h.mock.Count(); n != 1 {
		t.Errorf("upstream requests %d, want 1: nothing is retried once bytes reached the client", n)
	}
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if rec.Status != 502 || rec.ErrorCode != "upstream_error" || !hasFlag(rec.Flags, "partial") || rec.Attempts != 1 {
		t.Errorf("record status %d code %q flags %v attempts %d, want 502 upstream_error partial 1", rec.Status, rec.ErrorCode, rec.Flags, rec.Attempts)
	}
}

func hasFlag(flags []string, f string) bool {
	for _, x := range flags {
		if x == f {
			return true
		}
	}
	return false
}

func TestStreamRetriedBeforeFirstByte(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{Retry: retry(2, 0)}})
	h.mock.Script(providertest.Step{Status: 500})
	resp, sr := h.openStream(t, chatBody("openai/gpt-4o-mini", `,"stream":true`))
	defer resp.Body.Close()
	evs := sr.all(t)
	if evs[len(evs)-1].data != "[DONE]" {
		t.Errorf("stream did not end with [DONE]: %v", kinds(evs))
	}
	if got := resp.Header.Get("x-sluice-attempts"); got != "2" {
		t.Errorf("x-sluice-attempts %q, want 2", got)
	}
	if n := h.mock.Count(); n != 2 {
		t.Errorf("upstream requests %d, want 2", n)
	}
	if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Status != 200 || rec.Attempts != 2 {
		t.Errorf("record status %d attempts %d", rec.Status, rec.Attempts)
	}

	// A stream failing before its first byte on every attempt is an
	// ordinary JSON error, not a stream.
	h.mock.Script(providertest.Step{Status: 503, Times: 2})
	r, b := h.chat(chatBody("openai/gpt-4o-mini", `,"stream":true`))
	wantAPIError(t, r, b, 502, "api_error", "upstream_error", "")
}

// sseUpstream is an OpenAI-compatible upstream under the test's control:
// it plays frames with a delay between them and notes when the gateway
// closed the connection.
type sseUpstream struct {
	srv    *httptest.Server
	frames []string
	delay  time.Duration
	// hold, when positive, is the frame the upstream writes only once
	// release is closed.
	hold    int
	release chan struct{}

	mu       sync.Mutex
	written  int
	closedAt time.Time
	closed   chan struct{} // closed when a request ended before its last frame
}

func newSSEUpstream(tb testing.TB, delay time.Duration, frames ...string) *sseUpstream {
	u := &sseUpstream{frames: frames, delay: delay, closed: make(chan struct{}), release: make(chan struct{})}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	tb.Cleanup(u.srv.Close)
	return u
}

func (u *sseUpstream) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fl := w.(http.Flusher)
	fl.Flush()
	for i, f := range u.frames {
		if i > 0 && i == u.hold {
			select {
			case <-u.release:
			case <-r.Context().Done():
				u.gone()
				return
			}
		}
		if i > 0 && u.delay > 0 {
			select {
			case <-time.After(u.delay):
			case <-r.Context().Done():
				u.gone()
				return
			}
		}
		if _, err := io.WriteString(w, f); err != nil {
			u.gone()
			return
		}
		fl.Flush()
		u.mu.Lock()
		u.written++
		u.mu.Unlock()
	}
}

func (u *sseUpstream) gone() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closedAt.IsZero() {
		u.closedAt = time.Now()
		close(u.closed)
	}
}

const roleFrame = `data: {"id":"chatcmpl-u","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}` + "\n\n"

func contentFrame(text string) string {
	return `data: {"id":"chatcmpl-u","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":` +
		quote(text) + `},"finish_reason":null}]}` + "\n\n"
}

func TestStreamClientDisconnect(t *testing.T) {
	// Not parallel: the goroutine check needs the process to itself.
	base := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		// Runs after every other cleanup: server, upstreams and clients
		// are closed. fasthttp's housekeeping may remain: the process-wide
		// Date updater, and the pool cleaners of clients and servers,
		// which notice a stop only at their next tick (up to 10 s).
		// Anything of a request — relay, stream writer, upstream reader —
		// would show here.
		goleak.VerifyNone(t, base,
			goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
			goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
			goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*Client).mCleaner"),
			goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"))
	})
	h := newHarness(t, harnessConfig{})
	frames := []string{roleFrame}
	for i := range 200 {
		frames = append(frames, contentFrame("word"+itoa(i)+" "))
	}
	frames = append(frames, "data: [DONE]\n\n")
	up := newSSEUpstream(t, 50*time.Millisecond, frames...)
	h.addKeyAt(h.gw.ID, "openai-compatible", "slow", "sk-upstream-slow-0001", up.srv.URL+"/v1")
	h.rebuild()

	resp, sr := h.openStream(t, chatBody("openai-compatible/slow-model", `,"stream":true`))
	for {
		ev, err := sr.next()
		must(t, err)
		if chunkKind(ev.data) == "content" {
			break
		}
	}
	closedByClient := time.Now()
	resp.Body.Close()
	select {
	case <-up.closed:
		// The stream has 10 s of frames left; the proxy notices the client
		// at its next write (a frame every 50 ms). 3 s leaves room for a
		// loaded CI machine and still tells a cancel from a stream run out.
		if d := up.closedAt.Sub(closedByClient); d > 3*time.Second {
			t.Errorf("upstream connection closed %s after the client left, want within 3 s", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream stream was not cancelled after the client disconnected")
	}
	up.mu.Lock()
	written := up.written
	up.mu.Unlock()
	if written >= len(frames) {
		t.Errorf("the upstream wrote all %d frames", written)
	}
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if rec.Status != 499 || !hasFlag(rec.Flags, "partial") || rec.Provider != "openai-compatible" {
		t.Errorf("record status %d flags %v provider %q, want 499 partial", rec.Status, rec.Flags, rec.Provider)
	}

	// Several clients leaving mock-provider streams at once.
	var wg sync.WaitGroup
	ids := make(chan string, 5)
	for range 5 {
		wg.Go(func() {
			resp, sr := h.openStream(t, chatBody("openai/gpt-4o-mini@chunks=40@delay=50ms", `,"stream":true`))
			for {
				ev, err := sr.next()
				if err != nil {
					t.Errorf("read: %v", err)
					break
				}
				if chunkKind(ev.data) == "content" {
					break
				}
			}
			resp.Body.Close()
			ids <- resp.Header.Get(RequestIDHeader)
		})
	}
	wg.Wait()
	close(ids)
	for id := range ids {
		if rec := h.record(id); rec.Status != 499 {
			t.Errorf("record %s status %d, want 499", id, rec.Status)
		}
	}
}

func TestStreamFramingFromUpstream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{})
	role := roleFrame
	for i, tc := range []struct {
		name   string
		frames []string
		want   string // event kinds the client sees
		status int    // of the record
	}{
		{"comments and CRLF", []string{": keep-alive\r\n\r\n", role, strings.ReplaceAll(contentFrame("a"), "\n", "\r\n"), "data: [DONE]\r\n\r\n"},
			"other content done", 200},
		{"event split across lines", []string{role,
			`data: {"id":"chatcmpl-u","object":"chat.completion.chunk",` + "\n" + `data: "choices":[{"index":0,"delta":{"content":"x"}}]}` + "\n\n",
			"data: [DONE]\n\n"}, "other content done", 200},
		{"error event mid-stream", []string{role, contentFrame("a"), `data: {"error":{"message":"overloaded","type":"server_error"}}` + "\n\n"},
			"other content error", 502},
		{"invalid json mid-stream", []string{role, contentFrame("a"), "data: {not json\n\n", contentFrame("b"), "data: [DONE]\n\n"},
			"other content error", 502},
		{"no [DONE]", []string{role, contentFrame("a")}, "other content error", 502},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newSSEUpstream(t, 0, tc.frames...)
			alias := "f" + itoa(i)
			h.addKeyAt(h.gw.ID, "openai-compatible", alias, "sk-upstream-"+alias, up.srv.URL+"/v1")
			h.update(admin.GatewaySettings{Routes: &[]store.Route{{Name: alias, Targets: []store.RouteTarget{
				{Provider: "openai-compatible", Model: "m", KeyAlias: ptr(alias)}}}}})
			resp, sr := h.openStream(t, chatBody(alias, `,"stream":true`))
			defer resp.Body.Close()
			evs := sr.all(t)
			if got := strings.Join(kinds(evs), " "); got != tc.want {
				t.Errorf("events %q (%v), want %q", got, evs, tc.want)
			}
			if len(sr.junk) > 0 {
				t.Errorf("the client got lines that are not SSE fields: %q", sr.junk)
			}
			if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Status != tc.status {
				t.Errorf("record status %d, want %d", rec.Status, tc.status)
			}
		})
	}
}

func TestShutdownEndsStreams(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{shutdownGrace: 300 * time.Millisecond})
	resp, sr := h.openStream(t, chatBody("openai/gpt-4o-mini@chunks=20@delay=200ms", `,"stream":true`))
	defer resp.Body.Close()
	for {
		ev, err := sr.next()
		must(t, err)
		if chunkKind(ev.data) == "content" {
			break
		}
	}

	// A plain request in flight when shutdown begins completes.
	type result struct {
		status int
		body   []byte
		err    error
	}
	plain := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("POST", h.url(chatPath), strings.NewReader(chatBody("openai/gpt-4o-mini@latency=150ms", "")))
		req.Header = bearer(h.token)
		r, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			plain <- result{err: err}
			return
		}
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		plain <- result{r.StatusCode, b, err}
	}()
	if !waitFor(5*time.Second, func() bool { return h.mock.Count() == 2 }) {
		t.Fatal("the plain request did not reach the upstream")
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- h.shutdown(10 * time.Second) }()

	r := <-plain
	if r.err != nil || r.status != 200 {
		t.Errorf("in-flight request: %d %s %v, want 200", r.status, r.body, r.err)
	}
	evs := sr.all(t)
	if len(evs) == 0 {
		t.Fatal("no event after shutdown began")
	}
	last := evs[len(evs)-1]
	if chunkKind(last.data) != "error" {
		t.Fatalf("stream ended with %v, want an error event", kinds(evs))
	}
	if _, code := streamError(t, last.data); code != "shutting_down" {
		t.Errorf("error code %q, want shutting_down", code)
	}
	for _, e := range evs {
		if e.data == "[DONE]" {
			t.Error("a cut stream sent [DONE]")
		}
	}
	if d := last.at.Sub(start); d < 250*time.Millisecond || d > 3*time.Second {
		t.Errorf("stream cut %s after shutdown began, want after the 300 ms grace", d)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if c, err := net.DialTimeout("tcp", h.addr, time.Second); err == nil {
		c.Close()
		t.Error("still accepting connections after shutdown")
	}
	rec := h.record(resp.Header.Get(RequestIDHeader))
	if rec.Status != 503 || rec.ErrorCode != "shutting_down" || !hasFlag(rec.Flags, "partial") {
		t.Errorf("stream record %d %q %v, want 503 shutting_down partial", rec.Status, rec.ErrorCode, rec.Flags)
	}
}
