package bench

import (
	"bufio"
	"context"
	"fmt"
	"text/tabwriter"
	"time"
)

// The setups a run can compare (issue 17): the embedded default, the
// ClickHouse one when Config.ClickHouseURL is set, and the floor.
const (
	setupPassthrough = "pass-through"
	setupEmbedded    = "embedded"
	setupClickHouse  = "clickhouse"
)

// Setup is one server measured in the run — the bare pass-through, the
// gateway on its embedded store, the gateway logging to ClickHouse — with
// the chat request's figures and, when the run measured the pass-through,
// each figure against that floor.
type Setup struct {
	Name       string     `json:"name"`
	Throughput ClosedLoop `json:"throughput"`
	// CPUPerRequestMS is the process's CPU time in the closed loop, and
	// until it settled after it, over its requests.
	CPUPerRequestMS float64   `json:"cpu_per_request_ms"`
	Latency         Latencies `json:"latency"`
	Streaming       Latencies `json:"streaming_first_chunk"`
	// Added and StreamAdded are over the direct call of the same run.
	Added       Added `json:"added"`
	StreamAdded Added `json:"stream_added"`
	// CPUOverFloor is CPUPerRequestMS over the pass-through's (0 without
	// one).
	CPUOverFloor float64 `json:"cpu_over_floor"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
}

// setupFrom is the embedded default's figures of the main phases.
func setupFrom(name string, r *Report) Setup {
	return Setup{
		Name: name, Throughput: r.Throughput.Gateway, CPUPerRequestMS: r.Throughput.CPUPerRequestMS,
		Latency: r.Latency.Gateway, Streaming: r.Streaming.Gateway,
		Added: r.Latency.Added, StreamAdded: r.Streaming.Added, PeakRSSBytes: r.Gateway.PeakRSSBytes,
	}
}

// measureSetup measures the chat request through one server's targets in
// three phases — closed loop, fixed rate, streamed at the fixed rate — and
// compares them with the direct call's figures already in r.
func (m *measurer) measureSetup(ctx context.Context, r *Report, proc *gateway, name string, t targets) (Setup, error) {
	c := m.cfg
	s := Setup{Name: name}
	cpu := proc.cpuMeter()
	err := m.phase(r, proc.pid(), name+": throughput", c.Warmup+c.Duration, func() (err error) {
		if s.Throughput, err = closedLoop(ctx, t.plain, c.Concurrency, c.Warmup, c.Duration, cpu); err != nil {
			return err
		}
		return cpu.drain(ctx)
	})
	if err != nil {
		return s, err
	}
	s.CPUPerRequestMS = perRequestMS(cpu.seconds(), s.Throughput.Requests)
	err = m.phase(r, proc.pid(), name+": latency at a fixed rate", c.Warmup+c.Duration, func() (err error) {
		s.Latency, err = openLoop(ctx, t.plain, m.openOptions(nil))
		return err
	})
	if err != nil {
		return s, err
	}
	err = m.phase(r, proc.pid(), name+": streamed first chunk at a fixed rate", c.Warmup+c.Duration, func() (err error) {
		s.Streaming, err = openLoop(ctx, t.stream, m.openOptions(nil))
		return err
	})
	if err != nil {
		return s, err
	}
	s.Added = s.Latency.minus(r.Latency.Direct)
	s.StreamAdded = s.Streaming.minus(r.Streaming.Direct)
	s.PeakRSSBytes, err = peakRSS(proc.pid())
	return s, err
}

// phase runs one measured phase, recording how busy the machine's
// processes other than this one and pid kept it meanwhile.
func (m *measurer) phase(r *Report, pid int, name string, length time.Duration, measure func() error) error {
	fmt.Fprintf(m.cfg.Progress, "bench: %s (%s)\n", name, length.Round(time.Millisecond))
	other, err := startOtherMeter(pid)
	if err != nil {
		return err
	}
	if err := measure(); err != nil {
		return err
	}
	o, err := other.stop()
	r.OtherProcesses.Phases = append(r.OtherProcesses.Phases, PhaseShare{Phase: name, Share: o.Share, Seconds: o.Seconds})
	return err
}

// measureFloor starts the pass-through, measures it and stops it.
func (m *measurer) measureFloor(ctx context.Context, r *Report, mockURL string, cpu int) error {
	fmt.Fprintf(m.cfg.Progress, "bench: starting the pass-through baseline\n")
	p, err := startPassthrough(ctx, gatewayOptions{command: m.cfg.Gateway, env: m.cfg.GatewayEnv, cpu: cpu}, mockURL)
	if err != nil {
		return err
	}
	defer p.stop()
	s, err := m.measureSetup(ctx, r, p, setupPassthrough, directTargets(p.base))
	if err != nil {
		return err
	}
	r.Baseline = &s
	return p.stop()
}

// measureClickHouse starts a second gateway that logs to ClickHouse,
// configures it like the first, measures it and stops it.
func (m *measurer) measureClickHouse(ctx context.Context, r *Report, mockURL string, cpu int) error {
	fmt.Fprintf(m.cfg.Progress, "bench: starting the gateway logging to ClickHouse\n")
	env := append(append([]string{}, m.cfg.GatewayEnv...), "SLUICE_CLICKHOUSE_URL="+m.cfg.ClickHouseURL)
	gw, err := startGateway(ctx, gatewayOptions{command: m.cfg.Gateway, env: env, cpu: cpu})
	if err != nil {
		return err
	}
	defer gw.stop()
	token, err := gw.configure(ctx, mockURL+"/v1")
	if err != nil {
		return err
	}
	s, err := m.measureSetup(ctx, r, gw, setupClickHouse, gatewayTargets(gw.base, token))
	if err != nil {
		return err
	}
	r.Setups = append(r.Setups, s)
	return gw.stop()
}

// compareSetups fills each setup's ratio to the floor.
func (r *Report) compareSetups() {
	if r.Baseline == nil {
		return
	}
	for i := range r.Setups {
		r.Setups[i].CPUOverFloor = ratio(r.Setups[i].CPUPerRequestMS, r.Baseline.CPUPerRequestMS)
	}
}

// writeSetups prints the setups side by side with the floor, when the run
// measured more than the embedded default.
func writeSetups(w *bufio.Writer, r *Report) error {
	if r.Baseline == nil && len(r.Setups) < 2 {
		return nil
	}
	rows := r.Setups
	if r.Baseline != nil {
		rows = append([]Setup{*r.Baseline}, rows...)
	}
	fmt.Fprintf(w, "Setups in this run: the chat request (ms; latencies at %d requests/s, added over the direct call)\n", r.Latency.Rate)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\trequests/s\tCPU/request\t× floor\tadded p50\tadded p99\tfirst chunk added p50\tp99\tpeak RSS MiB\terrors\t\n")
	for _, s := range rows {
		floor := "—"
		if s.CPUOverFloor > 0 {
			floor = fmt.Sprintf("%.2f×", s.CPUOverFloor)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.3f\t%s\t%+.3f\t%+.3f\t%+.3f\t%+.3f\t%.1f\t%d\t\n",
			s.Name, s.Throughput.PerSecond, s.CPUPerRequestMS, floor, s.Added.P50MS, s.Added.P99MS,
			s.StreamAdded.P50MS, s.StreamAdded.P99MS, float64(s.PeakRSSBytes)/(1<<20),
			s.Throughput.Errors+s.Latency.Errors+s.Streaming.Errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

// The targets of issue 17 per setup, on the machine it names (2 cores,
// the gateway on one).
var setupTargets = map[string][]struct {
	name  string
	value func(Setup) float64
	limit float64
}{
	setupEmbedded: {
		{"CPU per non-streamed request", func(s Setup) float64 { return s.CPUPerRequestMS }, 0.07},
		{"added latency p50", func(s Setup) float64 { return s.Added.P50MS }, 0.3},
		{"added latency p99", func(s Setup) float64 { return s.Added.P99MS }, 2},
		{"added to the first streamed chunk, p50", func(s Setup) float64 { return s.StreamAdded.P50MS }, 0.3},
		{"added to the first streamed chunk, p99", func(s Setup) float64 { return s.StreamAdded.P99MS }, 2},
	},
	setupClickHouse: {
		{"CPU per non-streamed request", func(s Setup) float64 { return s.CPUPerRequestMS }, 0.05},
		{"added latency p99", func(s Setup) float64 { return s.Added.P99MS }, 1},
	},
}

// judgeSetups adds issue 17's targets of each setup, when the run measured
// more than the embedded default.
func (r *Report) judgeSetups(add func(name string, v, limit float64)) {
	if r.Baseline == nil && len(r.Setups) < 2 {
		return
	}
	for _, s := range r.Setups {
		for _, t := range setupTargets[s.Name] {
			add(s.Name+": "+t.name, t.value(s), t.limit)
		}
	}
}
