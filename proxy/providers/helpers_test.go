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

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/internal/secret"
)

// The helpers of the package's own (internal) tests: a copy of the few of
// internal/codectest they need, which they cannot import (codectest
// imports this package).

// TestKey is the provider key of the tests; no error may contain it.
const TestKey = secret.Value("sk-test-0123456789abcdefghij")

// LeakCheck verifies, when the test ends (after every cleanup registered
// later, such as closing servers), that it left no goroutine behind.
// fasthttp's own pool cleaners sleep for up to 10 s and are not ours.
func LeakCheck(t *testing.T) {
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

// Upstream is a fake provider on 127.0.0.1 that records what it receives.
type Upstream struct {
	*httptest.Server
	mu       sync.Mutex
	reqs     []captured
	NewConns atomic.Int32
}

func NewUpstream(t *testing.T, h http.HandlerFunc) *Upstream {
	t.Helper()
	u := &Upstream{}
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
			u.NewConns.Add(1)
		}
	}
	u.Start()
	t.Cleanup(u.Close)
	return u
}

func (u *Upstream) Requests() []captured {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]captured(nil), u.reqs...)
}

// SSEHandler answers with the given events, flushing after each, and then
// returns (closing the body).
func SSEHandler(events ...string) http.HandlerFunc {
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

// FakeResolver resolves names from a table.
type FakeResolver map[string][]netip.Addr

func (f FakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}
