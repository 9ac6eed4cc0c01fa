package proxy

import (
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestShutdownWithOpenStreams (checklist 59, with TestShutdownEndsStreams
// for plain requests finishing, and cmd/sluice's analytics fault test for
// the exit code and the log buffers): shutdown with 200 streams open.
// New connections are refused at once, while the streams run on; when
// the grace period is over every stream ends with a shutting_down error
// event and no [DONE], every one is logged 503 partial, Serve returns
// nil, and every in-flight counter is back at 0.
func TestShutdownWithOpenStreams(t *testing.T) {
	t.Parallel()
	const streams = 200
	h := newHarness(t, harnessConfig{shutdownGrace: time.Second,
		// 200 streams to one upstream: above the default share of one
		// tenant (128), which is not what this test is about.
		inference: func(c *InferenceConfig) { c.UpstreamShare = streams }})
	h.heldUpstream(h.gw.ID)
	var open []*http.Response
	for range streams {
		resp, b := h.streamAs(t, h.token, chatPath, heldModel)
		wantStatus(t, resp, b, 200)
		open = append(open, resp)
	}
	if _, sum := h.counters.Busy(); sum != streams*4 {
		t.Fatalf("%d slots held by %d streams, want %d (tenant, gateway, token, upstream)", sum, streams, streams*4)
	}

	type ending struct {
		last, err string
		done      bool
	}
	endings := make([]ending, streams)
	var wg sync.WaitGroup
	for i, resp := range open {
		wg.Go(func() {
			defer resp.Body.Close()
			sr := newSSEReader(resp.Body)
			for {
				ev, err := sr.next()
				if err == io.EOF {
					return
				}
				if err != nil {
					endings[i].err = err.Error()
					return
				}
				endings[i].last = ev.data
				endings[i].done = endings[i].done || ev.data == "[DONE]"
			}
		})
	}
	start := time.Now()
	served := make(chan error, 1)
	go func() { served <- h.shutdown(10 * time.Second) }()
	if !waitFor(900*time.Millisecond, func() bool {
		c, err := net.DialTimeout("tcp", h.addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err != nil
	}) {
		t.Error("new connections were still accepted during the grace period")
	}
	wg.Wait()
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("the streams ended %s after shutdown began, before the 1 s grace", d)
	}
	for i, e := range endings {
		if e.err != "" || e.done || chunkKind(e.last) != "error" {
			t.Fatalf("stream %d ended with %q (err %q, [DONE] %v), want a shutting_down error event", i, e.last, e.err, e.done)
		}
		if _, code := streamError(t, e.last); code != "shutting_down" {
			t.Fatalf("stream %d: error code %q, want shutting_down", i, code)
		}
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	h.waitIdle(t)
	n := 0
	for _, r := range h.sink.Records() {
		if r.Status == 503 && r.ErrorCode == "shutting_down" && hasFlag(r.Flags, "partial") {
			n++
		}
	}
	if n != streams {
		t.Errorf("%d streams logged 503 shutting_down partial, want %d", n, streams)
	}
}
