package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/clickhouse"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/proxy"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// TestServeLogsRequestsThroughThePipeline drives inference requests through
// `sluice serve` with the embedded analytics store and finds their logs in
// GET /admin/v1/logs; /healthz reports the pipeline and /metrics its
// figures.
func TestServeLogsRequestsThroughThePipeline(t *testing.T) {
	onEachBackend(t, testServeLogs)
}

// onEachBackend runs test as subtest "embedded", then as "clickhouse"
// with the serve of the test on a fresh ClickHouse database.
func onEachBackend(t *testing.T, test func(t *testing.T)) {
	t.Run("embedded", test)
	t.Run("clickhouse", func(t *testing.T) {
		useClickHouse(t)
		test(t)
	})
}

// useClickHouse points the serve of the test at a fresh, migrated
// ClickHouse database.
func useClickHouse(t *testing.T) {
	t.Helper()
	url := testenv.ClickHouseDatabase(t)
	t.Setenv("SLUICE_CLICKHOUSE_URL", url)
	t.Setenv("SLUICE_DATA_DIR", t.TempDir())
	var out bytes.Buffer
	cmd := newRootCmd()
	cmd.SetArgs([]string{"migrate"})
	cmd.SetOut(&out)
	if err := cmd.ExecuteContext(context.Background()); err != nil || !strings.Contains(out.String(), "ClickHouse migrations applied") {
		t.Fatalf("migrate: %v: %s", err, out.String())
	}
}

// serveWithGateway starts `sluice serve` with a gateway on the mock
// provider and returns the base URL, the chat URL, a token and the mock.
func serveWithGateway(t *testing.T, ctx context.Context) (base, url, token string, mock *providertest.Server) {
	t.Helper()
	mock, mockURL, err := providertest.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mock.Close() })
	base = startServe(t, ctx)
	call(t, base, "POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, 201)
	gw := call(t, base, "POST", "/admin/v1/tenants/acme/gateways", `{"slug":"prod"}`, 201)
	gwID := gw["id"].(string)
	call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/keys",
		fmt.Sprintf(`{"provider":"openai","alias":"mock","key":"sk-mock-upstream-key-0001","base_url":%q}`, mockURL+"/v1"), 201)
	tok := call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/tokens", `{"name":"logs"}`, 201)
	url = base + "/v1/acme/prod/compat/chat/completions"
	waitServing(t, url, tok["secret"].(string))
	return base, url, tok["secret"].(string), mock
}

