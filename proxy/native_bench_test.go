package proxy

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/sluicehq/sluice/proxy/breaker"
	"github.com/sluicehq/sluice/proxy/providers/registry"
)

// BenchmarkInferenceResponses is BenchmarkInferenceChat on the native
// Responses door: the same pipeline, the body passed through to the
// mock's /responses.
func BenchmarkInferenceResponses(b *testing.B) {
	h := newHarness(b, harnessConfig{})
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
	c := &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	benchRequests(b, c, "http://sluice"+responsesPath, "Bearer "+h.token,
		`{"model":"gpt-4o-mini","instructions":"You are a helpful assistant.","input":[{"role":"user","content":"Say hello to the benchmark, please."}],"max_output_tokens":64}`)
}
