package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/sluicehq/sluice/proxy"
	"github.com/sluicehq/sluice/proxy/accesslog"
	"github.com/sluicehq/sluice/proxy/otlp"
)

// otlpShutdownTimeout bounds the export of the spans still queued when
// the process stops.
const otlpShutdownTimeout = 5 * time.Second

// observers returns the observers of finished requests the flags turn
// on (docs/observability.md): the OTLP span exporter and the access log,
// and stop, which exports what the exporter holds and closes the access
// log's file; serve calls it once the server has stopped.
func (c *config) observers(set *metrics.Set, log *slog.Logger) (obs []proxy.Observer, stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	if c.OTLPEndpoint != "" {
		exp, err := otlp.New(otlp.Config{Endpoint: c.OTLPEndpoint, SamplingRatio: c.OTLPSamplingRatio,
			Metrics: set, Logger: log, Version: version})
		if err != nil {
			return nil, nil, err
		}
		obs = append(obs, exp)
		stops = append(stops, func() {
			ctx, cancel := context.WithTimeout(context.Background(), otlpShutdownTimeout)
			defer cancel()
			if err := exp.Shutdown(ctx); err != nil {
				log.Warn("otlp: spans still queued at shutdown were dropped", "err", err)
			}
		})
	}
	switch c.AccessLog {
	case "":
	case "stderr", "-":
		obs = append(obs, accesslog.New(os.Stderr))
	default:
		f, err := os.OpenFile(c.AccessLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("open --access-log: %w", err)
		}
		obs = append(obs, accesslog.New(f))
		stops = append(stops, func() {
			if err := f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
				log.Warn("close the access log", "err", err)
			}
		})
	}
	return obs, stop, nil
}
