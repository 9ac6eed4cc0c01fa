package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// observabilityRounds is how many times each phase runs on each gateway,
// alternating: a drift of the machine's speed then weighs on both.
const observabilityRounds = 2

// scrapeInterval is how often the observed gateway's /metrics is read:
// more often than a Prometheus server would (15 s by default).
const scrapeInterval = time.Second

// ObservabilityReport compares a gateway with observability on (every
// span exported over OTLP to a local receiver, /metrics scraped every
// second) with the same gateway with both off (`sluice bench
// --observability`, issue 15).
type ObservabilityReport struct {
	Machine  Machine  `json:"machine"`
	Settings Settings `json:"settings"`
	Rounds   int      `json:"rounds"`
	// Off and On are the two gateways' figures, summed (throughput) or
	// averaged (latency percentiles) over the rounds.
	Off ObservedGateway `json:"off"`
	On  ObservedGateway `json:"on"`
	// CPURatio is On's CPU time per request over Off's (target ≤ 1.05).
	CPURatio float64 `json:"cpu_per_request_ratio"`
	// AddedP99MS is On's latency p99 minus Off's at the same fixed rate.
	AddedP99MS float64 `json:"added_p99_ms"`
	// SpansReceived and Scrapes show that On did export and was scraped.
	SpansReceived int64 `json:"spans_received"`
	Scrapes       int64 `json:"scrapes"`
}

// ObservedGateway is one gateway's figures in an observability run.
type ObservedGateway struct {
	Throughput      ClosedLoop `json:"throughput"`
	CPUPerRequestMS float64    `json:"cpu_per_request_ms"`
	Latency         Latencies  `json:"latency"`
}

// RunObservability starts the mock provider, an OTLP receiver and two
// gateways — one exporting to the receiver, one without export — and
// measures both the same way, alternating, observabilityRounds times.
func RunObservability(ctx context.Context, cfg Config) (*ObservabilityReport, error) {
	ctx, mockURL, stop, err := startMock(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer stop()
	recv, err := startReceiver()
	if err != nil {
		return nil, err
	}
	defer recv.close()
	cpus, restore, err := pinLoad(cfg)
	if err != nil {
		return nil, err
	}
	defer restore()

	envs := map[string][]string{"off": cfg.GatewayEnv, "on": append(append([]string{}, cfg.GatewayEnv...), "SLUICE_OTLP_ENDPOINT="+recv.url)}
	gws, tokens := map[string]*gateway{}, map[string]string{}
	for _, name := range []string{"off", "on"} {
		fmt.Fprintf(cfg.Progress, "bench: starting the gateway with observability %s\n", name)
		g, err := startGateway(ctx, gatewayOptions{command: cfg.Gateway, env: envs[name], cpu: cpus.gateway})
		if err != nil {
			return nil, err
		}
		defer g.stop()
		if tokens[name], err = g.configure(ctx, mockURL+"/v1"); err != nil {
			return nil, err
		}
		gws[name] = g
	}
	var scrapes atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		scrape(ctx, gws["on"], &scrapes)
	}()
	defer wg.Wait()
	defer stop() // ends ctx, and so the scraper, before wg.Wait

	r := &ObservabilityReport{Machine: describeMachine(cpus), Rounds: observabilityRounds, Settings: Settings{
		DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Warmup.Seconds(), Rate: cfg.Rate, Concurrency: cfg.Concurrency,
		RequestBytes: len(chatBody("openai/"+model, false)),
	}}
	sides := map[string]*ObservedGateway{"off": &r.Off, "on": &r.On}
	cpuS := map[string]float64{}
	var p50, p90, p99 = map[string]float64{}, map[string]float64{}, map[string]float64{}
	for round := range observabilityRounds {
		for _, name := range []string{"off", "on"} {
			g, t, side := gws[name], gatewayTargets(gws[name].base, tokens[name]).plain, sides[name]
			fmt.Fprintf(cfg.Progress, "bench: round %d, throughput with observability %s\n", round+1, name)
			cpu := g.cpuMeter()
			tl, err := closedLoop(ctx, t, cfg.Concurrency, cfg.Warmup, cfg.Duration, cpu)
			if err != nil {
				return nil, err
			}
			side.Throughput.Requests += tl.Requests
			side.Throughput.Errors += tl.Errors
			side.Throughput.Seconds += tl.Seconds
			cpuS[name] += cpu.seconds()
		}
		for _, name := range []string{"off", "on"} {
			fmt.Fprintf(cfg.Progress, "bench: round %d, latency at %d/s with observability %s\n", round+1, cfg.Rate, name)
			t := gatewayTargets(gws[name].base, tokens[name]).plain
			l, err := openLoop(ctx, t, openOptions{rate: cfg.Rate, senders: cfg.Concurrency, warmup: cfg.Warmup, duration: cfg.Duration})
			if err != nil {
				return nil, err
			}
			side := sides[name]
			side.Latency.Requests += l.Requests
			side.Latency.Errors += l.Errors
			side.Latency.MaxMS = max(side.Latency.MaxMS, l.MaxMS)
			p50[name] += l.P50MS / observabilityRounds
			p90[name] += l.P90MS / observabilityRounds
			p99[name] += l.P99MS / observabilityRounds
		}
	}
	for name, side := range sides {
		side.Throughput.PerSecond = ratio(float64(side.Throughput.Requests), side.Throughput.Seconds)
		side.CPUPerRequestMS = perRequestMS(cpuS[name], side.Throughput.Requests)
		side.Latency.P50MS, side.Latency.P90MS, side.Latency.P99MS = p50[name], p90[name], p99[name]
	}
	r.CPURatio = ratio(r.On.CPUPerRequestMS, r.Off.CPUPerRequestMS)
	r.AddedP99MS = r.On.Latency.P99MS - r.Off.Latency.P99MS
	r.SpansReceived, r.Scrapes = recv.spans.Load(), scrapes.Load()
	return r, nil
}

