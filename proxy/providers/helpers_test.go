package providers

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
)

// testKey is the provider key of the tests; no error may contain it.
const testKey = secret.Value("sk-test-0123456789abcdefghij")

// leakCheck verifies, when the test ends (after every cleanup registered
// later, such as closing servers), that it left no goroutine behind.
// fasthttp's own pool cleaners sleep for up to 10 s and are not ours.
func leakCheck(t *testing.T) {
	t.Helper()
	opts := []goleak.Option{
		goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*Client).mCleaner"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"),
	}
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

// captured is one request an upstream received.
type captured struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// upstream is a fake provider on 127.0.0.1 that records what it receives.
type upstream struct {
	*httptest.Server
	mu       sync.Mutex
	reqs     []captured
	newConns atomic.Int32
}

func newUpstream(t *testing.T, h http.HandlerFunc) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, captured{r.Method, r.URL.Path, r.Header.Clone(), body})
		u.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
	}))
	u.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			u.newConns.Add(1)
		}
	}
	u.Start()
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) requests() []captured {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]captured(nil), u.reqs...)
}

// newTestClient returns a client that may reach 127.0.0.1, with short
// timeouts unless cfg says otherwise.
func newTestClient(t *testing.T, cfg ClientConfig) *Client {
	t.Helper()
	cfg.AllowPrivate = true
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 2 * time.Second
	}
	c := NewClient(cfg)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// chatRequest is a chat request against base.
func chatRequest(base string, body string) *Request {
	return &Request{
		Op:       llm.OpChat,
		Model:    "gpt-4o-mini",
		Body:     []byte(body),
		Cred:     Credential{KeyID: "pk_1", Key: testKey, BaseURL: base},
		Deadline: time.Now().Add(10 * time.Second),
	}
}

// sseHandler answers with the given events, flushing after each, and then
// returns (closing the body).
func sseHandler(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, e := range events {
			if _, err := io.WriteString(w, e); err != nil {
				return
			}
			_ = rc.Flush()
		}
	}
}

// fakeResolver resolves names from a table.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// readChunks reads a stream to its end.
func readChunks(s Stream) ([]string, error) {
	var out []string
	for {
		c, err := s.Next()
		if err != nil {
			return out, err
		}
		out = append(out, string(c))
	}
}
