package providers

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
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fasthttp"
)

// TestDialControl checks the dialer's Control hook, the check that holds
// whatever resolved the address a socket connects to.
func TestDialControl(t *testing.T) {
	tests := []struct {
		address      string
		allowPrivate bool
		want         string // the ForbiddenAddrError reason, "" for allowed
	}{
		{"169.254.169.254:80", true, "link-local"},
		{"[64:ff9b::a9fe:a9fe]:80", true, "link-local"},
		{"[::a9fe:a9fe]:80", true, "link-local"},
		{"[2002:a9fe:a9fe::]:80", true, "link-local"},
		{"[64:ff9b::7f00:1]:443", false, "loopback"},
		{"127.0.0.1:443", false, "loopback"},
		{"127.0.0.1:443", true, ""},
		{"93.184.216.34:443", false, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.address, tt.allowPrivate), func(t *testing.T) {
			c := NewClient(ClientConfig{AllowPrivate: tt.allowPrivate})
			err := c.controlDial("tcp", tt.address, nil)
			var fe *ForbiddenAddrError
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want allowed", err)
			case tt.want != "" && !errors.As(err, &fe):
				t.Errorf("got %v, want a ForbiddenAddrError", err)
			case tt.want != "" && fe.Reason != tt.want:
				t.Errorf("refused as %q, want %q", fe.Reason, tt.want)
			}
		})
	}
}

func TestScrub(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "The model `gpt-5` does not exist", "The model `gpt-5` does not exist"},
		{"openai masked key", "Incorrect API key provided: sk-proj-****************************abcd. You can find your API key at https://platform.openai.com/account/api-keys.",
			"Incorrect API key provided: [REDACTED]. You can find your API key at https://platform.openai.com/account/api-keys."},
		{"bearer", "header was Bearer abc.def-ghi and more", "header was Bearer [REDACTED] and more"},
		{"bearer case", "authorization: bearer   xyz123", "authorization: bearer   [REDACTED]"},
		{"our key", "key sk-test-0123456789abcdefghij is invalid", "key [REDACTED] is invalid"},
		{"our key fragment", "got 0123456789abcd, expected something", "got [REDACTED], expected something"},
		{"other prefixes", "gsk_abcdefgh12 xai-abcdefgh12 AIzaSyA1234567", "[REDACTED] [REDACTED] [REDACTED]"},
		{"short sk- word", "ask-me task-force sk-1", "ask-me task-force sk-1"},
		{"control chars", "line1\nline2\r\x00end", "line1 line2  end"},
		{"invalid utf8", "bad \xff byte", "bad \uFFFD byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scrub(tt.in, testKey); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	long := scrub(strings.Repeat("é", 600), "")
	if len(long) > maxMessage || !utf8.ValidString(long) {
		t.Errorf("long message: %d bytes, valid UTF-8 %v", len(long), utf8.ValidString(long))
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"ms wins", map[string]string{"Retry-After": "7", "retry-after-ms": "1500"}, 1500 * time.Millisecond},
		{"date", map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"negative", map[string]string{"Retry-After": "-5"}, 0},
		{"capped", map[string]string{"Retry-After": "999999"}, maxRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h fasthttp.ResponseHeader
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := retryAfter(&h, now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

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
		u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			for k, v := range tt.header {
				w.Header().Set(k, v)
			}
			w.WriteHeader(tt.status)
			_, _ = io.WriteString(w, tt.body)
		})
		o := NewOpenAI("openai", newTestClient(t, ClientConfig{}))
		check := func(t *testing.T, err error) {
			e := AsError(err)
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
			_, err := o.Chat(context.Background(), chatRequest(u.URL, `{"model":"m","messages":[]}`))
			check(t, err)
		})
		t.Run(tt.name+"/stream", func(t *testing.T) {
			s, err := o.ChatStream(context.Background(), chatRequest(u.URL, `{"model":"m","messages":[]}`))
			if err == nil {
				s.Close()
			}
			check(t, err)
		})
	}
}

