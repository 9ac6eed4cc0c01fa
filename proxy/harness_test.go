package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/canary"
	"github.com/sluicehq/sluice/internal/openaischema"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/proxy/breaker"
	"github.com/sluicehq/sluice/proxy/lastuse"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
	"github.com/sluicehq/sluice/proxy/providers/registry"
	"github.com/sluicehq/sluice/proxy/snapshot"
	"github.com/sluicehq/sluice/proxy/tokenize"
)

// The harness runs the inference proxy the way `sluice serve` wires it: a
// real store configured through the admin service, a snapshot built from
// it, the provider registry on the SSRF-safe client, breakers, a memory
// sink, and proxy.Server on a loopback listener in front of a mock
// provider. Tests drive it with net/http, as a client would.

const (
	testTenant  = "acme"
	testGateway = "prod"
)

// mainKey is the upstream key of the "main" openai key the harness adds;
// the mock records it in Authorization. It is a canary: no log line of a
// test may hold it.
var mainKey = canary.New("sk-upstream-main-")

// snapSource is the proxy's SnapshotSource in tests: the latest snapshot
// the test built, swapped atomically like snapshot.Holder does.
type snapSource struct {
	p atomic.Pointer[snapshot.Snapshot]
}

func (s *snapSource) Load() *snapshot.Snapshot { return s.p.Load() }

// harnessConfig varies a harness.
type harnessConfig struct {
	// gateway are the settings the gateway is created with.
	gateway admin.GatewaySettings
	// shutdownGrace is the server's grace period (default 5 s).
	shutdownGrace time.Duration
	// drainDelay is the server's Config.DrainDelay (default 0).
	drainDelay time.Duration
	// now is the proxy's clock (default time.Now).
	now func() time.Time
	// ruleBudget is the content rules' matching budget per request
	// (default rules.DefaultBudget).
	ruleBudget time.Duration
	// client configures the upstream client (AllowPrivate is always set).
	client providers.ClientConfig
	// inference, when set, adjusts the inference handler's configuration.
	inference func(*InferenceConfig)
	// lastUse gives the proxy token-use marks on the harness's store
	// (h.lastUse), flushed only when the test calls Flush.
	lastUse bool
}

// harness is one proxy in front of one mock provider.
type harness struct {
	tb      testing.TB
	ctx     context.Context
	st      *store.Store
	box     *secret.Box // seals the provider keys; the snapshot opens them
	svc     *admin.Service
	root    *auth.Principal // the bootstrap Administrator
	snaps   snapSource
	sink    *MemorySink
	inf     *Inference
	client  *providers.Client
	mock    *providertest.Server
	mockURL string
	gw      *store.Gateway
	token   string // a gateway token of gw
	tokenID string
	addr    string // the proxy's host:port
	hc      *http.Client
	stop    context.CancelFunc
	served  chan error // Serve's result, sent once
	// stopOnce guards the one read of served; serveErr keeps its result.
	stopOnce sync.Once
	serveErr error

	// counters keeps the in-flight counters across rebuilds, as the
	// Holder does.
	counters *snapshot.Counters
	// lastUse are the proxy's token-use marks (harnessConfig.lastUse).
	lastUse *lastuse.Marks
}

