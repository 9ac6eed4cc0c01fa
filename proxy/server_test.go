package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/sluicehq/sluice/internal/canary"
	"github.com/sluicehq/sluice/internal/openaischema"
)

// started is a server serving on a real loopback listener.
type started struct {
	addr string
	stop context.CancelFunc
	done chan error // receives Serve's result once
}

// startServer serves opts on 127.0.0.1:0 until the test ends.
func startServer(t *testing.T, opts Options) *started {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = canary.Logger(t)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := &started{addr: ln.Addr().String(), stop: cancel, done: make(chan error, 1)}
	go func() { st.done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-st.done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return st
}

// get sends a request with net/http and returns the response and its body.
func get(t *testing.T, method, url string, hdr http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vv := range hdr {
		req.Header[k] = vv
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, body
}

// raw writes head (and then body, concurrently, ignoring write errors: the
// server may stop reading) on a new connection and parses the response.
func raw(t *testing.T, addr, head string, body io.Reader) *fasthttp.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		if _, err := io.WriteString(c, head); err != nil {
			return
		}
		if body != nil {
			_, _ = io.Copy(c, body)
		}
	}()
	resp := &fasthttp.Response{}
	if err := resp.Read(bufio.NewReader(c)); err != nil {
		t.Fatalf("read response: %v", err)
	}
	c.Close() // unblocks the writer
	<-wrote
	return resp
}

// wantRequestID checks that v is a UUIDv7.
func wantRequestID(t *testing.T, v string) {
	t.Helper()
	u, err := uuid.Parse(v)
	if err != nil || u.Version() != 7 || len(v) != 36 {
		t.Errorf("x-sluice-request-id = %q, want a UUIDv7", v)
	}
}

// wantError checks that body is the contract's error shape with the given
// code and type.
func wantError(t *testing.T, body []byte, typ, code string) {
	t.Helper()
	var shape map[string]map[string]any
	if err := json.Unmarshal(body, &shape); err != nil {
		t.Fatalf("body %q is not JSON: %v", body, err)
	}
	openaischema.Check(t, openaischema.Error, "the error body", body)
	e, ok := shape["error"]
	if !ok || len(shape) != 1 {
		t.Fatalf("body %s: want a single top-level \"error\" object", body)
	}
	got := map[string]any{"type": e["type"], "code": e["code"], "param": e["param"]}
	want := map[string]any{"type": typ, "code": code, "param": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error body %s (-want +got):\n%s", body, diff)
	}
	if _, ok := e["param"]; !ok {
		t.Errorf("error body %s has no param key", body)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("error body %s has no message", body)
	}
}

func TestConfigValidate(t *testing.T) {
	var c Config
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate(zero) = %v", err)
	}
	want := Config{
		Listen: ":8080", MaxBodyBytes: 10 << 20,
		ReadTimeout: 30 * time.Second, WriteTimeout: 10 * time.Minute, IdleTimeout: 2 * time.Minute,
		ShutdownGrace: 30 * time.Second, Concurrency: 10000,
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name string
		c    Config
	}{
		{"bad listen", Config{Listen: "8080"}},
		{"negative body", Config{MaxBodyBytes: -1}},
		{"negative read timeout", Config{ReadTimeout: -time.Second}},
		{"negative grace", Config{ShutdownGrace: -time.Second}},
		{"negative concurrency", Config{Concurrency: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.c.Validate(); err == nil {
				t.Errorf("Validate(%+v) = nil, want an error", tc.c)
			}
		})
	}
}

