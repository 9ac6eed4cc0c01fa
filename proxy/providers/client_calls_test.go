package providers_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
	"github.com/sluicehq/sluice/proxy/providers/openai"
)

// TestStatusErrors checks that non-2xx answers become *Error with their
// status, scrubbed message and Retry-After, for whole and streamed calls.
func TestStatusErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		wantMsg    string
		retryable  bool
		retryAfter time.Duration
	}{
		{"429 retry-after", 429, map[string]string{"Retry-After": "7"},
			`{"error":{"message":"Rate limit reached for gpt-4o-mini","type":"requests","code":"rate_limit_exceeded"}}`,
			"Rate limit reached for gpt-4o-mini", true, 7 * time.Second},
		{"429 retry-after-ms", 429, map[string]string{"retry-after-ms": "250"},
			`{"error":{"message":"slow down"}}`, "slow down", true, 250 * time.Millisecond},
		{"500", 500, nil, `{"error":{"message":"The server had an error"}}`, "The server had an error", true, 0},
		{"503 html", 503, map[string]string{"Content-Type": "text/html"}, "<html><body>Service Unavailable</body></html>",
			"service unavailable", true, 0},
		{"400", 400, nil, `{"error":{"message":"Invalid value for 'temperature'","param":"temperature"}}`,
			"Invalid value for 'temperature'", false, 0},
		{"401 echoes key", 401, nil, `{"error":{"message":"Incorrect API key provided: sk-test-0123456789abcdefghij. Authorization: Bearer sk-test-0123456789abcdefghij"}}`,
			"Incorrect API key provided: [REDACTED]. Authorization: Bearer [REDACTED]", false, 0},
		{"anthropic shape", 529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Overloaded", false, 0},
		{"plain text", 404, map[string]string{"Content-Type": "text/plain"}, "404 page not found\n", "404 page not found", false, 0},
		{"empty", 502, nil, "", "bad gateway", true, 0},
	}
	for _, tt := range tests {
		u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			for k, v := range tt.header {
				w.Header().Set(k, v)
			}
			w.WriteHeader(tt.status)
			_, _ = io.WriteString(w, tt.body)
		})
		o := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{}))
		check := func(t *testing.T, err error) {
			e := providers.AsError(err)
			if e == nil {
				t.Fatalf("got %v, want *Error", err)
			}
			if e.Status != tt.status || e.Message != tt.wantMsg || e.Retryable() != tt.retryable || e.RetryAfter != tt.retryAfter {
				t.Errorf("got status %d message %q retryable %v retry-after %v; want %d %q %v %v",
					e.Status, e.Message, e.Retryable(), e.RetryAfter, tt.status, tt.wantMsg, tt.retryable, tt.retryAfter)
			}
			if strings.Contains(e.Error(), "0123456789") {
				t.Errorf("error leaks the key: %q", e.Error())
			}
		}
		t.Run(tt.name+"/chat", func(t *testing.T) {
			_, err := o.Chat(context.Background(), codectest.ChatRequest(u.URL, `{"model":"m","messages":[]}`))
			check(t, err)
		})
		t.Run(tt.name+"/stream", func(t *testing.T) {
			s, err := o.ChatStream(context.Background(), codectest.ChatRequest(u.URL, `{"model":"m","messages":[]}`))
			if err == nil {
				s.Close()
			}
			check(t, err)
		})
	}
}

func TestLongErrorMessageTruncated(t *testing.T) {
	u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":{"message":%q}}`, strings.Repeat("x", 5000))
	})
	_, err := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{})).Chat(context.Background(), codectest.ChatRequest(u.URL, `{}`))
	if e := providers.AsError(err); e == nil || len(e.Message) != providers.MaxMessage {
		t.Errorf("got %v, want a %d-byte message", err, providers.MaxMessage)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	codectest.LeakCheck(t)
	target := codectest.NewUpstream(t, codectest.SSEHandler("data: [DONE]\n\n"))
	redirector := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusFound)
	})
	o := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{}))
	_, err := o.Chat(context.Background(), codectest.ChatRequest(redirector.URL, `{}`))
	if e := providers.AsError(err); e == nil || e.Status != http.StatusFound || e.Retryable() {
		t.Errorf("chat: got %v, want a non-retryable *Error with status 302", err)
	}
	s, err := o.ChatStream(context.Background(), codectest.ChatRequest(redirector.URL, `{}`))
	if err == nil {
		s.Close()
	}
	if e := providers.AsError(err); e == nil || e.Status != http.StatusFound {
		t.Errorf("stream: got %v, want *Error with status 302", err)
	}
	if n := len(target.Requests()); n != 0 {
		t.Errorf("the redirect target got %d requests, want 0", n)
	}
}