// newHarness configures tenant acme, gateway prod (with cfg.gateway), an
// openai key "main" on the mock and a gateway token, and starts serving.
// Everything stops when the test ends.
func newHarness(tb testing.TB, cfg harnessConfig) *harness {
	tb.Helper()
	ctx := context.Background()
	discard := canary.Logger(tb) // checked for canary secrets, then discarded
	st := testenv.Store(tb, testenv.SQLite)
	box, err := secret.NewBox(make([]byte, 32))
	must(tb, err)
	svc, err := admin.New(admin.Config{Store: st, Box: box, AllowPrivateBaseURLs: true, Logger: discard})
	must(tb, err)
	_, err = svc.SeedPrices(ctx)
	must(tb, err)
	rootSecret, _, err := svc.Bootstrap(ctx, "")
	must(tb, err)
	canary.Register(rootSecret)
	root, err := svc.Authenticate(ctx, rootSecret)
	must(tb, err)
	h := &harness{tb: tb, ctx: ctx, st: st, box: box, svc: svc, root: root, sink: &MemorySink{}, counters: snapshot.NewCounters()}

	mock, mockURL, err := providertest.Start(ctx, "127.0.0.1:0")
	must(tb, err)
	tb.Cleanup(func() { _ = mock.Close() })
	h.mock, h.mockURL = mock, mockURL

	_, err = svc.CreateTenant(ctx, root, admin.TenantInput{ID: testTenant, Name: "Acme"})
	must(tb, err)
	h.gw, err = svc.CreateGateway(ctx, root, testTenant, admin.GatewayInput{Slug: testGateway, GatewaySettings: cfg.gateway})
	must(tb, err)
	h.addKey(h.gw.ID, "openai", "main", mainKey)
	tok, err := svc.CreateGatewayToken(ctx, root, h.gw.ID, admin.TokenInput{Name: "test"})
	must(tb, err)
	h.token, h.tokenID = tok.Secret, tok.ID
	canary.Register(h.token)
	h.rebuild()

	ccfg := cfg.client
	ccfg.AllowPrivate = true
	h.client = providers.NewClient(ccfg)
	icfg := InferenceConfig{
		Tokenizer:  testTokenizer,
		Snapshots:  &h.snaps,
		Providers:  registry.New(h.client),
		Breakers:   breaker.NewSet(time.Now),
		Sink:       h.sink,
		Logger:     discard,
		Now:        cfg.now,
		RuleBudget: cfg.ruleBudget,
	}
	if cfg.lastUse {
		h.lastUse = lastuse.New(st, discard, time.Hour)
		icfg.LastUse = h.lastUse
	}
	if cfg.inference != nil {
		cfg.inference(&icfg)
	}
	h.inf = NewInference(icfg)
	grace := cfg.shutdownGrace
	if grace == 0 {
		grace = 5 * time.Second
	}
	srv, err := New(Options{
		Config:     Config{Listen: "127.0.0.1:0", ShutdownGrace: grace, DrainDelay: cfg.drainDelay},
		Inference:  h.inf.Handle,
		EndStreams: h.inf.EndStreams,
		Metrics:    h.inf.WriteMetrics,
		Logger:     discard,
	})
	must(tb, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(tb, err)
	h.addr = ln.Addr().String()
	sctx, stop := context.WithCancel(ctx)
	h.stop, h.served = stop, make(chan error, 1)
	go func() { h.served <- srv.Serve(sctx, ln) }()
	h.hc = &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	tb.Cleanup(func() {
		if err := h.shutdown(10 * time.Second); err != nil && err != errServeTimeout {
			tb.Errorf("Serve: %v", err)
		}
		h.hc.CloseIdleConnections()
		h.client.CloseIdleConnections()
	})
	return h
}

// testTokenizer is the tokenizer of every harness: its encodings load
// once per test binary (seconds under -race), not once per test, as one
// serving process loads them once.
var testTokenizer = tokenize.New()

var errServeTimeout = errors.New("Serve did not return in time")

// shutdown cancels the server's context and returns Serve's result, or
// errServeTimeout when it does not return within d. It may be called more
// than once.
func (h *harness) shutdown(d time.Duration) error {
	h.stop()
	h.stopOnce.Do(func() {
		select {
		case h.serveErr = <-h.served:
		case <-time.After(d):
			h.serveErr = errServeTimeout
			h.tb.Error("Serve did not return after cancel")
		}
	})
	return h.serveErr
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// rebuild builds a new snapshot from the store, as the Holder does after
// a configuration change.
func (h *harness) rebuild() {
	h.tb.Helper()
	s, err := snapshot.BuildWith(h.ctx, h.st, h.box, time.Now(), h.counters)
	must(h.tb, err)
	h.snaps.p.Store(s)
}

// addKey adds a provider key pointing at the mock to a gateway; the
// caller rebuilds.
func (h *harness) addKey(gatewayID, provider, alias, key string, models ...string) {
	h.addKeyAt(gatewayID, provider, alias, key, h.mockURL+"/v1", models...)
}

func (h *harness) addKeyAt(gatewayID, provider, alias, key, baseURL string, models ...string) {
	h.tb.Helper()
	_, err := h.svc.CreateKey(h.ctx, h.root, gatewayID, admin.KeyInput{Provider: provider, Alias: alias, Key: key,
		BaseURL: baseURL, Models: models})
	must(h.tb, err)
}

// update changes the gateway's settings and rebuilds the snapshot.
func (h *harness) update(in admin.GatewaySettings) {
	h.tb.Helper()
	gw, err := h.svc.UpdateGateway(h.ctx, h.root, h.gw.ID, in)
	must(h.tb, err)
	h.gw = gw
	h.rebuild()
}

// url is the proxy URL of path.
func (h *harness) url(path string) string { return "http://" + h.addr + path }

// gwPath is the path of op ("compat/chat/completions", "openai/embeddings",
// …) on the harness gateway.
func gwPath(op string) string { return "/v1/" + testTenant + "/" + testGateway + "/" + op }

const chatPath = "/v1/" + testTenant + "/" + testGateway + "/compat/chat/completions"

// bearer is the header set of an authenticated JSON request.
func bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}, "Content-Type": {"application/json"}}
}