func TestLongErrorMessageTruncated(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":{"message":%q}}`, strings.Repeat("x", 5000))
	})
	_, err := NewOpenAI("openai", newTestClient(t, ClientConfig{})).Chat(context.Background(), chatRequest(u.URL, `{}`))
	if e := AsError(err); e == nil || len(e.Message) != maxMessage {
		t.Errorf("got %v, want a %d-byte message", err, maxMessage)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	leakCheck(t)
	target := newUpstream(t, sseHandler("data: [DONE]\n\n"))
	redirector := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusFound)
	})
	o := NewOpenAI("openai", newTestClient(t, ClientConfig{}))
	_, err := o.Chat(context.Background(), chatRequest(redirector.URL, `{}`))
	if e := AsError(err); e == nil || e.Status != http.StatusFound || e.Retryable() {
		t.Errorf("chat: got %v, want a non-retryable *Error with status 302", err)
	}
	s, err := o.ChatStream(context.Background(), chatRequest(redirector.URL, `{}`))
	if err == nil {
		s.Close()
	}
	if e := AsError(err); e == nil || e.Status != http.StatusFound {
		t.Errorf("stream: got %v, want *Error with status 302", err)
	}
	if n := len(target.requests()); n != 0 {
		t.Errorf("the redirect target got %d requests, want 0", n)
	}
}

