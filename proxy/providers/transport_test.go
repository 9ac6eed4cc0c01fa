package providers_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
	"github.com/sluicehq/sluice/proxy/providers/openai"
)

// A non-streamed call whose context ends while the upstream is still
// working returns at once, and the upstream sees its client go away
// (issue 12, defect 10: a client that leaves cancels the upstream call).
func TestChatContextCancel(t *testing.T) {
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
	ctx, cancel := context.WithCancel(context.Background())
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
