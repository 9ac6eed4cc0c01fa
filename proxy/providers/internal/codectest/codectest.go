// Package codectest holds what the tests of the codec packages share: a
// recording fake upstream, a client that may reach it, golden files with
// an -update flag, the mock provider and leak checks.
package codectest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

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

// NewTestClient returns a client that may reach 127.0.0.1, with short
// timeouts unless cfg says otherwise.
func NewTestClient(t *testing.T, cfg providers.ClientConfig) *providers.Client {
	t.Helper()
	cfg.AllowPrivate = true
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 2 * time.Second
	}
	c := providers.NewClient(cfg)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// ChatRequest is a chat request against base.
func ChatRequest(base string, body string) *providers.Request {
	return &providers.Request{
		Op:       llm.OpChat,
		Model:    "gpt-4o-mini",
		Body:     []byte(body),
		Cred:     providers.Credential{KeyID: "pk_1", Key: TestKey, BaseURL: base},
		Deadline: time.Now().Add(10 * time.Second),
	}
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

// ReadChunks reads a stream to its end.
func ReadChunks(s providers.Stream) ([]string, error) {
	var out []string
	for {
		c, err := s.Next()
		if err != nil {
			return out, err
		}
		out = append(out, string(c))
	}
}

// RelayAll reads a native stream to its end: the frames back to back, the
// usage and the error that ended it (nil for a clean end).
func RelayAll(st providers.Stream) ([]byte, llm.Usage, error) {
	defer st.Close()
	var out []byte
	for {
		frame, err := st.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return out, st.Usage(), err
		}
		out = append(out, frame...)
	}
}

var Update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Golden compares got with the file at path, or rewrites it with -update.
func Golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(bytes.TrimSuffix(want, []byte("\n"))), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func MustProvider(t *testing.T, id string) catalog.Provider {
	p, ok := catalog.LookupProvider(id)
	if !ok {
		t.Fatalf("%s not in the catalog", id)
	}
	return p
}

func CheckFuzzed(t *testing.T, u llm.Usage, err error) {
	t.Helper()
	if err != nil {
		e := providers.AsError(err)
		if e == nil || e.Status != 502 || len(e.Message) > providers.MaxMessage || strings.Contains(e.Message, "0123456789") {
			t.Fatalf("bad error %#v", err)
		}
		return
	}
	if u.PromptTokens < 0 || u.CompletionTokens < 0 || u.TotalTokens < 0 || u.CachedTokens < 0 {
		t.Fatalf("negative usage %+v", u)
	}
}

const BenchAnswer = `{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion","created":1741569952,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant","content":"Prince Hamlet seeks revenge on his uncle Claudius, who murdered Hamlet's father to seize the throne and marry his mother Gertrude. His feigned madness and hesitation lead to a tragic chain of deaths, including his own.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":41,"completion_tokens":48,"total_tokens":89,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_06737a9306"}`

// MockLeakCheck is leakCheck for tests against the mock provider,
// whose fasthttp server leaves its worker pool's cleaner asleep for a
// while after shutdown and starts a process-wide clock for the Date
// header; those goroutines are fasthttp's, not ours.
func MockLeakCheck(t *testing.T) {
	t.Helper()
	opts := []goleak.Option{
		goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*Client).mCleaner"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
	}
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

// IndentJSON makes golden files readable; it fails the test on invalid
// JSON.
func IndentJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("invalid JSON %q: %v", b, err)
	}
	return out.Bytes()
}

// StartMock starts the mock provider for one test.
func StartMock(t *testing.T) *providertest.Server {
	t.Helper()
	m, _, err := providertest.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}