func TestDialRefusesForbiddenAddresses(t *testing.T) {
	leakCheck(t)
	u := newUpstream(t, sseHandler())
	port := u.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	resolver := fakeResolver{
		"private.example":  {netip.MustParseAddr("10.0.0.5")},
		"metadata.example": {netip.MustParseAddr("169.254.169.254")},
		"mixed.example":    {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("127.0.0.1")},
		"upstream.test":    {netip.MustParseAddr("127.0.0.1")},
		"nat64.example":    {netip.MustParseAddr("64:ff9b::a9fe:a9fe")},
	}
	tests := []struct {
		name         string
		base         string
		allowPrivate bool
		want         string // the ForbiddenAddrError reason, "" for success
	}{
		{"metadata ip", "http://169.254.169.254/v1", true, "link-local"},
		{"metadata ip mapped", "http://[::ffff:a9fe:a9fe]/v1", true, "link-local"},
		{"metadata ip NAT64", "http://[64:ff9b::a9fe:a9fe]/v1", true, "link-local"},
		{"metadata ip IPv4-compatible", "http://[::a9fe:a9fe]/v1", true, "link-local"},
		{"metadata ip 6to4", "http://[2002:a9fe:a9fe::]/v1", true, "link-local"},
		{"metadata ip local-use NAT64", "http://[64:ff9b:1::a9fe:a9fe]/v1", true, "link-local"},
		{"metadata ip Teredo client", "http://[2001:0:4136:e378:8000:63bf:5601:5601]/v1", true, "link-local"},
		{"name to NAT64 metadata", "http://nat64.example/v1", true, "link-local"},
		{"loopback NAT64", fmt.Sprintf("http://[64:ff9b::7f00:1]:%d/v1", port), false, "loopback"},
		{"name to private", "http://private.example/v1", false, "private"},
		{"name to metadata", fmt.Sprintf("http://metadata.example:%d/v1", port), true, "link-local"},
		{"one bad address of two", "https://mixed.example/v1", false, "loopback"},
		{"loopback test server", u.URL, false, "loopback"},
		{"loopback name", fmt.Sprintf("http://upstream.test:%d", port), false, "loopback"},
		{"loopback allowed", u.URL, true, ""},
		{"loopback name allowed", fmt.Sprintf("http://upstream.test:%d", port), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClient(ClientConfig{AllowPrivate: tt.allowPrivate, Resolver: resolver, DialTimeout: time.Second})
			defer c.CloseIdleConnections()
			before := len(u.requests())
			resp, err := c.Do(context.Background(), &HTTPRequest{BaseURL: tt.base, Path: "chat/completions", Body: []byte(`{}`)})
			var fe *ForbiddenAddrError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("got %v, want success", err)
			case tt.want == "" && resp.Status != 200:
				t.Fatalf("got status %d", resp.Status)
			case tt.want != "" && !errors.As(err, &fe):
				t.Fatalf("got %v, want ForbiddenAddrError", err)
			case tt.want != "" && fe.Reason != tt.want:
				t.Errorf("refused as %q, want %q", fe.Reason, tt.want)
			}
			if tt.want != "" {
				if n := len(u.requests()) - before; n != 0 {
					t.Errorf("the server got %d requests, want 0", n)
				}
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"choices":[]}`)
	})
	req := chatRequest(u.URL+"/v1", `{}`)
	req.Header = http.Header{
		"Traceparent":   {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		"Authorization": {"Bearer attacker"},
		"Host":          {"attacker.example"},
		"X-Injected":    {"a\r\nEvil: 1"},
		"Bad Name":      {"x"},
	}
	if _, err := NewOpenAI("openai", newTestClient(t, ClientConfig{UserAgent: "sluice-test"})).Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := u.requests()[0]
	want := map[string]string{
		"Authorization": "Bearer " + testKey.Reveal(),
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

// stallAfter answers with the events, then keeps the stream open without
// sending anything until the client goes away.
func stallAfter(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sseHandler(events...)(w, r)
		<-r.Context().Done()
	}
}

const chunkHi = `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`

func TestStreamIdleTimeout(t *testing.T) {
	leakCheck(t)
	u := newUpstream(t, stallAfter("data: "+chunkHi+"\n\n"))
	o := NewOpenAI("openai", newTestClient(t, ClientConfig{IdleTimeout: 200 * time.Millisecond}))
	s, err := o.ChatStream(context.Background(), chatRequest(u.URL, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c, err := s.Next(); err != nil || string(c) != chunkHi {
		t.Fatalf("first chunk: got %q, %v", c, err)
	}
	start := time.Now()
	_, err = s.Next()
	if e := AsError(err); e == nil || !e.Timeout || !errors.Is(err, ErrStreamIdle) {
		t.Fatalf("got %v, want an idle timeout", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("timed out after %v, want about 200ms", d)
	}
}

func TestStreamDeadline(t *testing.T) {
	leakCheck(t)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for {
			if _, err := io.WriteString(w, "data: "+chunkHi+"\n\n"); err != nil {
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
	o := NewOpenAI("openai", newTestClient(t, ClientConfig{IdleTimeout: time.Second}))
	req := chatRequest(u.URL, `{}`)
	req.Deadline = time.Now().Add(300 * time.Millisecond)
	s, err := o.ChatStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	chunks, err := readChunks(s)
	if e := AsError(err); e == nil || !e.Timeout || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v after %d chunks, want a deadline timeout", err, len(chunks))
	}
	if len(chunks) < 3 {
		t.Errorf("got %d chunks before the deadline", len(chunks))
	}
}

func TestStreamFirstByteTimeout(t *testing.T) {
	leakCheck(t)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	o := NewOpenAI("openai", newTestClient(t, ClientConfig{FirstByteTimeout: 200 * time.Millisecond}))
	start := time.Now()
	_, err := o.ChatStream(context.Background(), chatRequest(u.URL, `{}`))
	if e := AsError(err); e == nil || !e.Timeout || !e.Retryable() {
		t.Fatalf("got %v, want a retryable timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestStreamOutlivesFirstByteTimeout checks that the first-byte limit
// stops applying once the headers arrived.
func TestStreamOutlivesFirstByteTimeout(t *testing.T) {
	leakCheck(t)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for range 8 {
			_, _ = io.WriteString(w, "data: "+chunkHi+"\n\n")
			_ = rc.Flush()
			time.Sleep(50 * time.Millisecond)
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	})
	o := NewOpenAI("openai", newTestClient(t, ClientConfig{FirstByteTimeout: 100 * time.Millisecond, IdleTimeout: time.Second}))
	s, err := o.ChatStream(context.Background(), chatRequest(u.URL, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	chunks, err := readChunks(s)
	if err != io.EOF || len(chunks) != 8 {
		t.Errorf("got %d chunks and %v, want 8 and EOF", len(chunks), err)
	}
}

// endlessUpstream streams chunks until a write fails, then closes gone.
func endlessUpstream(t *testing.T, gone chan<- struct{}) *upstream {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for {
			if _, err := io.WriteString(w, "data: "+chunkHi+"\n\n"); err != nil {
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
	leakCheck(t)
	gone := make(chan struct{})
	u := endlessUpstream(t, gone)
	o := NewOpenAI("openai", newTestClient(t, ClientConfig{}))
	s, err := o.ChatStream(context.Background(), chatRequest(u.URL, `{}`))
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
	leakCheck(t)
	gone := make(chan struct{})
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		stallAfter("data: "+chunkHi+"\n\n")(w, r)
	})
	o := NewOpenAI("openai", newTestClient(t, ClientConfig{}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := o.ChatStream(ctx, chatRequest(u.URL, `{}`))
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
	if !errors.Is(err, context.Canceled) || AsError(err) == nil {
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
	u := newUpstream(t, sseHandler())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := NewOpenAI("openai", newTestClient(t, ClientConfig{}))
	if _, err := o.Chat(ctx, chatRequest(u.URL, `{}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("chat: got %v", err)
	}
	if _, err := o.ChatStream(ctx, chatRequest(u.URL, `{}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("stream: got %v", err)
	}
	if n := len(u.requests()); n != 0 {
		t.Errorf("upstream got %d requests", n)
	}
}

// TestConnectionReuse checks that a stream read to [DONE] gives its
// connection back, and one closed early does not.
func TestConnectionReuse(t *testing.T) {
	leakCheck(t)
	u := newUpstream(t, sseHandler("data: "+chunkHi+"\n\n", "data: [DONE]\n\n"))
	o := NewOpenAI("openai", newTestClient(t, ClientConfig{}))
	for range 3 {
		s, err := o.ChatStream(context.Background(), chatRequest(u.URL, `{}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := readChunks(s); err != io.EOF {
			t.Fatal(err)
		}
		s.Close()
	}
	if n := u.newConns.Load(); n != 1 {
		t.Errorf("3 complete streams used %d connections, want 1", n)
	}
	s, err := o.ChatStream(context.Background(), chatRequest(u.URL, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	s.Close() // before [DONE]: the connection must not be reused
	s, err = o.ChatStream(context.Background(), chatRequest(u.URL, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readChunks(s); err != io.EOF {
		t.Fatal(err)
	}
	s.Close()
	if n := u.newConns.Load(); n != 2 {
		t.Errorf("after an abandoned stream: %d connections, want 2", n)
	}
}

func TestResponseTooLarge(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"x":"`+strings.Repeat("a", 2000)+`"}`)
	})
	o := NewOpenAI("openai", newTestClient(t, ClientConfig{MaxResponseBytes: 1000}))
	_, err := o.Chat(context.Background(), chatRequest(u.URL, `{}`))
	if e := AsError(err); e == nil || e.Status != http.StatusBadGateway {
		t.Errorf("got %v, want *Error 502", err)
	}
}

func TestConnectErrorRetryable(t *testing.T) {
	u := newUpstream(t, sseHandler())
	base := u.URL
	u.Close() // nothing listens there now
	_, err := NewOpenAI("openai", newTestClient(t, ClientConfig{})).Chat(context.Background(), chatRequest(base, `{}`))
	e := AsError(err)
	if e == nil || e.Status != 0 || !e.Retryable() {
		t.Fatalf("got %v, want a retryable transport *Error", err)
	}
	if diff := cmp.Diff("", e.Message); diff != "" {
		t.Errorf("message: %s", diff)
	}
}

func TestClientConfigValidate(t *testing.T) {
	if err := (ClientConfig{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
	for _, c := range []ClientConfig{{MaxConnsPerHost: -1}, {IdleTimeout: -1}, {MaxResponseBytes: -1}} {
		if c.Validate() == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// TestTLS runs a stream over TLS: the handshake happens in the dialer, the
// idle limit reaches the raw connection under TLS, and a finished stream's
// connection is reused.
func TestTLS(t *testing.T) {
	leakCheck(t)
	u := httptest.NewUnstartedServer(sseHandler("data: "+chunkHi+"\n\n", "data: [DONE]\n\n"))
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
	c := newTestClient(t, ClientConfig{TLSConfig: &tls.Config{RootCAs: roots}, IdleTimeout: 200 * time.Millisecond})
	o := NewOpenAI("openai", c)
	for range 2 {
		s, err := o.ChatStream(context.Background(), chatRequest(u.URL, `{}`))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := readChunks(s); err != io.EOF || len(got) != 1 {
			t.Fatalf("got %q, %v", got, err)
		}
		s.Close()
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("2 streams used %d connections, want 1", n)
	}

	idle := httptest.NewUnstartedServer(stallAfter("data: " + chunkHi + "\n\n"))
	idle.StartTLS()
	t.Cleanup(idle.Close)
	roots.AddCert(idle.Certificate())
	s, err := o.ChatStream(context.Background(), chatRequest(idle.URL, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := readChunks(s); !errors.Is(err, ErrStreamIdle) {
		t.Errorf("got %v, want an idle timeout", err)
	}
}

// TestDialTimeoutCoversTLS checks that a server that accepts TCP but never
// completes the TLS handshake fails within the dial timeout.
func TestDialTimeoutCoversTLS(t *testing.T) {
	leakCheck(t)
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
	c := newTestClient(t, ClientConfig{DialTimeout: 200 * time.Millisecond})
	start := time.Now()
	_, err = NewOpenAI("openai", c).Chat(context.Background(), chatRequest("https://"+ln.Addr().String(), `{}`))
	if e := AsError(err); e == nil || !e.Timeout {
		t.Errorf("got %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}