func TestHeaders(t *testing.T) {
	u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"choices":[]}`)
	})
	req := codectest.ChatRequest(u.URL+"/v1", `{}`)
	req.Header = http.Header{
		"Traceparent":   {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		"Authorization": {"Bearer attacker"},
		"Host":          {"attacker.example"},
		"X-Injected":    {"a\r\nEvil: 1"},
		"Bad Name":      {"x"},
	}
	if _, err := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{UserAgent: "sluice-test"})).Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := u.Requests()[0]
	want := map[string]string{
		"Authorization": "Bearer " + codectest.TestKey.Reveal(),
		"Content-Type":  "application/json",
		"Traceparent":   "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"User-Agent":    "sluice-test",
		"X-Injected":    "",
		"Evil":          "",
	}
	for k, v := range want {
		if g := got.Header.Get(k); g != v {
			t.Errorf("header %s: got %q, want %q", k, g, v)
		}
	}
	if got.Method != http.MethodPost || got.Path != "/v1/chat/completions" {
		t.Errorf("got %s %s", got.Method, got.Path)
	}
	if len(got.Header.Values("Authorization")) != 1 {
		t.Errorf("Authorization sent %d times", len(got.Header.Values("Authorization")))
	}
}

// The Traceparent field (issue 17: a string, not a Header map per
// request) is sent as the traceparent header, in place of one in Header,
// unless it holds a control character.
func TestTraceparentField(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, tt := range []struct{ field, want string }{{tp, tp}, {tp + "\r\nEvil: 1", "00-old"}} {
		u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"choices":[]}`)
		})
		req := codectest.ChatRequest(u.URL+"/v1", `{}`)
		req.Traceparent, req.Header = tt.field, http.Header{"Traceparent": {"00-old"}}
		if _, err := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{})).Chat(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		got := u.Requests()[0].Header
		if v := got.Values("Traceparent"); len(v) != 1 || v[0] != tt.want || got.Get("Evil") != "" {
			t.Errorf("Traceparent %q: sent %q, want %q once", tt.field, v, tt.want)
		}
	}
}

// stallAfter answers with the events, then keeps the stream open without
// sending anything until the client goes away.
func stallAfter(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		codectest.SSEHandler(events...)(w, r)
		<-r.Context().Done()
	}
}

func TestStreamIdleTimeout(t *testing.T) {
	codectest.LeakCheck(t)
	u := codectest.NewUpstream(t, stallAfter("data: "+providers.ChunkHi+"\n\n"))
	o := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{IdleTimeout: 200 * time.Millisecond}))
	s, err := o.ChatStream(context.Background(), codectest.ChatRequest(u.URL, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c, err := s.Next(); err != nil || string(c) != providers.ChunkHi {
		t.Fatalf("first chunk: got %q, %v", c, err)
	}
	start := time.Now()
	_, err = s.Next()
	if e := providers.AsError(err); e == nil || !e.Timeout || !errors.Is(err, providers.ErrStreamIdle) {
		t.Fatalf("got %v, want an idle timeout", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("timed out after %v, want about 200ms", d)
	}
}

func TestStreamDeadline(t *testing.T) {
	codectest.LeakCheck(t)
	u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for {
			if _, err := io.WriteString(w, "data: "+providers.ChunkHi+"\n\n"); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	o := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{IdleTimeout: time.Second}))
	req := codectest.ChatRequest(u.URL, `{}`)
	req.Deadline = time.Now().Add(300 * time.Millisecond)
	s, err := o.ChatStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	chunks, err := codectest.ReadChunks(s)
	if e := providers.AsError(err); e == nil || !e.Timeout || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v after %d chunks, want a deadline timeout", err, len(chunks))
	}
	if len(chunks) < 3 {
		t.Errorf("got %d chunks before the deadline", len(chunks))
	}
}

