package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/bench"
	"github.com/sluicehq/sluice/internal/testenv"
)

// benchGatewayEnv makes this test binary, started by TestBench, run
// `sluice serve` in TestBenchGateway instead of testing.
const benchGatewayEnv = "SLUICE_BENCH_TEST_GATEWAY=1"

// TestBench runs `sluice bench` briefly, with this test binary as the
// gateway (TestBenchGateway), and checks that every section is printed
// and every figure that must be positive is. It asserts no speed: the
// figures of so short a run mean nothing.
func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmark for about 7 s")
	}
	var r bench.Report
	t.Logf("progress:\n%s", runTestBench(t, false, &r))
	positive := map[string]float64{
		"direct requests/s":               r.Throughput.Direct.PerSecond,
		"gateway requests/s":              r.Throughput.Gateway.PerSecond,
		"gateway CPU per request":         r.Throughput.CPUPerRequestMS,
		"gateway CPU seconds":             r.Gateway.CPUS,
		"peak RSS":                        float64(r.Gateway.PeakRSSBytes),
		"direct latency p50":              r.Latency.Direct.P50MS,
		"gateway latency p50":             r.Latency.Gateway.P50MS,
		"gateway latency p99":             r.Latency.Gateway.P99MS,
		"direct first chunk p50":          r.Streaming.Direct.P50MS,
		"gateway first chunk p50":         r.Streaming.Gateway.P50MS,
		"gateway first chunk p99":         r.Streaming.Gateway.P99MS,
		"fixed-rate requests direct":      float64(r.Latency.Direct.Requests),
		"fixed-rate requests via gateway": float64(r.Latency.Gateway.Requests),
		"streamed requests via gateway":   float64(r.Streaming.Gateway.Requests),
		"phases' duration":                r.Settings.DurationS,
		"other processes measured over":   r.OtherProcesses.Seconds,
	}
	for name, v := range positive {
		if !(v > 0) {
			t.Errorf("%s = %v, want > 0", name, v)
		}
	}
	if got := len(r.Targets); got != 13 {
		t.Errorf("%d targets, want 13 (4, and 3 for each of the 3 other doors)", got)
	}
	var doors []string
	for _, d := range r.Doors {
		doors = append(doors, d.Name)
		for name, v := range map[string]float64{
			"requests/s": d.Throughput.PerSecond, "CPU per request": d.CPUPerRequestMS,
			"latency p50": d.Latency.P50MS, "first streamed event p50": d.Streaming.P50MS,
			"fixed-rate requests": float64(d.Latency.Requests), "streamed requests": float64(d.Streaming.Requests),
		} {
			if !(v > 0) {
				t.Errorf("%s door: %s = %v, want > 0", d.Name, name, v)
			}
		}
		if n := d.Throughput.Errors + d.Latency.Errors + d.Streaming.Errors; n != 0 {
			t.Errorf("%s door: %d failed requests, first: %s %s %s", d.Name, n,
				d.Throughput.FirstError, d.Latency.FirstError, d.Streaming.FirstError)
		}
	}
	if !slices.Equal(doors, []string{"messages", "responses", "compat-responses"}) {
		t.Errorf("doors %v, want messages, responses and compat-responses", doors)
	}
	if got := len(r.OtherProcesses.Phases); got != 9 {
		t.Errorf("%d phases, want 9", got)
	}
	for _, l := range []bench.Latencies{r.Latency.Direct, r.Latency.Gateway, r.Streaming.Direct, r.Streaming.Gateway} {
		if l.Errors != 0 {
			t.Errorf("%d failed requests, first: %s", l.Errors, l.FirstError)
		}
	}

	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{
		"Throughput, closed loop", "direct to the mock", "through the gateway", "ms per request",
		"Latency at 100 requests/s", "added by the gateway",
		"Streamed: time to the first content chunk", "peak RSS", "Other processes", "Targets",
		"CPU per non-streamed request", "added latency p50", "added latency p99", "first streamed chunk",
		"Front doors", "/compat/v1/messages", "/openai/responses",
		"messages door: p50 over the chat door", "responses door: added to the first streamed event",
		"responses door: CPU per request over the chat door",
	} {
		if !strings.Contains(text.String(), section) {
			t.Errorf("the report lacks %q:\n%s", section, text.String())
		}
	}
}

