package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/bench"
)

// TestBenchObservability runs `sluice bench --observability` briefly, with
// this test binary as both gateways (TestBenchGateway), and checks that
// both were measured, that the observed one exported spans to the local
// receiver and was scraped, and that the report prints. It asserts no
// speed.
func TestBenchObservability(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmark for about 5 s")
	}
	var r bench.ObservabilityReport
	runTestBench(t, true, &r)
	for name, v := range map[string]float64{
		"off requests/s": r.Off.Throughput.PerSecond, "on requests/s": r.On.Throughput.PerSecond,
		"off CPU per request": r.Off.CPUPerRequestMS, "on CPU per request": r.On.CPUPerRequestMS,
		"off p99": r.Off.Latency.P99MS, "on p99": r.On.Latency.P99MS, "CPU ratio": r.CPURatio,
		"spans received": float64(r.SpansReceived), "scrapes": float64(r.Scrapes),
	} {
		if !(v > 0) {
			t.Errorf("%s = %v, want > 0", name, v)
		}
	}
	for _, g := range []bench.ObservedGateway{r.Off, r.On} {
		if n := g.Throughput.Errors + g.Latency.Errors; n != 0 {
			t.Errorf("%d failed requests: %s %s", n, g.Throughput.FirstError, g.Latency.FirstError)
		}
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CPU per request, on / off", "p99 added by observability", "spans received"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, text.String())
		}
	}
}
