package proxy

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// exchange writes request on a new connection and reads until the server
// closes it (or 10 s pass), returning everything the server sent.
func exchange(t *testing.T, addr, request string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read until the server closes: %v (got %q)", err, out)
	}
	return string(out)
}

// TestRequestSmuggling sends the framing tricks of checklist item 13, each
// followed by a second, smuggled request on the same connection. The
// server must answer 400 and close the connection, so that neither the
// ambiguous request nor the smuggled one reaches a handler.
func TestRequestSmuggling(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	st := startServer(t, Options{Inference: func(ctx *fasthttp.RequestCtx) {
		mu.Lock()
		seen = append(seen, string(ctx.Path())+" "+string(ctx.PostBody()))
		mu.Unlock()
	}})
	const smuggled = "GET /v1/smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, tc := range []struct{ name, request string }{
		{"CL and TE", "POST /v1/a HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"},
		{"TE and CL", "POST /v1/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n2\r\nhi\r\n0\r\n\r\n"},
		{"two content-lengths", "POST /v1/a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\nhi"},
		{"two equal content-lengths", "POST /v1/a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nhi"},
		{"chunked, identity", "POST /v1/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n2\r\nhi\r\n0\r\n\r\n"},
		{"identity and CL", "POST /v1/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nhi"},
		{"gzip, chunked", "POST /v1/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"},
		{"two TE lines", "POST /v1/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"},
		{"TE with space before colon", "POST /v1/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"},
		{"obs-fold space", "POST /v1/a HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\nhi"},
		{"obs-fold tab", "POST /v1/a HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\tb\r\nContent-Length: 2\r\n\r\nhi"},
		{"obs-fold of TE", "POST /v1/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\n chunked\r\nContent-Length: 2\r\n\r\nhi"},
		{"bare LF in the block", "POST /v1/a HTTP/1.1\r\nHost: x\nContent-Length: 2\r\n\r\nhi"},
		{"bare LF ending the block", "POST /v1/a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\nhi"},
		{"signed content-length", "POST /v1/a HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\nhi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := exchange(t, st.addr, tc.request+smuggled)
			if !strings.HasPrefix(out, "HTTP/1.1 400 ") {
				t.Fatalf("answer %q, want 400", out)
			}
			if n := strings.Count(out, "HTTP/1.1 "); n != 1 {
				t.Errorf("%d answers on the connection, want only the 400:\n%s", n, out)
			}
			if head, _, _ := strings.Cut(out, "\r\n\r\n"); !strings.Contains(strings.ToLower(head), "connection: close") {
				t.Errorf("the 400 does not say Connection: close:\n%s", head)
			}
			if !strings.Contains(out, `"type":"invalid_request_error"`) {
				t.Errorf("answer %q is not the error shape", out)
			}
		})
	}
	mu.Lock()
	if len(seen) != 0 {
		t.Errorf("handler saw %q, want nothing", seen)
	}
	mu.Unlock()

	// The plain forms still work, and keep the connection.
	for _, req := range []string{
		"POST /v1/a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi",
		"POST /v1/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
		"POST /v1/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
	} {
		out := exchange(t, st.addr, req+"GET /v1/b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		if n := strings.Count(out, "HTTP/1.1 200 "); n != 2 {
			t.Errorf("%q: %d answers of 200, want 2:\n%s", req, n, out)
		}
	}
}

func TestCheckFraming(t *testing.T) {
	for _, tc := range []struct {
		raw string
		ok  bool
	}{
		{"", true},
		{"Host: x\r\n\r\n", true},
		{"Host: x\r\nContent-Length: 3\r\n\r\n", true},
		{"Host: x\r\ntransfer-encoding:chunked\r\n\r\n", true},
		{"Host: x\r\nTransfer-Encoding: chunked \r\n\r\n", true},
		{"Host: x\r\nContent-Length: 3\r\ntransfer-encoding: chunked\r\n\r\n", false},
		{"Host: x\r\nTransfer-Encoding: identity\r\n\r\n", false},
		{"Host: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", false},
		{"Host: x\r\n folded\r\n\r\n", false},
		{"Host: x\r\n\tfolded\r\n\r\n", false},
		{"Host: x\n\r\n", false},
		{"Host: x\r\n\n", false},
	} {
		if got := checkFraming([]byte(tc.raw)) == nil; got != tc.ok {
			t.Errorf("checkFraming(%q) ok = %v, want %v", tc.raw, got, tc.ok)
		}
	}
}

// FuzzCheckFraming checks that checkFraming never panics and never lets
// Content-Length and Transfer-Encoding through together.
func FuzzCheckFraming(f *testing.F) {
	f.Add([]byte("Host: x\r\nContent-Length: 3\r\n\r\n"))
	f.Add([]byte("Host: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"))
	f.Add([]byte("X: a\r\n b\r\n\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if checkFraming(raw) != nil {
			return
		}
		lower := strings.ToLower(string(raw))
		if end := strings.Index(lower, "\r\n\r\n"); end >= 0 {
			lower = lower[:end+2]
		}
		if strings.Contains(lower, "\ncontent-length:") && strings.Contains(lower, "\ntransfer-encoding:") ||
			strings.HasPrefix(lower, "content-length:") && strings.Contains(lower, "\ntransfer-encoding:") ||
			strings.HasPrefix(lower, "transfer-encoding:") && strings.Contains(lower, "\ncontent-length:") {
			t.Fatalf("accepted both Content-Length and Transfer-Encoding: %q", raw)
		}
	})
}
