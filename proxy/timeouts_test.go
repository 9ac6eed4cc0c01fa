package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// trickle writes s one byte every gap until it is written, the connection
// fails or stop is closed.
func trickle(c net.Conn, s string, gap time.Duration, stop <-chan struct{}) {
	for i := 0; i < len(s); i++ {
		if _, err := c.Write([]byte{s[i]}); err != nil {
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(gap):
		}
	}
}

// TestSlowBody checks checklist item 11: a body sent at a few bytes per
// second is answered 408 request_timeout at the read timeout, the handler
// (and so the upstream) is never called, and the connection is closed.
func TestSlowBody(t *testing.T) {
	var calls atomic.Int32
	const timeout = 500 * time.Millisecond
	st := startServer(t, Options{Config: Config{ReadTimeout: timeout},
		Inference: func(ctx *fasthttp.RequestCtx) { calls.Add(1) }})
	c, err := net.Dial("tcp", st.addr)
	must(t, err)
	defer c.Close()
	must(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(c, "POST /v1/acme/prod/compat/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
	must(t, err)
	stop := make(chan struct{})
	defer close(stop)
	go trickle(c, `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"slow slow slow slow slow slow"}]}`, 50*time.Millisecond, stop)
	start := time.Now()
	br := bufio.NewReader(c)
	resp := &fasthttp.Response{}
	if err := resp.Read(br); err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	if resp.StatusCode() != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408; body %q", resp.StatusCode(), resp.Body())
	}
	wantError(t, resp.Body(), "invalid_request_error", "request_timeout")
	if waited := time.Since(start); waited > 5*timeout {
		t.Errorf("answered after %s; the read timeout is %s", waited, timeout)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Error("the connection stays open after the 408")
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("handler called %d times for a request that never arrived", n)
	}
}

// TestSlowloris checks checklist item 10: connections that send their
// header a byte at a time are closed at the read timeout, connections past
// the connection cap are refused at once, and a legitimate client is
// served all along (the attack stays under the cap).
func TestSlowloris(t *testing.T) {
	const (
		timeout = 600 * time.Millisecond
		limit   = 24
		slow    = 16
	)
	st := startServer(t, Options{Config: Config{ReadTimeout: timeout, Concurrency: limit}})
	stop := make(chan struct{})
	defer close(stop)
	head := "GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: slowloris-slowloris-slowloris\r\n\r\n"
	closed := make(chan time.Duration, slow)
	var wg sync.WaitGroup
	start := time.Now()
	for range slow {
		c, err := net.Dial("tcp", st.addr)
		must(t, err)
		defer c.Close()
		must(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		wg.Add(2)
		go func() { defer wg.Done(); trickle(c, head, 100*time.Millisecond, stop) }()
		go func() {
			defer wg.Done()
			_, _ = io.Copy(io.Discard, c) // until the server closes it
			closed <- time.Since(start)
		}()
	}
	// Served while the slow connections hang.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for range 5 {
		resp, err := hc.Get("http://" + st.addr + "/healthz")
		if err != nil {
			t.Fatalf("legitimate request during the attack: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("legitimate request during the attack: status %d", resp.StatusCode)
		}
	}
	// Past the cap, a connection is refused with 503 at once.
	var extra []net.Conn
	for range limit {
		c, err := net.Dial("tcp", st.addr)
		must(t, err)
		defer c.Close()
		extra = append(extra, c)
	}
	refused := 0
	for _, c := range extra {
		must(t, c.SetDeadline(time.Now().Add(300*time.Millisecond)))
		b, _ := io.ReadAll(c)
		if len(b) > 0 && string(b[:12]) == "HTTP/1.1 503" {
			refused++
			// In the error shape of every refusal, with Retry-After.
			head, body, _ := strings.Cut(string(b), "\r\n\r\n")
			if !strings.Contains(head, "Content-Type: application/json") || !strings.Contains(head, "Retry-After: 1") ||
				!strings.Contains(body, `"code":"unavailable"`) {
				t.Errorf("refusal past the connection cap:\n%s", b)
			}
		}
	}
	if refused == 0 {
		t.Errorf("%d connections past a cap of %d with %d held open: none refused with 503", limit, limit, slow)
	}
	for _, c := range extra {
		c.Close()
	}
	// Every slow connection is closed by the server at the read timeout.
	for range slow {
		select {
		case d := <-closed:
			if d > 5*timeout+time.Second {
				t.Errorf("a slow connection was closed after %s; the read timeout is %s", d, timeout)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a slow connection is still open 10 s later")
		}
	}
	wg.Wait()
	// And the server serves as before.
	resp, err := hc.Get("http://" + st.addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the attack: %v", err)
	}
	resp.Body.Close()
}
