package proxy

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/breaker"
	"github.com/sluicehq/sluice/proxy/providers/registry"
)

// The gateway's cost per request is BenchmarkInferenceChat against
// BenchmarkDirectMock: the same chat request through the proxy, and
// straight to the mock provider the proxy forwards to.

// discardSink drops records: MemorySink's bounded buffer would dominate a
// long benchmark.
type discardSink struct{}

func (discardSink) Enqueue(*analytics.Record) {}

const benchBody = `{"model":"openai/gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},` +
	`{"role":"user","content":"Summarise the plot of Hamlet in two sentences, please."}],"temperature":0.2,"max_tokens":128}`

// benchRequests posts body to url with auth through c, from several
// goroutines so that the CPUs stay busy: ns/op is then the CPU cost of a
// request rather than the wake-up latency of an idle loopback.
func benchRequests(b *testing.B, c *fasthttp.Client, url, auth, body string) {
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI(url)
		req.Header.SetMethod("POST")
		req.Header.SetContentType("application/json")
		req.Header.Set("Authorization", auth)
		req.SetBodyString(body)
		for pb.Next() {
			if err := c.Do(req, resp); err != nil {
				b.Error(err)
				return
			}
			if resp.StatusCode() != 200 {
				b.Errorf("status %d: %s", resp.StatusCode(), resp.Body())
				return
			}
		}
	})
}

// cannedUpstream serves, for every request, the answer the mock provider
// gave to one direct chat request: a minimal fasthttp handler, so that an
// in-process benchmark counts the gateway's allocations and not the mock's
// JSON decode of each request. It returns the base URL to give a key.
func cannedUpstream(b *testing.B, h *harness) string {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(h.mockURL + "/v1/chat/completions")
	req.Header.SetMethod("POST")
	req.Header.SetContentType("application/json")
	req.Header.Set("Authorization", "Bearer "+mainKey)
	req.SetBodyString(strings.Replace(benchBody, "openai/gpt-4o-mini", "gpt-4o-mini", 1))
	must(b, fasthttp.Do(req, resp))
	if resp.StatusCode() != 200 {
		b.Fatalf("mock: status %d: %s", resp.StatusCode(), resp.Body())
	}
	answer := append([]byte(nil), resp.Body()...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(b, err)
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.SetBody(answer)
	}}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Shutdown() })
	return "http://" + ln.Addr().String() + "/v1"
}

// benchServer serves a harness's gateway in process, records dropped,
// and returns the harness and a client of it. With canned, the gateway's
// openai key points at cannedUpstream instead of the mock provider.
func benchServer(b *testing.B, canned bool) (*harness, *fasthttp.Client) {
	h := newHarness(b, harnessConfig{})
	if canned {
		up := cannedUpstream(b, h)
		must(b, h.svc.DeleteKey(h.ctx, h.root, h.gw.ID, "openai", "main"))
		h.addKeyAt(h.gw.ID, "openai", "main", mainKey, up)
		h.rebuild()
	}
	inf := NewInference(InferenceConfig{
		Snapshots: &h.snaps, Providers: registry.New(h.client), Breakers: breaker.NewSet(time.Now),
		Sink: discardSink{}, Logger: slog.New(slog.DiscardHandler),
	})
	srv, err := New(Options{Inference: inf.Handle, EndStreams: inf.EndStreams, Logger: slog.New(slog.DiscardHandler)})
	must(b, err)
	ln := fasthttputil.NewInmemoryListener()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	b.Cleanup(func() { cancel(); <-done })
	return h, &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
}

// BenchmarkInferenceChat's upstream is a canned answer, so its allocations
// are the gateway's own (and the benchmark client's, a pooled request).
func BenchmarkInferenceChat(b *testing.B) {
	h, c := benchServer(b, true)
	benchRequests(b, c, "http://sluice"+chatPath, "Bearer "+h.token, benchBody)
}

// BenchmarkInferenceChatMock is the same through the in-process mock
// provider, whose decode of each request counts too: the figure issue 17
// started from.
func BenchmarkInferenceChatMock(b *testing.B) {
	h, c := benchServer(b, false)
	benchRequests(b, c, "http://sluice"+chatPath, "Bearer "+h.token, benchBody)
}

func BenchmarkDirectMock(b *testing.B) {
	h := newHarness(b, harnessConfig{})
	c := &fasthttp.Client{}
	benchRequests(b, c, h.mockURL+"/v1/chat/completions", "Bearer "+mainKey,
		strings.Replace(benchBody, "openai/gpt-4o-mini", "gpt-4o-mini", 1))
}

func BenchmarkParseBody(b *testing.B) {
	body := []byte(benchBody)
	var parsers fastjson.ParserPool
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		p := parsers.Get()
		if _, e := parseBody(p, body, llm.OpChat); e != nil {
			b.Fatal(e)
		}
		parsers.Put(p)
	}
}

func BenchmarkCredential(b *testing.B) {
	var hdr fasthttp.RequestHeader
	hdr.Set("Authorization", "Bearer sk-sl-0123456789012345678901234567890123456789")
	hdr.SetContentType("application/json")
	hdr.Set("User-Agent", "OpenAI/Python 1.54.0")
	b.ReportAllocs()
	for b.Loop() {
		if tok, e := credential(&hdr); e != nil || len(tok) != 46 {
			b.Fatal(e)
		}
	}
}