func TestStreamFirstByteTimeout(t *testing.T) {
	codectest.LeakCheck(t)
	u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	o := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{FirstByteTimeout: 200 * time.Millisecond}))
	start := time.Now()
	_, err := o.ChatStream(context.Background(), codectest.ChatRequest(u.URL, `{}`))
	if e := providers.AsError(err); e == nil || !e.Timeout || !e.Retryable() {
		t.Fatalf("got %v, want a retryable timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestStreamOutlivesFirstByteTimeout checks that the first-byte limit
// stops applying once the headers arrived.
func TestStreamOutlivesFirstByteTimeout(t *testing.T) {
	codectest.LeakCheck(t)
	u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for range 8 {
			_, _ = io.WriteString(w, "data: "+providers.ChunkHi+"\n\n")
			_ = rc.Flush()
			time.Sleep(50 * time.Millisecond)
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	})
	o := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{FirstByteTimeout: 100 * time.Millisecond, IdleTimeout: time.Second}))
	s, err := o.ChatStream(context.Background(), codectest.ChatRequest(u.URL, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	chunks, err := codectest.ReadChunks(s)
	if err != io.EOF || len(chunks) != 8 {
		t.Errorf("got %d chunks and %v, want 8 and EOF", len(chunks), err)
	}
}

// endlessUpstream streams chunks until a write fails, then closes gone.
func endlessUpstream(t *testing.T, gone chan<- struct{}) *codectest.Upstream {
	return codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for {
			if _, err := io.WriteString(w, "data: "+providers.ChunkHi+"\n\n"); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

func TestStreamCloseStopsUpstream(t *testing.T) {
	codectest.LeakCheck(t)
	gone := make(chan struct{})
	u := endlessUpstream(t, gone)
	o := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{}))
	s, err := o.ChatStream(context.Background(), codectest.ChatRequest(u.URL, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream kept writing after Close")
	}
	if _, err := s.Next(); err == nil {
		t.Error("Next after Close succeeded")
	}
}

func TestStreamContextCancel(t *testing.T) {
	codectest.LeakCheck(t)
	gone := make(chan struct{})
	u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		stallAfter("data: "+providers.ChunkHi+"\n\n")(w, r)
	})
	o := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := o.ChatStream(ctx, codectest.ChatRequest(u.URL, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err = s.Next() // blocked until the cancellation closes the connection
	if !errors.Is(err, context.Canceled) || providers.AsError(err) == nil {
		t.Errorf("got %v, want *Error wrapping context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Next returned after %v", d)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream did not see the cancellation")
	}
}

func TestCanceledBeforeCall(t *testing.T) {
	u := codectest.NewUpstream(t, codectest.SSEHandler())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{}))
	if _, err := o.Chat(ctx, codectest.ChatRequest(u.URL, `{}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("chat: got %v", err)
	}
	if _, err := o.ChatStream(ctx, codectest.ChatRequest(u.URL, `{}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("stream: got %v", err)
	}
	if n := len(u.Requests()); n != 0 {
		t.Errorf("upstream got %d requests", n)
	}
}

// TestConnectionReuse checks that a stream read to [DONE] gives its
// connection back, and one closed early does not.
func TestConnectionReuse(t *testing.T) {
	codectest.LeakCheck(t)
	u := codectest.NewUpstream(t, codectest.SSEHandler("data: "+providers.ChunkHi+"\n\n", "data: [DONE]\n\n"))
	o := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{}))
	for range 3 {
		s, err := o.ChatStream(context.Background(), codectest.ChatRequest(u.URL, `{}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := codectest.ReadChunks(s); err != io.EOF {
			t.Fatal(err)
		}
		s.Close()
	}
	if n := u.NewConns.Load(); n != 1 {
		t.Errorf("3 complete streams used %d connections, want 1", n)
	}
	s, err := o.ChatStream(context.Background(), codectest.ChatRequest(u.URL, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	s.Close() // before [DONE]: the connection must not be reused
	s, err = o.ChatStream(context.Background(), codectest.ChatRequest(u.URL, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := codectest.ReadChunks(s); err != io.EOF {
		t.Fatal(err)
	}
	s.Close()
	if n := u.NewConns.Load(); n != 2 {
		t.Errorf("after an abandoned stream: %d connections, want 2", n)
	}
}

func TestResponseTooLarge(t *testing.T) {
	u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"x":"`+strings.Repeat("a", 2000)+`"}`)
	})
	o := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{MaxResponseBytes: 1000}))
	_, err := o.Chat(context.Background(), codectest.ChatRequest(u.URL, `{}`))
	if e := providers.AsError(err); e == nil || e.Status != http.StatusBadGateway {
		t.Errorf("got %v, want *Error 502", err)
	}
}