// TestBenchGateway is not a test: TestBench starts this test binary with
// -test.run selecting it and the `sluice` arguments after "--", and it runs
// them the way main does.
func TestBenchGateway(t *testing.T) {
	if !slices.Contains(os.Environ(), benchGatewayEnv) {
		t.Skip("the gateway process of TestBench")
	}
	i := slices.Index(os.Args, "--")
	if i < 0 {
		fmt.Fprintln(os.Stderr, "no -- before the sluice arguments")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cmd := newRootCmd()
	cmd.SetArgs(os.Args[i+1:])
	err := cmd.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestBenchSetups runs `sluice bench --baseline --clickhouse-url` briefly
// and checks that the pass-through and the ClickHouse-logging gateway were
// measured in the same run, each with its figures and issue 17's targets.
// It asserts no speed.
func TestBenchSetups(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmark for about 12 s")
	}
	chURL := testenv.ClickHouseDatabase(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := benchOptions{json: true, cfg: bench.Config{
		Duration: 300 * time.Millisecond, Rate: 100, Concurrency: 8,
		Gateway:    []string{exe, "-test.run=^TestBenchGateway$", "--"},
		GatewayEnv: []string{benchGatewayEnv},
		Baseline:   true, ClickHouseURL: chURL,
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if err := runBench(ctx, o, &stdout, &stderr); err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	var r bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("--json printed something that is not a report: %v\n%s", err, stdout.String())
	}
	if r.Baseline == nil {
		t.Fatal("no baseline in the report")
	}
	var names []string
	for _, s := range append([]bench.Setup{*r.Baseline}, r.Setups...) {
		names = append(names, s.Name)
		for what, v := range map[string]float64{
			"requests/s": s.Throughput.PerSecond, "CPU per request": s.CPUPerRequestMS,
			"latency p50": s.Latency.P50MS, "first chunk p50": s.Streaming.P50MS, "peak RSS": float64(s.PeakRSSBytes),
		} {
			if !(v > 0) {
				t.Errorf("%s: %s = %v, want > 0", s.Name, what, v)
			}
		}
		if n := s.Throughput.Errors + s.Latency.Errors + s.Streaming.Errors; n != 0 {
			t.Errorf("%s: %d failed requests, first: %s %s %s", s.Name, n,
				s.Throughput.FirstError, s.Latency.FirstError, s.Streaming.FirstError)
		}
		if s.Name != "pass-through" && !(s.CPUOverFloor > 0) {
			t.Errorf("%s: CPU over the floor = %v, want > 0", s.Name, s.CPUOverFloor)
		}
	}
	if want := []string{"pass-through", "embedded", "clickhouse"}; !slices.Equal(names, want) {
		t.Errorf("setups %v, want %v", names, want)
	}
	count := func(prefixes []string, names func(yield func(string) bool)) map[string]int {
		n := map[string]int{}
		for name := range names {
			for _, p := range prefixes {
				if strings.HasPrefix(name, p+": ") {
					n[p]++
				}
			}
		}
		return n
	}
	targets := count([]string{"embedded", "clickhouse"}, func(yield func(string) bool) {
		for _, tg := range r.Targets {
			yield(tg.Name)
		}
	})
	if want := map[string]int{"embedded": 5, "clickhouse": 2}; !maps.Equal(targets, want) {
		t.Errorf("issue 17's targets per setup %v, want %v", targets, want)
	}
	phases := count([]string{"pass-through", "clickhouse"}, func(yield func(string) bool) {
		for _, p := range r.OtherProcesses.Phases {
			yield(p.Phase)
		}
	})
	if want := map[string]int{"pass-through": 3, "clickhouse": 3}; !maps.Equal(phases, want) {
		t.Errorf("phases per other setup %v, want %v", phases, want)
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{"Setups in this run", "pass-through", "clickhouse: added latency p99", "embedded: CPU per non-streamed request"} {
		if !strings.Contains(text.String(), section) {
			t.Errorf("the report lacks %q:\n%s", section, text.String())
		}
	}
}

// runTestBench runs `sluice bench --json` briefly (--observability when
// observability), with this test binary as the gateway (TestBenchGateway),
// decodes its report into report and returns the progress it printed.
func runTestBench(t *testing.T, observability bool, report any) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := benchOptions{json: true, observability: observability, cfg: bench.Config{
		Duration: 500 * time.Millisecond, Rate: 100, Concurrency: 8,
		Gateway:    []string{exe, "-test.run=^TestBenchGateway$", "--"},
		GatewayEnv: []string{benchGatewayEnv},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if err := runBench(ctx, o, &stdout, &stderr); err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), report); err != nil {
		t.Fatalf("--json printed something that is not a report: %v\n%s", err, stdout.String())
	}
	return stderr.String()
}