func TestHealthz(t *testing.T) {
	for _, tc := range []struct {
		status     string
		wantStatus int
	}{
		{StatusOK, 200},
		{StatusDegraded, 200},
		{StatusUnavailable, 503},
	} {
		t.Run(tc.status, func(t *testing.T) {
			st := startServer(t, Options{
				Version: "v1.2.3",
				Health: func(ctx context.Context) Health {
					if _, ok := ctx.Deadline(); !ok {
						t.Error("health context has no deadline")
					}
					return Health{Status: tc.status, Checks: map[string]Check{"store": {Status: tc.status, Detail: "x"}}}
				},
			})
			resp, body := get(t, "GET", "http://"+st.addr+"/healthz", nil)
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("content-type = %q, want application/json", ct)
			}
			wantRequestID(t, resp.Header.Get("x-sluice-request-id"))
			var got map[string]any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
			want := map[string]any{
				"status": tc.status, "version": "v1.2.3", "uptime_s": float64(0),
				"checks": map[string]any{"store": map[string]any{"status": tc.status, "detail": "x"}},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}

			resp, body = get(t, "HEAD", "http://"+st.addr+"/healthz", nil)
			if resp.StatusCode != tc.wantStatus || len(body) != 0 {
				t.Errorf("HEAD: status %d body %q, want %d and no body", resp.StatusCode, body, tc.wantStatus)
			}
		})
	}

	t.Run("default ok", func(t *testing.T) {
		st := startServer(t, Options{})
		resp, body := get(t, "GET", "http://"+st.addr+"/healthz", nil)
		if resp.StatusCode != 200 || string(body) != `{"status":"ok","version":"","uptime_s":0,"checks":{}}` {
			t.Errorf("got %d %s", resp.StatusCode, body)
		}
	})

	t.Run("method", func(t *testing.T) {
		st := startServer(t, Options{})
		resp, body := get(t, "POST", "http://"+st.addr+"/healthz", nil)
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("POST: status %d allow %q, want 405 and GET, HEAD", resp.StatusCode, resp.Header.Get("Allow"))
		}
		wantError(t, body, "invalid_request_error", "method_not_allowed")
	})
}

func TestInferenceNotEnabled(t *testing.T) {
	st := startServer(t, Options{})
	for _, path := range []string{"/v1/chat/completions", "/v1", "/v1/acme/gw/openai/chat/completions"} {
		resp, body := get(t, "POST", "http://"+st.addr+path, nil)
		if resp.StatusCode != http.StatusNotImplemented {
			t.Errorf("%s: status = %d, want 501", path, resp.StatusCode)
		}
		wantError(t, body, "api_error", "not_implemented")
		wantRequestID(t, resp.Header.Get("x-sluice-request-id"))
	}
}

func TestInferenceRouted(t *testing.T) {
	var seen atomic.Value
	st := startServer(t, Options{
		Inference: func(ctx *fasthttp.RequestCtx) {
			seen.Store(string(RequestID(ctx)))
			// A handler that replaces the whole response keeps the id.
			ctx.Response.Reset()
			ctx.SetStatusCode(200)
			ctx.SetBodyString("inference " + string(ctx.Path()))
		},
		Admin: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "admin "+r.URL.Path)
		}),
	})
	for path, want := range map[string]string{
		"/v1/models":  "inference /v1/models",
		"/v1":         "inference /v1",
		"/v10/models": "admin /v10/models",
		"/admin/v1/x": "admin /admin/v1/x",
	} {
		resp, body := get(t, "GET", "http://"+st.addr+path, http.Header{"X-Sluice-Request-Id": {"client"}})
		if string(body) != want {
			t.Errorf("GET %s = %q, want %q", path, body, want)
		}
		id := resp.Header.Get("x-sluice-request-id")
		wantRequestID(t, id)
		if strings.HasPrefix(want, "inference") {
			if got := seen.Load(); got != id {
				t.Errorf("GET %s: handler saw request id %q, response has %q", path, got, id)
			}
		}
	}
}