func TestConnectErrorRetryable(t *testing.T) {
	u := codectest.NewUpstream(t, codectest.SSEHandler())
	base := u.URL
	u.Close() // nothing listens there now
	_, err := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{})).Chat(context.Background(), codectest.ChatRequest(base, `{}`))
	e := providers.AsError(err)
	if e == nil || e.Status != 0 || !e.Retryable() {
		t.Fatalf("got %v, want a retryable transport *Error", err)
	}
	if diff := cmp.Diff("", e.Message); diff != "" {
		t.Errorf("message: %s", diff)
	}
}

// TestTLS runs a stream over TLS: the handshake happens in the dialer, the
// idle limit reaches the raw connection under TLS, and a finished stream's
// connection is reused.
func TestTLS(t *testing.T) {
	codectest.LeakCheck(t)
	u := httptest.NewUnstartedServer(codectest.SSEHandler("data: "+providers.ChunkHi+"\n\n", "data: [DONE]\n\n"))
	var conns atomic.Int32
	u.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	u.StartTLS()
	t.Cleanup(u.Close)
	roots := x509.NewCertPool()
	roots.AddCert(u.Certificate())
	c := codectest.NewTestClient(t, providers.ClientConfig{TLSConfig: &tls.Config{RootCAs: roots}, IdleTimeout: 200 * time.Millisecond})
	o := openai.New("openai", c)
	for range 2 {
		s, err := o.ChatStream(context.Background(), codectest.ChatRequest(u.URL, `{}`))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := codectest.ReadChunks(s); err != io.EOF || len(got) != 1 {
			t.Fatalf("got %q, %v", got, err)
		}
		s.Close()
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("2 streams used %d connections, want 1", n)
	}

	idle := httptest.NewUnstartedServer(stallAfter("data: " + providers.ChunkHi + "\n\n"))
	idle.StartTLS()
	t.Cleanup(idle.Close)
	roots.AddCert(idle.Certificate())
	s, err := o.ChatStream(context.Background(), codectest.ChatRequest(idle.URL, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := codectest.ReadChunks(s); !errors.Is(err, providers.ErrStreamIdle) {
		t.Errorf("got %v, want an idle timeout", err)
	}
}

// TestDialTimeoutCoversTLS checks that a server that accepts TCP but never
// completes the TLS handshake fails within the dial timeout.
func TestDialTimeoutCoversTLS(t *testing.T) {
	codectest.LeakCheck(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan net.Conn, 1) // one connection is all the test makes
	go func() {
		if conn, err := ln.Accept(); err == nil {
			accepted <- conn
		}
	}()
	t.Cleanup(func() {
		select {
		case conn := <-accepted:
			conn.Close()
		default:
		}
	})
	c := codectest.NewTestClient(t, providers.ClientConfig{DialTimeout: 200 * time.Millisecond})
	start := time.Now()
	_, err = openai.New("openai", c).Chat(context.Background(), codectest.ChatRequest("https://"+ln.Addr().String(), `{}`))
	if e := providers.AsError(err); e == nil || !e.Timeout {
		t.Errorf("got %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}
