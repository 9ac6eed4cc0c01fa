package providers_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
	"github.com/sluicehq/sluice/proxy/providers/openai"
)

// A non-streamed call whose context ends while the upstream is still
// working returns at once, and the upstream sees its client go away
// (issue 12, defect 10: a client that leaves cancels the upstream call).
// So with a context that closes the call's connection itself (the
// proxy's pooled one, issue 17), which has no Done channel here.
func TestChatContextCancel(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, func())
	}{
		{"context", func() (context.Context, func()) { return context.WithCancel(context.Background()) }},
		{"conn watcher", func() (context.Context, func()) { w := &closingCtx{Context: context.Background()}; return w, w.end }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			codectest.LeakCheck(t)
			gone := make(chan struct{})
			u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done(): // net/http notices the closed connection
					close(gone)
				case <-time.After(10 * time.Second):
					_, _ = io.WriteString(w, codectest.BenchAnswer)
				}
			})
			o := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{}))
			ctx, cancel := tc.ctx()
			defer cancel()
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			_, err := o.Chat(ctx, codectest.ChatRequest(u.URL, `{}`))
			if !errors.Is(err, context.Canceled) || providers.AsError(err) == nil {
				t.Errorf("got %v, want *Error wrapping context.Canceled", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Chat returned %v after the call began, want soon after the cancellation at 100 ms", d)
			}
			select {
			case <-gone:
			case <-time.After(5 * time.Second):
				t.Fatal("the upstream did not see the cancellation")
			}
		})
	}
}

// closingCtx is a context that closes the call's connection itself when
// it ends (the transport's connWatcher), as the proxy's pooled context of
// upstream calls does. Its Done is nil: the transport must not need it.
type closingCtx struct {
	context.Context
	mu    sync.Mutex
	c     io.Closer
	ended bool
}

func (x *closingCtx) CloseOnEnd(c io.Closer) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ended {
		_ = c.Close()
		return
	}
	x.c = c
}

func (x *closingCtx) StopClose() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.c = nil
	return !x.ended
}

func (x *closingCtx) Err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ended {
		return context.Canceled
	}
	return nil
}

func (x *closingCtx) end() {
	x.mu.Lock()
	c := x.c
	x.c, x.ended = nil, true
	x.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// Cancellable calls still reuse their connections, and a cancelled one is
// not given back to the pool.
func TestChatConnectionReuse(t *testing.T) {
	codectest.LeakCheck(t)
	slow := make(chan struct{})
	u := codectest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Slow") != "" {
			select {
			case <-r.Context().Done():
			case <-slow:
			}
			return
		}
		_, _ = io.WriteString(w, codectest.BenchAnswer)
	})
	defer close(slow)
	o := openai.New("openai", codectest.NewTestClient(t, providers.ClientConfig{}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 3 {
		if _, err := o.Chat(ctx, codectest.ChatRequest(u.URL, `{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if n := u.NewConns.Load(); n != 1 {
		t.Errorf("3 calls used %d connections, want 1", n)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, ccancel)
	req := codectest.ChatRequest(u.URL, `{}`)
	req.Header = http.Header{"X-Slow": {"1"}}
	if _, err := o.Chat(cctx, req); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	if _, err := o.Chat(ctx, codectest.ChatRequest(u.URL, `{}`)); err != nil {
		t.Fatal(err)
	}
	if n := u.NewConns.Load(); n != 2 {
		t.Errorf("after a cancelled call: %d connections, want 2", n)
	}
}
