package proxy

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDrainFailsReadinessFirst: a rolling restart's drain. Once shutdown
// begins, /healthz answers 503 with the shutdown check while the listener
// still accepts and serves new requests (with Connection: close); a
// stream in flight runs to its normal end; after the drain delay new
// connections are refused and Serve returns nil.
func TestDrainFailsReadinessFirst(t *testing.T) {
	t.Parallel()
	const delay = 2 * time.Second
	h := newHarness(t, harnessConfig{drainDelay: delay, shutdownGrace: 10 * time.Second})
	up := h.heldUpstream(h.gw.ID)
	// One connection per request: each probe sees the listener as it is now.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	health := func() (int, Health, error) {
		resp, err := fresh.Get(h.url("/healthz"))
		if err != nil {
			return 0, Health{}, err
		}
		defer resp.Body.Close()
		var hb Health
		if err := json.NewDecoder(resp.Body).Decode(&hb); err != nil {
			return resp.StatusCode, hb, err
		}
		return resp.StatusCode, hb, nil
	}
	if code, hb, err := health(); err != nil || code != 200 || hb.Checks["shutdown"].Status != "" {
		t.Fatalf("before shutdown: /healthz %d %+v (%v), want 200 without a shutdown check", code, hb, err)
	}

	stream, b := h.streamAs(t, h.token, chatPath, heldModel)
	wantStatus(t, stream, b, 200)
	defer stream.Body.Close()

	start := time.Now()
	served := make(chan error, 1)
	go func() { served <- h.shutdown(30 * time.Second) }()

	var code int
	var hb Health
	if !waitFor(delay/2, func() bool {
		c, got, err := health()
		code, hb = c, got
		return err == nil && c == http.StatusServiceUnavailable
	}) {
		t.Fatalf("/healthz answered %d %+v during the drain, want 503", code, hb)
	}
	if hb.Status != StatusUnavailable || hb.Checks["shutdown"].Status != StatusUnavailable {
		t.Errorf("/healthz during the drain = %+v, want status unavailable and checks.shutdown unavailable", hb)
	}

	// The listener is still open: a new request is served in full.
	req, err := http.NewRequest("POST", h.url(chatPath), strings.NewReader(chatBody("gpt-4o-mini", "")))
	must(t, err)
	req.Header = bearer(h.token)
	resp, err := fresh.Do(req)
	if err != nil {
		t.Fatalf("a new request during the drain: %v, want it served", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantStatus(t, resp, body, 200)
	if since := time.Since(start); since >= delay {
		t.Fatalf("the drain checks took %s, longer than the %s delay: the test proves nothing", since, delay)
	}
	if !resp.Close {
		t.Error("a response during the drain kept its connection open, want Connection: close")
	}

	// The stream in flight ends normally once its upstream finishes.
	up.releaseAll()
	sr := newSSEReader(stream.Body)
	var last string
	for {
		ev, err := sr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the stream in flight: %v", err)
		}
		last = ev.data
	}
	if last != "[DONE]" {
		t.Errorf("the stream in flight ended with %q, want [DONE]", last)
	}

	if !waitFor(delay+5*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", h.addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err != nil
	}) {
		t.Error("new connections were still accepted after the drain delay")
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	if d := time.Since(start); d < delay {
		t.Errorf("Serve returned %s after shutdown began, before the %s drain delay", d, delay)
	}
}
