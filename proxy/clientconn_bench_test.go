package proxy

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/proxy/breaker"
	"github.com/sluicehq/sluice/proxy/providers/registry"
)

// BenchmarkInferenceChatLoopback is BenchmarkInferenceChat over a TCP
// loopback listener instead of an in-memory one: the client connection
// is then one the gateway watches while the request waits for its
// upstream (proxy/clientconn.go), so this is where the watch's cost shows.
func BenchmarkInferenceChatLoopback(b *testing.B) {
	h := newHarness(b, harnessConfig{})
	inf := NewInference(InferenceConfig{
		Snapshots: &h.snaps, Providers: registry.New(h.client), Breakers: breaker.NewSet(time.Now),
		Sink: discardSink{}, Logger: slog.New(slog.DiscardHandler),
	})
	srv, err := New(Options{Inference: inf.Handle, EndStreams: inf.EndStreams, Logger: slog.New(slog.DiscardHandler)})
	must(b, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	b.Cleanup(func() { cancel(); <-done })
	benchRequests(b, &fasthttp.Client{}, "http://"+ln.Addr().String()+chatPath, "Bearer "+h.token, benchBody)
}
