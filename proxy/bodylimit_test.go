package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// writeAllThenRead is a client as Python's http.client, requests and the
// openai SDK's httpx are: it writes the whole request, failing on any write
// error, and only then reads the answer. Such a client never saw the early
// 413 while the server reset the connection on it.
func writeAllThenRead(t *testing.T, addr, head string, body io.Reader) *fasthttp.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatalf("write head: %v", err)
	}
	if body != nil {
		// Plain writes from one buffer: the client allocates nothing per
		// write, so the heap test measures the server.
		buf := make([]byte, 32<<10)
		if _, err := io.CopyBuffer(struct{ io.Writer }{c}, struct{ io.Reader }{body}, buf); err != nil {
			t.Fatalf("write body: %v (the server reset the connection instead of reading what the client sends)", err)
		}
	}
	br := bufio.NewReader(c)
	resp := &fasthttp.Response{}
	if err := resp.Read(br); err != nil {
		t.Fatalf("read response: %v", err)
	}
	// The server closes the connection after the error answer, cleanly.
	if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("after the answer: read %d bytes, %v; want a clean EOF", n, err)
	}
	return resp
}

// repeatReader yields n bytes of b repeated, allocating nothing per read.
type repeatReader struct {
	b byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	p = p[:min(len(p), r.n)]
	for i := range p {
		p[i] = r.b
	}
	r.n -= len(p)
	return len(p), nil
}

// chunkedReader yields n bytes of 'b' as a chunked body in 64 KiB chunks.
func chunkedReader(n int) io.Reader {
	var parts []io.Reader
	for n > 0 {
		c := min(n, 64<<10)
		parts = append(parts, strings.NewReader(fmt.Sprintf("%x\r\n", c)), &repeatReader{'b', c}, strings.NewReader("\r\n"))
		n -= c
	}
	return io.MultiReader(append(parts, strings.NewReader("0\r\n\r\n"))...)
}

// TestOversizedRequestReadable checks that a client that writes the whole
// oversized request before reading (the Python clients and the openai SDK
// that saw EPIPE or a reset, and retried) reads the 413 or 431 and its
// error body, for bodies with a length, chunked bodies and header blocks.
func TestOversizedRequestReadable(t *testing.T) {
	var calls int
	st := startServer(t, Options{Inference: func(ctx *fasthttp.RequestCtx) { calls++ }})
	const over = 11 << 20
	manyHeaders := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "X-H%d: v\r\n", i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name   string
		head   string
		body   io.Reader
		status int
		code   string
	}{
		{"11 MiB with a length", fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", over),
			&repeatReader{'a', over}, 413, "body_too_large"},
		{"11 MiB chunked", "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
			chunkedReader(over), 413, "body_too_large"},
		{"11 MiB to the admin API", fmt.Sprintf("POST /admin/v1/tenants HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", over),
			&repeatReader{'a', over}, 413, "body_too_large"},
		{"1 MiB header", "GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ", io.MultiReader(&repeatReader{'h', 1 << 20}, strings.NewReader("\r\n\r\n")),
			431, "headers_too_large"},
		{"10k headers", "GET /v1/models HTTP/1.1\r\nHost: x\r\n", strings.NewReader(manyHeaders(10000) + "\r\n"),
			431, "headers_too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := writeAllThenRead(t, st.addr, tc.head, tc.body)
			if resp.StatusCode() != tc.status {
				t.Fatalf("status %d, want %d; body %q", resp.StatusCode(), tc.status, resp.Body())
			}
			wantError(t, resp.Body(), "invalid_request_error", tc.code)
			wantRequestID(t, string(resp.Header.Peek("x-sluice-request-id")))
			if !resp.ConnectionClose() {
				t.Error("the answer does not say Connection: close")
			}
		})
	}
	if calls != 0 {
		t.Errorf("handler called %d times", calls)
	}
}

// TestOversizedBodyGoClient sends an 11 MiB body with net/http's client,
// which reads the answer while it writes.
func TestOversizedBodyGoClient(t *testing.T) {
	st := startServer(t, Options{})
	c := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	defer c.CloseIdleConnections()
	resp, err := c.Post("http://"+st.addr+"/v1/acme/prod/compat/chat/completions", "application/json",
		io.MultiReader(strings.NewReader(`{"model":"x","messages":[{"role":"user","content":"`), &repeatReader{'a', 11 << 20}, strings.NewReader(`"}]}`)))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	if resp.StatusCode != 413 {
		t.Fatalf("status %d, want 413; body %s", resp.StatusCode, body)
	}
	wantError(t, body, "invalid_request_error", "body_too_large")
}

// TestOversizedBodyEarlyAnswer checks that the 413 comes before the body
// is read: the client sends the head and 1 KiB of a body announced as
// 11 MiB, and reads the answer without sending more. It then sends the
// rest, which the server discards, and the connection ends cleanly.
func TestOversizedBodyEarlyAnswer(t *testing.T) {
	st := startServer(t, Options{})
	c, err := net.Dial("tcp", st.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	must(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	const over = 11 << 20
	_, err = fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", over, bytes.Repeat([]byte("a"), 1024))
	must(t, err)
	br := bufio.NewReader(c)
	resp := &fasthttp.Response{}
	if err := resp.Read(br); err != nil {
		t.Fatalf("read the early answer: %v", err)
	}
	if resp.StatusCode() != 413 {
		t.Fatalf("status %d, want 413", resp.StatusCode())
	}
	if _, err := io.Copy(c, &repeatReader{'a', over - 1024}); err != nil {
		t.Errorf("send the rest after the answer: %v", err)
	}
	if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("after the answer: %d bytes, %v; want a clean EOF", n, err)
	}
}

// TestOversizedBodyHeapBounded sends a 48 MiB chunked body to a server
// with a 1 MiB limit: what it allocates while answering 413 and
// discarding the rest is bounded by the limit, not by the body.
func TestOversizedBodyHeapBounded(t *testing.T) {
	st := startServer(t, Options{Config: Config{MaxBodyBytes: 1 << 20}})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp := writeAllThenRead(t, st.addr, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
		chunkedReader(48<<20))
	runtime.ReadMemStats(&after)
	if resp.StatusCode() != 413 {
		t.Fatalf("status %d, want 413", resp.StatusCode())
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("allocated %d MiB for a 48 MiB body over a 1 MiB limit, want at most 16 MiB", got>>20)
	}
}