func testServeLogs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, url, token, mock := serveWithGateway(t, ctx)
	for range 5 {
		if s := postJSON(t, url, token, `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`); s != 200 {
			t.Fatalf("inference status %d", s)
		}
	}

	served := mock.Count()
	deadline := time.Now().Add(10 * time.Second)
	for {
		logs := call(t, base, "GET", "/admin/v1/logs?tenant=acme&limit=1000", "", 200)
		n := len(logs["data"].([]any))
		if n >= served {
			if n != served {
				t.Errorf("%d logs for %d served requests", n, served)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d logs after 10 s, want %d", n, served)
		}
		time.Sleep(50 * time.Millisecond)
	}

	h := call(t, base, "GET", "/healthz", "", 200)
	chk, _ := h["checks"].(map[string]any)["analytics"].(map[string]any)
	if chk["status"] != "ok" {
		t.Errorf("healthz analytics check %v, want ok", chk)
	}
	// The rows may be visible a moment before the write returns: wait for
	// the acknowledgement to show in the metrics.
	written := fmt.Sprintf("sluice_pipeline_written_total %d\n", served)
	var body []byte
	for deadline := time.Now().Add(10 * time.Second); ; {
		res, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("/metrics: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		if strings.Contains(string(body), written) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{"sluice_pipeline_queue_depth 0\n", "sluice_pipeline_spill_bytes 0\n",
		written, "sluice_pipeline_dropped_total 0\n", "go_goroutines "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
}

type downWriter struct{}

func (downWriter) Write(context.Context, *analytics.Batch) error {
	return errors.New("dial tcp 10.0.0.7:9000: connection refused")
}

// The analytics check is degraded (and says nothing of the error, which
// may name hosts) while the writer fails.
func TestAnalyticsCheckDegradedWhileTheWriterFails(t *testing.T) {
	p, err := analytics.NewPipeline(analytics.PipelineConfig{Writer: downWriter{}, Dir: t.TempDir(),
		FlushInterval: time.Millisecond, MaxBackoff: time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if chk := analyticsCheck(p); chk.Status != proxy.StatusOK {
		t.Errorf("check before any write: %+v, want ok", chk)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1) // one send, by the goroutine running p
	go func() { done <- p.Run(ctx) }()
	p.Enqueue(&analytics.Record{ID: "r1", TS: time.Now()})
	deadline := time.Now().Add(10 * time.Second)
	for p.Stats().WriterHealthy {
		if time.Now().After(deadline) {
			t.Fatal("the writer never failed")
		}
		time.Sleep(time.Millisecond)
	}
	chk := analyticsCheck(p)
	if chk.Status != proxy.StatusDegraded || strings.Contains(chk.Detail, "10.0.0.7") {
		t.Errorf("check while the writer fails: %+v, want degraded without the error text", chk)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if chk := analyticsCheck(p); chk.Status != proxy.StatusDegraded || !strings.Contains(chk.Detail, "spilled") {
		t.Errorf("check after a shutdown that spilled: %+v, want degraded with the spill", chk)
	}
}

// A proxy starts while ClickHouse is down, keeps serving, and reports the
// analytics check degraded while its records buffer and spill.
func TestServeStartsWhileClickHouseIsDown(t *testing.T) {
	t.Setenv("SLUICE_CLICKHOUSE_URL", "clickhouse://127.0.0.1:"+closedPort(t)+"/default?dial_timeout=200ms")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, url, token, _ := serveWithGateway(t, ctx)
	if s := postJSON(t, url, token, `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`); s != 200 {
		t.Fatalf("inference status %d while ClickHouse is down", s)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		h := call(t, base, "GET", "/healthz", "", 200)
		chk, _ := h["checks"].(map[string]any)["analytics"].(map[string]any)
		if h["status"] == "degraded" && chk["status"] == "degraded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthz %v: want degraded analytics while ClickHouse is down", h)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// closedPort returns a local port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	addr := freePort(t)
	_, port, _ := strings.Cut(addr, ":")
	return port
}

// --analytics-batch-size (or SLUICE_ANALYTICS_BATCH_SIZE) sets the
// pipeline's batch size; unset, it is the backend's default; out-of-range
// values are refused at start.
func TestAnalyticsBatchSizeFlag(t *testing.T) {
	var c config
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	c.bindFlags(fs)
	if n, err := analyticsBatchSize(&c); err != nil || n != analytics.DefaultBatchSize {
		t.Errorf("default with the embedded store: %d, %v; want %d", n, err, analytics.DefaultBatchSize)
	}
	c.ClickHouseURL = "clickhouse://127.0.0.1:9000/default"
	if n, err := analyticsBatchSize(&c); err != nil || n != clickhouse.DefaultBatchSize {
		t.Errorf("default with ClickHouse: %d, %v; want %d", n, err, clickhouse.DefaultBatchSize)
	}
	t.Setenv("SLUICE_ANALYTICS_BATCH_SIZE", "20000")
	if err := applyEnv(fs); err != nil || c.AnalyticsBatchSize != 20000 {
		t.Fatalf("from the environment: %d, %v; want 20000", c.AnalyticsBatchSize, err)
	}
	if n, err := analyticsBatchSize(&c); err != nil || n != 20000 {
		t.Errorf("set with ClickHouse: %d, %v; want 20000", n, err)
	}
	for _, n := range []int{-1, maxAnalyticsBatch + 1} {
		c.AnalyticsBatchSize, c.DataDir = n, t.TempDir()
		if p, err := newPipeline(&c, downWriter{}, slog.New(slog.DiscardHandler), nil); err == nil || p != nil {
			t.Errorf("batch size %d: accepted", n)
		}
	}
	c.AnalyticsBatchSize, c.DataDir = 20000, t.TempDir()
	if _, err := newPipeline(&c, downWriter{}, slog.New(slog.DiscardHandler), nil); err != nil {
		t.Errorf("batch size 20000: %v", err)
	}
}