func TestAdmin(t *testing.T) {
	type call struct{ Path, ID string }
	calls := make(chan call, 10) // more than the test sends
	st := startServer(t, Options{Admin: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls <- call{r.URL.Path, r.Header.Get("X-Sluice-Request-Id")}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{}`)
	})})

	for _, path := range []string{"/admin/v1/x", "/", "/metrics"} {
		resp, body := get(t, "GET", "http://"+st.addr+path, http.Header{"X-Sluice-Request-Id": {"spoofed"}})
		if resp.StatusCode != 200 || string(body) != "{}" {
			t.Errorf("GET %s: %d %q, want 200 {}", path, resp.StatusCode, body)
		}
		id := resp.Header.Get("x-sluice-request-id")
		wantRequestID(t, id)
		if got := resp.Header.Values("X-Sluice-Request-Id"); len(got) != 1 {
			t.Errorf("GET %s: request id headers %q, want one", path, got)
		}
		got := <-calls
		if diff := cmp.Diff(call{path, id}, got); diff != "" {
			t.Errorf("GET %s: admin saw (-want +got):\n%s", path, diff)
		}
	}

	t.Run("nil admin", func(t *testing.T) {
		st := startServer(t, Options{})
		resp, body := get(t, "GET", "http://"+st.addr+"/admin/v1/tenants", nil)
		if resp.StatusCode != 404 {
			t.Errorf("status = %d, want 404", resp.StatusCode)
		}
		wantError(t, body, "not_found_error", "not_found")
		wantRequestID(t, resp.Header.Get("x-sluice-request-id"))
	})
}

func TestBodyLimit(t *testing.T) {
	var got atomic.Int64
	st := startServer(t, Options{Inference: func(ctx *fasthttp.RequestCtx) {
		got.Store(int64(len(ctx.PostBody())))
	}})
	const limit = 10 << 20
	over := strings.Repeat("a", 11<<20)

	chunked := func(n int) io.Reader {
		var b strings.Builder
		for n > 0 {
			c := min(n, 1<<20)
			fmt.Fprintf(&b, "%x\r\n%s\r\n", c, strings.Repeat("b", c))
			n -= c
		}
		b.WriteString("0\r\n\r\n")
		return strings.NewReader(b.String())
	}

	for _, tc := range []struct {
		name string
		head string
		body io.Reader
		want int
	}{
		{"11 MiB body", fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(over)),
			strings.NewReader(over), 413},
		{"lying content-length", "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 11534336\r\n\r\n",
			strings.NewReader(`{"a":1}`), 413},
		{"chunked over limit", "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
			chunked(11 << 20), 413},
		{"admin path too", fmt.Sprintf("POST /admin/v1/tenants HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(over)),
			strings.NewReader(over), 413},
		{"exactly the limit", fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", limit),
			strings.NewReader(over[:limit]), 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := raw(t, st.addr, tc.head, tc.body)
			if resp.StatusCode() != tc.want {
				t.Fatalf("status = %d, want %d; body %q", resp.StatusCode(), tc.want, resp.Body())
			}
			wantRequestID(t, string(resp.Header.Peek("x-sluice-request-id")))
			if tc.want == 200 {
				if got.Load() != limit {
					t.Errorf("handler got %d bytes, want %d", got.Load(), limit)
				}
				return
			}
			wantError(t, resp.Body(), "invalid_request_error", "body_too_large")
			if !resp.ConnectionClose() {
				t.Error("connection not closed after a body over the limit")
			}
		})
	}
}

func TestMalformedRequests(t *testing.T) {
	var calls atomic.Int32
	st := startServer(t, Options{Inference: func(ctx *fasthttp.RequestCtx) { calls.Add(1) }})
	for _, tc := range []struct {
		name, head string
		want       int
		code       string
	}{
		{"NUL in header value", "GET /v1/models HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400, "invalid_request"},
		{"CR in header value", "GET /v1/models HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", 400, "invalid_request"},
		{"NUL in authorization", "GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\x00\r\n\r\n", 400, "invalid_request"},
		{"CR in user agent", "GET /v1/models HTTP/1.1\r\nHost: x\r\nUser-Agent: a\rb\r\n\r\n", 400, "invalid_request"},
		{"LF in header value", "GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Request-Id: a\nX-Evil: 1\r\n\r\n", 400, "invalid_request"},
		{"NUL in header name", "GET /v1/models HTTP/1.1\r\nHost: x\r\nX-A\x00: b\r\n\r\n", 400, "invalid_request"},
		{"DEL in header value", "GET /v1/models HTTP/1.1\r\nHost: x\r\nX-A: a\x7fb\r\n\r\n", 400, "invalid_request"},
		{"not HTTP", "HELLO\r\n\r\n", 400, "invalid_request"},
		{"header too large", "GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 20<<10) + "\r\n\r\n", 431, "headers_too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := raw(t, st.addr, tc.head, nil)
			if resp.StatusCode() != tc.want {
				t.Fatalf("status = %d, want %d; body %q", resp.StatusCode(), tc.want, resp.Body())
			}
			wantError(t, resp.Body(), "invalid_request_error", tc.code)
			wantRequestID(t, string(resp.Header.Peek("x-sluice-request-id")))
			if !resp.ConnectionClose() {
				t.Error("connection not closed after a malformed request")
			}
		})
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("handler called %d times for malformed requests", n)
	}
}

// TestHeaderCheckInProcess covers headers set by code rather than parsed
// from the wire, which fasthttp does not validate.
func TestHeaderCheckInProcess(t *testing.T) {
	s, err := New(Options{Inference: func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(204) }})
	if err != nil {
		t.Fatal(err)
	}
	// fasthttp's setters turn CR and LF into spaces, so NUL is the byte
	// that can reach the handler this way.
	for _, v := range []string{"a\x00b", "\x00", "ok"} {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI("/v1/models")
		ctx.Request.Header.Set("X-A", v)
		s.Handler()(&ctx)
		want := 400
		if v == "ok" {
			want = 204
		}
		if got := ctx.Response.StatusCode(); got != want {
			t.Errorf("X-A %q: status %d, want %d", v, got, want)
		}
		wantRequestID(t, string(ctx.Response.Header.Peek("x-sluice-request-id")))
	}
}

func TestPanicRecovered(t *testing.T) {
	st := startServer(t, Options{
		Inference: func(ctx *fasthttp.RequestCtx) { panic("boom") },
		Admin:     http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") }),
	})
	for _, path := range []string{"/v1/models", "/admin/v1/x"} {
		resp, body := get(t, "GET", "http://"+st.addr+path, nil)
		if resp.StatusCode != 500 {
			t.Errorf("%s: status = %d, want 500", path, resp.StatusCode)
		}
		wantError(t, body, "api_error", "internal_error")
		wantRequestID(t, resp.Header.Get("x-sluice-request-id"))
	}
	// The process is still serving.
	if resp, _ := get(t, "GET", "http://"+st.addr+"/healthz", nil); resp.StatusCode != 200 {
		t.Errorf("healthz after panic: %d", resp.StatusCode)
	}
}

func TestGracefulShutdown(t *testing.T) {
	entered := make(chan struct{})
	st := startServer(t, Options{
		Config: Config{ShutdownGrace: 10 * time.Second},
		Admin: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(entered)
			time.Sleep(500 * time.Millisecond)
			if err := r.Context().Err(); err != nil {
				http.Error(w, "context cancelled during grace: "+err.Error(), 500)
				return
			}
			fmt.Fprint(w, "done")
		}),
	})

	type result struct {
		status int
		body   string
		err    error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + st.addr + "/admin/v1/slow")
		if err != nil {
			res <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		res <- result{resp.StatusCode, string(b), err}
	}()

	<-entered
	st.stop()

	r := <-res
	if r.err != nil || r.status != 200 || r.body != "done" {
		t.Errorf("in-flight request: status %d body %q err %v, want 200 done", r.status, r.body, r.err)
	}
	select {
	case err := <-st.done:
		if err != nil {
			t.Errorf("Serve = %v, want nil", err)
		}
		st.done <- err // for the cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
	if _, err := net.DialTimeout("tcp", st.addr, time.Second); err == nil {
		t.Error("listener still accepting after shutdown")
	}
}

func TestShutdownGraceExceeded(t *testing.T) {
	entered := make(chan struct{})
	cancelled := make(chan struct{})
	st := startServer(t, Options{
		Config: Config{ShutdownGrace: 200 * time.Millisecond},
		Admin: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(entered)
			select {
			case <-r.Context().Done():
				close(cancelled)
			case <-time.After(10 * time.Second):
			}
		}),
	})
	go func() {
		resp, err := http.Get("http://" + st.addr + "/admin/v1/stuck")
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	st.stop()
	select {
	case err := <-st.done:
		if err == nil || errors.Is(err, context.Canceled) {
			t.Errorf("Serve = %v, want a grace-exceeded error", err)
		}
		st.done <- err
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the grace period")
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Error("admin request context not cancelled when the grace ran out")
	}
}

func TestInmemoryListener(t *testing.T) {
	// Serve works on any net.Listener; fasthttputil's in-memory one is what
	// other packages' tests will use.
	s, err := New(Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln := fasthttputil.NewInmemoryListener()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	c := &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	status, body, err := c.Get(nil, "http://sluice/healthz")
	if err != nil || status != 200 || !strings.Contains(string(body), `"status":"ok"`) {
		t.Errorf("healthz: %d %q %v", status, body, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve = %v", err)
	}
}

func BenchmarkServeInference(b *testing.B) {
	s, err := New(Options{Inference: func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(200) }})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	var ctx fasthttp.RequestCtx
	b.ReportAllocs()
	for b.Loop() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.SetRequestURI("/v1/acme/prod/openai/chat/completions")
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.Header.Set("Authorization", "Bearer sk-sl-0123456789012345678901234567890123456789")
		ctx.Request.Header.SetContentType("application/json")
		h(&ctx)
	}
}