// chatBody is a chat request for model with extra fields appended
// (",\"stream\":true").
func chatBody(model, extra string) string {
	return `{"model":` + quote(model) + `,"messages":[{"role":"user","content":"say hello to the test"}]` + extra + `}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// do sends a request to the proxy and reads the whole answer.
func (h *harness) do(method, path string, hdr http.Header, body string) (*http.Response, []byte) {
	h.tb.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.url(path), r)
	must(h.tb, err)
	for k, vv := range hdr {
		req.Header[k] = vv
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		h.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.tb.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp, b
}

// chat posts body to the compat chat path with the gateway token and hdr.
func (h *harness) chat(body string, hdr ...string) (*http.Response, []byte) {
	h.tb.Helper()
	hd := bearer(h.token)
	for i := 0; i+1 < len(hdr); i += 2 {
		hd.Set(hdr[i], hdr[i+1])
	}
	return h.do("POST", chatPath, hd, body)
}

// record returns the record with the given id, waiting for it: a stream's
// record is handed over when the stream ends.
func (h *harness) record(id string) analytics.Record {
	h.tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, r := range h.sink.Records() {
			if r.ID == id {
				return r
			}
		}
		if time.Now().After(deadline) {
			h.tb.Fatalf("no record with id %q among %d records", id, len(h.sink.Records()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wantStatus fails the test unless resp has status want.
func wantStatus(tb testing.TB, resp *http.Response, body []byte, want int) {
	tb.Helper()
	if resp.StatusCode != want {
		tb.Fatalf("status %d, want %d; body %s", resp.StatusCode, want, body)
	}
}

// wantAPIError checks an error answer: the status, the request id header
// and a body that is exactly {"error":{"type","code","message","param"}}.
// param "" means null.
func wantAPIError(tb testing.TB, resp *http.Response, body []byte, status int, typ, code, param string) {
	tb.Helper()
	wantStatus(tb, resp, body, status)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		tb.Errorf("Content-Type %q, want application/json", ct)
	}
	if id := resp.Header.Get(RequestIDHeader); len(id) != 36 {
		tb.Errorf("%s = %q, want a request id", RequestIDHeader, id)
	}
	var shape map[string]map[string]json.RawMessage
	if err := json.Unmarshal(body, &shape); err != nil || len(shape) != 1 || shape["error"] == nil {
		tb.Fatalf("body %s is not {\"error\":{…}}: %v", body, err)
	}
	openaischema.Check(tb, openaischema.Error, "the error body", body)
	e := shape["error"]
	var keys []string
	for k := range e {
		keys = append(keys, k)
	}
	if len(e) != 4 || e["type"] == nil || e["code"] == nil || e["message"] == nil || e["param"] == nil {
		tb.Errorf("error keys %v, want exactly type, code, message, param", keys)
	}
	wantParam := "null"
	if param != "" {
		wantParam = quote(param)
	}
	got := []string{string(e["type"]), string(e["code"]), string(e["param"])}
	want := []string{quote(typ), quote(code), wantParam}
	if diff := cmp.Diff(want, got); diff != "" {
		tb.Errorf("error %s: type, code, param (-want +got):\n%s", body, diff)
	}
	if string(e["message"]) == `""` {
		tb.Errorf("error %s has an empty message", body)
	}
}

// errCode returns the code of an error body, "" if it has none.
func errCode(body []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error.Code
}

// waitFor polls cond until it holds or d has passed.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
