package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/canary"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// syncBuffer is a log destination several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServerLogRedacted sends requests that make fasthttp log what it
// could not parse, each carrying a credential, and checks that the
// server's log holds none of them (checklist items 8 and 33).
func TestServerLogRedacted(t *testing.T) {
	var logs syncBuffer
	st := startServer(t, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Inference: func(ctx *fasthttp.RequestCtx) {}})
	tok := canary.New("sk-sl-")
	key := canary.New("sk-proj-")
	for _, req := range []string{
		"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tok + "\x00\r\n\r\n",
		"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tok + "\rX: y\r\n\r\n",
		"GET /v1/models HTTP/1.1\r\nHost: x\r\nx-api-key: " + key + "\x01\r\n\r\n",
		"GET /v1/models HTTP/1.1\r\nHost: x\r\nCookie: session=" + tok + "\x7f\r\n\r\n",
		"GET /v1/models HTTP/1.1\r\nHost: x\r\nBearer " + tok + "\x01: v\r\n\r\n",
		"GET /v1/models?api_key=" + key + "\x01 HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /v1/models?api_key=" + key + " HTTP/9.9\r\nHost: x\r\n\r\n",
		"POST /v1/models HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz" + tok + "\r\n",
	} {
		c, err := net.Dial("tcp", st.addr)
		must(t, err)
		must(t, c.SetDeadline(time.Now().Add(5*time.Second)))
		_, _ = c.Write([]byte(req))
		_, _ = c.Read(make([]byte, 4096))
		c.Close()
	}
	// fasthttp logs a connection's error after closing it.
	if !waitFor(5*time.Second, func() bool { return strings.Count(logs.String(), `"component":"fasthttp"`) >= 5 }) {
		t.Fatalf("fasthttp logged %d lines, want at least 5:\n%s", strings.Count(logs.String(), "\n"), logs.String())
	}
	time.Sleep(100 * time.Millisecond) // the last lines of slower connections
	canary.Check(t, "the server log", logs.String())
	if t.Failed() {
		t.Logf("log:\n%s", logs.String())
	}
}

func TestRedactLogText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`error when serving connection "127.0.0.1:8080"<->"127.0.0.1:51234": error when reading request headers: invalid header value "Bearer sk-sl-abc\x00"`,
			`error when serving connection "127.0.0.1:8080"<->"127.0.0.1:51234": error when reading request headers: invalid header value "[REDACTED]"`},
		{`0.001 #0000000100000001 - 127.0.0.1:8080<->[::1]:5000 - GET http://x/v1/models?key=AIzaSecret - cannot parse`,
			`0.001 #0000000100000001 - 127.0.0.1:8080<->[::1]:5000 - GET http://x/v1/models?[REDACTED] - cannot parse`},
		{`unterminated "Bearer abc`, `unterminated "[REDACTED]`},
		{`oops Bearer abcdefgh and sk-proj-abcdefghij`, `oops Bearer [REDACTED] and [REDACTED]`},
		{`The incoming connection cannot be served, because 10 concurrent connections are served.`,
			`The incoming connection cannot be served, because 10 concurrent connections are served.`},
	} {
		if got := redactLogText(tc.in); got != tc.want {
			t.Errorf("redactLogText(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// TestCanaryEverywhere plants canary secrets (the gateway token, the
// provider keys, a token on the query string) and drives the failures
// that are most likely to echo them: an upstream that quotes the key in
// its error, in a stream and in a refused key, a header with a control
// character, an invalid token. Then it checks every answer, every request
// record with its spans (what the analytics store and the trace store
// get) and — through the harness's canary logger and TestMain — every log
// line (checklist item 33).
func TestCanaryEverywhere(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: admin.GatewaySettings{LogBodies: ptr(true), Retry: retry(2, 0)}})
	echo := func(s string) string {
		return `{"error":{"message":"Incorrect API key provided: ` + s + `","type":"invalid_request_error"}}`
	}
	var answers []string
	add := func(status int, body []byte) { answers = append(answers, fmt.Sprintf("%d %s", status, body)) }

	h.mock.Script(providertest.Step{Status: 401, Body: echo(mainKey)})
	resp, b := h.chat(chatBody("openai/gpt-4o-mini", ""))
	add(resp.StatusCode, b)
	h.mock.Script(providertest.Step{Status: 500, Body: echo("Bearer " + mainKey), Times: 2})
	resp, b = h.chat(chatBody("openai/gpt-4o-mini", ""))
	add(resp.StatusCode, b)
	h.mock.Script(providertest.Step{Status: 500, Body: echo(mainKey[len(mainKey)-12:])})
	resp, b = h.chat(chatBody("openai/gpt-4o-mini", `,"stream":true`))
	add(resp.StatusCode, b)
	h.mock.Script(providertest.Step{ResetAfter: 1})
	resp, b = h.chat(chatBody("openai/gpt-4o-mini", `,"stream":true`))
	add(resp.StatusCode, b)
	resp, b = h.chat(chatBody("openai/gpt-4o-mini", ""))
	add(resp.StatusCode, b)

	// Credentials where they do not belong.
	bad := canary.New("sk-sl-")
	for _, hd := range [][]string{
		{"Authorization", "Bearer " + bad},
		{"x-api-key", bad},
		{"Authorization", "Basic " + bad},
	} {
		resp, b := h.do("POST", chatPath, map[string][]string{hd[0]: {hd[1]}, "Content-Type": {"application/json"}}, chatBody("openai/gpt-4o-mini", ""))
		add(resp.StatusCode, b)
	}
	resp, b = h.do("POST", chatPath+"?api_key="+bad, bearer(h.token), chatBody("openai/gpt-4o-mini", ""))
	add(resp.StatusCode, b)
	out := rawExchange(t, h.addr, rawPost(h, chatPath, chatBody("openai/gpt-4o-mini", ""), "X-Leak: "+h.token+"\x00"))
	answers = append(answers, out)

	for i, a := range answers {
		canary.Check(t, fmt.Sprintf("answer %d", i), a)
	}
	if !waitFor(5*time.Second, func() bool { return len(h.sink.Records()) >= 6 }) {
		t.Fatalf("%d records, want at least 6", len(h.sink.Records()))
	}
	for _, r := range h.sink.Records() {
		j, err := json.Marshal(r)
		must(t, err)
		canary.Check(t, "record "+r.ID, string(j))
	}
}

// TestPanicRedacted checks that a recovered panic whose value quotes a
// credential is logged without it (checklist item 33: panics).
func TestPanicRedacted(t *testing.T) {
	var logs syncBuffer
	tok := canary.New("sk-sl-")
	st := startServer(t, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Inference: func(ctx *fasthttp.RequestCtx) {
			panic(fmt.Sprintf("cannot use header %q", ctx.Request.Header.Peek("Authorization")))
		}})
	resp, body := get(t, "GET", "http://"+st.addr+"/v1/models", map[string][]string{"Authorization": {"Bearer " + tok}})
	if resp.StatusCode != 500 {
		t.Fatalf("status %d, want 500", resp.StatusCode)
	}
	canary.Check(t, "the answer", string(body))
	if !strings.Contains(logs.String(), "handler panicked") {
		t.Fatalf("the panic was not logged: %s", logs.String())
	}
	canary.Check(t, "the log of the panic", logs.String())
}
