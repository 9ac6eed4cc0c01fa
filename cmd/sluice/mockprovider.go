package main

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// mockProviderCmd is `sluice mock-provider`: the mock upstream provider as
// its own process, for the npm end-to-end test and benchmarks run against a
// separate gateway. It serves until SIGINT or SIGTERM (main cancels the
// command's context).
func mockProviderCmd() *cobra.Command {
	var addr, logLevel string
	cmd := &cobra.Command{
		Use:   "mock-provider",
		Short: "Serve a mock upstream model provider (OpenAI wire format) for tests and benchmarks",
		Long: `Serve a mock upstream model provider for tests and benchmarks.

It answers POST /v1/chat/completions, /v1/completions and /v1/embeddings (also
without /v1) deterministically in OpenAI's wire format, streamed or not. Model
name directives shape an answer, e.g. "gpt-4o-mini@chunks=5@delay=50ms"
(@chunks, @delay, @latency, @status, @reset); @cache_read, @cache_write,
@cache_write_1h and @reasoning add prompt-cache and reasoning tokens to the
usage. GET /_mock/stats counts requests; POST /_mock/reset clears the count.`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringVar(&addr, "listen", "127.0.0.1:9999", "address to listen on")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		var lvl slog.Level
		if err := lvl.UnmarshalText([]byte(logLevel)); err != nil {
			return fmt.Errorf("log level: %w", err)
		}
		ln, err := listen(addr)
		if err != nil {
			return err
		}
		log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: lvl}))
		srv := providertest.New(providertest.Options{Logger: log})
		fmt.Fprintf(cmd.OutOrStdout(), "mock provider listening on %s (OpenAI base URL %s/v1)\n", ln.Addr(), mockBaseURL(ln.Addr()))
		return srv.Serve(cmd.Context(), ln)
	}
	return cmd
}

// mockBaseURL is the URL clients use for the listener at a; an unspecified
// host (":9999") is reached at 127.0.0.1.
func mockBaseURL(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok && (ta.IP == nil || ta.IP.IsUnspecified()) {
		return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(ta.Port))
	}
	return "http://" + a.String()
}