// scrape reads g's /metrics every scrapeInterval until ctx ends, counting
// the scrapes that answered.
func scrape(ctx context.Context, g *gateway, n *atomic.Int64) {
	tick := time.NewTicker(scrapeInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.base+"/metrics", nil)
		if err != nil {
			return
		}
		res, err := g.http.Do(req)
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.StatusCode == http.StatusOK {
			n.Add(1)
		}
	}
}

// receiver is a local OTLP/HTTP trace receiver: it decodes each export,
// as a collector would, and counts the spans.
type receiver struct {
	srv   *http.Server
	url   string
	spans atomic.Int64
	done  chan struct{}
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the OTLP receiver: %w", err)
	}
	r := &receiver{url: "http://" + ln.Addr().String(), done: make(chan struct{})}
	r.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(r.export)}
	go func() {
		defer close(r.done)
		_ = r.srv.Serve(ln) // returns at close
	}()
	return r, nil
}

func (r *receiver) export(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	var ex coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &ex)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, rs := range ex.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			r.spans.Add(int64(len(ss.Spans)))
		}
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (r *receiver) close() {
	_ = r.srv.Close()
	<-r.done
}

// WriteJSON writes r as indented JSON.
func (r *ObservabilityReport) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// WriteText writes r as the table `sluice bench --observability` prints.
func (r *ObservabilityReport) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	m, s := r.Machine, r.Settings
	fmt.Fprintf(bw, "Sluice observability overhead: OTLP export and /metrics scraped every %s, against both off\n", scrapeInterval)
	fmt.Fprintf(bw, "  machine   %d CPUs, %s %s/%s; gateways GOMAXPROCS=%d", m.CPUs, m.Go, m.OS, m.Arch, m.GatewayGOMAXPROCS)
	if m.GatewayCPU >= 0 {
		fmt.Fprintf(bw, ", pinned to CPU %d (one loaded at a time)", m.GatewayCPU)
	}
	fmt.Fprintf(bw, "\n  phases    %d rounds, alternating; %gs each after a %gs warm-up; closed loop on %d connections; fixed rate %d requests/s\n\n",
		r.Rounds, s.DurationS, s.WarmupS, s.Concurrency, s.Rate)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "observability\trequests/s\tCPU ms/request\tp50 ms\tp90 ms\tp99 ms\terrors\t\n")
	for _, row := range []struct {
		name string
		g    ObservedGateway
	}{{"off", r.Off}, {"on", r.On}} {
		fmt.Fprintf(tw, "%s\t%.0f\t%.4f\t%.3f\t%.3f\t%.3f\t%d\t\n", row.name, row.g.Throughput.PerSecond, row.g.CPUPerRequestMS,
			row.g.Latency.P50MS, row.g.Latency.P90MS, row.g.Latency.P99MS, row.g.Throughput.Errors+row.g.Latency.Errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(bw, "\n  CPU per request, on / off   %.3f (target ≤ 1.05)\n", r.CPURatio)
	fmt.Fprintf(bw, "  p99 added by observability  %+.3f ms\n", r.AddedP99MS)
	fmt.Fprintf(bw, "  spans received %d, scrapes %d\n", r.SpansReceived, r.Scrapes)
	return bw.Flush()
}
