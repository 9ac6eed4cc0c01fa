package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/bench"
)

// benchOptions are the flags of `sluice bench`.
type benchOptions struct {
	cfg  bench.Config
	json bool
	// observability compares OTLP export and metrics scraping on against
	// off instead of the gateway against a direct call.
	observability bool
	// gatewayBinary replaces this executable as the gateway (hidden: for
	// tests and for comparing two builds).
	gatewayBinary string
}

// benchCmd is `sluice bench`: the mock provider in-process, this binary's
// `serve` as the gateway in a child process, load on loopback, and the
// gateway's overhead against a direct call measured in the same run.
func benchCmd() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the gateway's overhead against a direct call to a mock provider, on this machine",
		Long: `Measure the gateway's overhead on this machine, in one run that stops by itself.

It starts the mock provider in this process and "sluice serve" (this binary) as
a child process on a fresh embedded store, with GOMAXPROCS=1 and pinned to the
last CPU (the load runs on the others), configures a tenant, a gateway with
body logging, a provider key and a token through the admin API, and then
measures, each phase for --duration after a short warm-up:

  1. requests/s direct to the mock and through the gateway (closed loop,
     --concurrency connections), and the gateway's CPU time per request;
  2. latency p50/p90/p99 at --rate requests/s (open loop, measured from each
     request's scheduled send time), direct and through the gateway;
  3. the same for the first content chunk of a streamed request;
  4. the same request through the Messages door (/compat/v1/messages), the
     native Responses door (/openai/responses) and the translated Responses
     door (/compat/responses), one phase each, against the direct call and
     the chat door.

With --clickhouse-url the same chat phases run again through a second
gateway logging to that ClickHouse; with --baseline through a bare fasthttp
pass-through on the gateway's CPU (no parsing, no auth, no logging), the
floor each setup's CPU per request is set against.

The figures are printed next to the project's targets (docs/performance.md).
All traffic stays on loopback; a run takes about nine times --duration.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.cfg.Duration, "duration", bench.DefaultDuration, "how long each phase measures")
	f.IntVar(&o.cfg.Rate, "rate", bench.DefaultRate, "requests per second of the fixed-rate phases")
	f.IntVar(&o.cfg.Concurrency, "concurrency", bench.DefaultConcurrency, "connections of the closed-loop phases")
	f.BoolVar(&o.json, "json", false, "print the figures as JSON instead of tables")
	f.BoolVar(&o.observability, "observability", false, "measure instead the cost of observability: two gateways, one exporting every span over OTLP to a local receiver with /metrics scraped every second, one with both off; their CPU per request and latency, alternating rounds")
	f.BoolVar(&o.cfg.NoPin, "no-pin", false, "do not pin the gateway and the load generator to separate CPUs")
	f.StringArrayVar(&o.cfg.GatewayEnv, "gateway-env", nil, "KEY=VALUE added to the gateway's environment, e.g. SLUICE_CLICKHOUSE_URL=clickhouse://127.0.0.1:9000/default to log to ClickHouse (repeatable)")
	f.BoolVar(&o.cfg.Baseline, "baseline", false, "also measure a bare fasthttp pass-through on the gateway's CPU: the floor the figures are set against")
	f.StringVar(&o.cfg.ClickHouseURL, "clickhouse-url", "", "also measure a second gateway logging to this ClickHouse, after the embedded default")
	f.StringVar(&o.gatewayBinary, "gateway-binary", "", "sluice binary to run as the gateway (default: this one)")
	_ = f.MarkHidden("gateway-binary")
	return cmd
}

// runBench runs the benchmark and prints its report on stdout; progress
// goes to stderr.
func runBench(ctx context.Context, o benchOptions, stdout, stderr io.Writer) error {
	cfg := o.cfg
	if len(cfg.Gateway) == 0 {
		bin := o.gatewayBinary
		if bin == "" {
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find this executable to run as the gateway: %w", err)
			}
			bin = exe
		}
		cfg.Gateway = []string{bin}
	}
	cfg.Progress = stderr
	if o.observability {
		return printBench(ctx, bench.RunObservability, cfg, o.json, stdout, stderr)
	}
	return printBench(ctx, bench.Run, cfg, o.json, stdout, stderr)
}

// benchReport is a report of `sluice bench`, printed as text or JSON.
type benchReport interface {
	WriteJSON(io.Writer) error
	WriteText(io.Writer) error
}

// printBench runs run with cfg and prints its report on stdout, as JSON
// when asJSON; the time it took goes to stderr.
func printBench[R benchReport](ctx context.Context, run func(context.Context, bench.Config) (R, error), cfg bench.Config, asJSON bool, stdout, stderr io.Writer) error {
	start := time.Now()
	r, err := run(ctx, cfg)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	fmt.Fprintf(stderr, "bench: done in %s\n", time.Since(start).Round(time.Second))
	if asJSON {
		return r.WriteJSON(stdout)
	}
	return r.WriteText(stdout)
}

// benchPassthroughCmd serves the floor of `sluice bench --baseline`: a bare
// fasthttp pass-through to --upstream (hidden: started by bench).
func benchPassthroughCmd() *cobra.Command {
	var listen, upstream string
	cmd := &cobra.Command{
		Use:    "bench-passthrough",
		Short:  "Serve a bare fasthttp pass-through to an upstream (the floor of sluice bench --baseline)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return bench.ServePassthrough(ctx, listen, upstream)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "address to serve on")
	cmd.Flags().StringVar(&upstream, "upstream", "", "base URL of the upstream, e.g. http://127.0.0.1:8081")
	return cmd
}
