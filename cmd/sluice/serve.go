package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/graph/rest"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/alert"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy"
	"github.com/sluicehq/sluice/proxy/breaker"
	"github.com/sluicehq/sluice/proxy/lastuse"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/registry"
	"github.com/sluicehq/sluice/proxy/ratelimit"
	"github.com/sluicehq/sluice/proxy/respcache"
	"github.com/sluicehq/sluice/proxy/snapshot"
	"github.com/sluicehq/sluice/proxy/tokenize"
	"github.com/sluicehq/sluice/web"
)

// serve runs the selected parts on one listener until ctx ends. It wires
// every part once, in dependency order, with constructors: the store and
// the analytics backend, the limits, the data plane (snapshot holder,
// pipeline, inference handler), then the admin domain, which reads the
// data plane through small interfaces of its own (admin.BreakerStates),
// then the server.
func serve(ctx context.Context, c *config, which parts) error {
	log, err := c.logger()
	if err != nil {
		return err
	}
	if err := c.checkLimits(); err != nil {
		return err
	}
	box, err := c.box()
	if err != nil {
		return err
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	backend, writer, err := openAnalytics(ctx, c, log)
	if err != nil {
		return fmt.Errorf("open analytics: %w", err)
	}
	defer backend.Close()
	rc, err := c.openRedis(ctx, log)
	if err != nil {
		return err
	}
	if rc != nil {
		defer rc.Close()
	}
	// Budget alerts: where requests settle, a worker claims and delivers
	// the thresholds crossed (docs/governance.md "Alerts").
	var alerts *alert.Alerter
	var onSettle func(context.Context, budget.Settlement)
	if which.proxy {
		if alerts, err = alert.New(alert.Config{DB: st.DB, Box: box, AllowPrivate: c.AllowPrivateUpstream, Logger: log}); err != nil {
			return err
		}
		onSettle = alerts.OnSettle
	}
	// Rate limits and budgets: shared through Redis when it is set; budget
	// counters start from the persisted spend (docs/governance.md).
	limiter, budgets, err := c.limits(rc, backend, log, onSettle)
	if err != nil {
		return err
	}
	set := metrics.NewSet()
	var dp *dataPlane
	if which.proxy {
		obs, stopObs, err := c.observers(set, log)
		if err != nil {
			return err
		}
		defer stopObs() // after the server: requests finishing in the grace period are observed
		if dp, err = newDataPlane(c, log, dataPlaneDeps{store: st, box: box, writer: writer, set: set, redis: rc,
			limiter: limiter, budgets: budgets, observers: obs}); err != nil {
			return err
		}
	}
	var svc *admin.Service
	if which.admin {
		cfg := admin.Config{Store: st, Box: box, Logger: log, AllowPrivateBaseURLs: c.AllowPrivateUpstream,
			Analytics: backend,
			Budgets:   budgets, // live counters; the persisted spend for counters not in use
			KeyTester: newKeyTester(c.AllowPrivateUpstream),
			PublicURL: strings.TrimSuffix(c.PublicURL, "/"),
		}
		if dp != nil {
			cfg.Breakers = adminBreakers{dp.inf}
			// Admin writes wait (≤ 2 s) until this process's proxy serves
			// them.
			cfg.OnChange = dp.sync
		}
		if svc, err = admin.New(cfg); err != nil {
			return err
		}
		if err := bootstrap(ctx, svc, log); err != nil {
			return err
		}
	}
	opts := proxy.Options{
		Config:  proxy.Config{Listen: c.Listen, ShutdownGrace: c.ShutdownGrace, DrainDelay: c.DrainDelay},
		Logger:  log,
		Version: version,
		Metrics: func(w io.Writer) {
			set.WritePrometheus(w)
			if dp != nil {
				dp.inf.WriteBreakerMetrics(w)
			}
			metrics.WriteProcessMetrics(w)
		},
		Health: healthCheck(st, dp),
	}
	if dp != nil {
		opts.Inference, opts.EndStreams = dp.inf.Handle, dp.inf.EndStreams
	}
	if svc != nil {
		opts.Admin = adminHandler(svc, log)
	}
	srv, err := proxy.New(opts)
	if err != nil {
		return err
	}
	ln, err := listen(c.Listen)
	if err != nil {
		return err
	}
	log.Info("sluice listening", "addr", ln.Addr().String(), "proxy", which.proxy, "admin", which.admin,
		"store", storeKind(c), "data_dir", c.DataDir, "version", version)
	g, gctx := errgroup.WithContext(ctx)
	// The pipeline outlives the listener: requests finishing during the
	// shutdown grace still enqueue their records. It stops (flushing or
	// spilling what it holds) once Serve has returned.
	pctx, stopPipe := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPipe()
	if dp != nil {
		g.Go(func() error { return dp.holder.Run(gctx) })
		g.Go(func() error { dp.tok.Warm(); return nil })
		g.Go(func() error { return dp.pipe.Run(pctx) })
		g.Go(func() error { return dp.lastUse.Run(pctx) })
		g.Go(func() error { return alerts.Run(gctx) })
	}
	if which.admin || c.ClickHouseURL == "" {
		// Where the admin API runs, or on this process's own embedded
		// store: not in every ClickHouse proxy, which would repeat the
		// deletes once per replica.
		g.Go(func() error { return runRetention(gctx, st, backend, log) })
	}
	g.Go(func() error {
		defer stopPipe()
		return srv.Serve(gctx, ln)
	})
	return g.Wait()
}

// dataPlaneDeps are what the data plane of a serving process is built on.
type dataPlaneDeps struct {
	store   *store.Store
	box     *secret.Box
	writer  analytics.Writer
	set     *metrics.Set
	redis   *redis.Client // nil: the response cache is in process
	limiter ratelimit.Limiter
	budgets *budget.Manager
	// observers are told of every finished request (OTLP, access log).
	observers []proxy.Observer
}

// dataPlane is the inference proxy of a serving process: the configuration
// snapshot, the analytics pipeline, the tokenizer and the inference
// handler over them. serve runs its goroutines.
type dataPlane struct {
	holder *snapshot.Holder
	pipe   *analytics.Pipeline
	tok    *tokenize.Counter
	inf    *proxy.Inference
	// lastUse writes the tokens' last use to the store the admin API
	// reads, in every process layout that serves inference.
	lastUse *lastuse.Marks
}

// newDataPlane builds the data plane; nothing runs until serve starts it.
func newDataPlane(c *config, log *slog.Logger, d dataPlaneDeps) (*dataPlane, error) {
	pipe, err := newPipeline(c, d.writer, log, d.set)
	if err != nil {
		return nil, err
	}
	if c.SnapshotMaxRows < 1 {
		return nil, fmt.Errorf("--snapshot-max-rows must be at least 1, got %d", c.SnapshotMaxRows)
	}
	holder := snapshot.NewHolder(snapshot.HolderConfig{Store: d.store, Box: d.box, Logger: log, MaxRows: c.SnapshotMaxRows})
	configMetrics(d.set, holder)
	client := providers.NewClient(providers.ClientConfig{AllowPrivate: c.AllowPrivateUpstream, UserAgent: "sluice/" + version,
		MaxConnsPerHost: c.UpstreamConnsPerHost})
	// The response cache: shared through Redis when it is set, else in
	// process (nil).
	var respCache respcache.Store
	if d.redis != nil {
		if respCache, err = respcache.NewRedis(respcache.RedisConfig{Client: d.redis, Logger: log}); err != nil {
			return nil, err
		}
	}
	// The tokenizer counts prompts under hard budgets and token limits and
	// estimates usage a provider did not report: serve loads its encodings
	// at start, off the first such request.
	tok := tokenize.New()
	lastUse := lastuse.New(d.store, log, c.LastUseInterval)
	inf := proxy.NewInference(proxy.InferenceConfig{
		LastUse:    lastUse,
		Snapshots:  holder,
		Providers:  registry.New(client),
		Breakers:   breaker.NewSet(time.Now),
		Sink:       pipe,
		Logger:     log,
		Limiter:    d.limiter,
		Budgets:    d.budgets,
		Cache:      respCache,
		Tokenizer:  tok,
		RuleBudget: c.RuleBudget,
		// A tenant may hold a quarter of the connections to one upstream
		// host (docs/security.md, "Upstream fairness").
		TenantMaxInFlight:  c.TenantMaxInFlight,
		UpstreamShare:      c.UpstreamConnsPerHost / 4,
		StreamWriteTimeout: c.StreamWriteTimeout,
		Observers:          d.observers,
		// The traffic series of CONTRACT §13 are registered in the
		// process's set, written at /metrics with the pipeline's.
		Metrics: proxy.MetricsConfig{Set: d.set, NoModel: c.MetricsNoModel},
	})
	return &dataPlane{holder: holder, pipe: pipe, tok: tok, inf: inf, lastUse: lastUse}, nil
}

// sync waits (at most 2 s) until the snapshot in service holds what was
// committed before the call: the admin domain's OnChange in a process that
// serves both, so that an admin write is served by the next inference
// request (read-your-writes).
func (dp *dataPlane) sync() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = dp.holder.Sync(ctx)
}

// adminBreakers shows the data plane's circuit breakers to the admin
// domain in the domain's own type: the data plane does not import the
// domain, and the domain does not import the data plane.
type adminBreakers struct{ inf *proxy.Inference }

var _ admin.BreakerStates = adminBreakers{}

// BreakerStates implements admin.BreakerStates.
func (b adminBreakers) BreakerStates(gatewayID string) map[string]admin.BreakerState {
	st := b.inf.BreakerStates(gatewayID)
	out := make(map[string]admin.BreakerState, len(st))
	for k, s := range st {
		out[k] = admin.BreakerState{Provider: s.Provider, KeyAlias: s.KeyAlias, State: string(s.State),
			ConsecutiveFailures: s.ConsecutiveFailures, OpenedAt: s.OpenedAt, NextProbeAt: s.NextProbeAt,
			LastError: s.LastError, LastErrorAt: s.LastErrorAt}
	}
	return out
}

func storeKind(c *config) string {
	if c.DatabaseURL != "" {
		return "postgres"
	}
	return "sqlite"
}

// bootstrap seeds the price table once and creates the first
// Administrator on an empty store, printing its token once on stderr.
func bootstrap(ctx context.Context, svc *admin.Service, log *slog.Logger) error {
	if n, err := svc.SeedPrices(ctx); err != nil {
		return fmt.Errorf("seed model prices: %w", err)
	} else if n > 0 {
		log.Info("seeded model prices", "count", n)
	}
	secret, created, err := svc.Bootstrap(ctx, os.Getenv("SLUICE_ADMIN_TOKEN"))
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if created {
		if os.Getenv("SLUICE_ADMIN_TOKEN") != "" {
			fmt.Fprintln(os.Stderr, "Sluice created tenant \"platform\" and the Administrator admin@localhost; its token is SLUICE_ADMIN_TOKEN.")
		} else {
			fmt.Fprintf(os.Stderr, "Sluice created tenant \"platform\" and the Administrator admin@localhost.\n"+
				"Its admin token is shown once; keep it safe:\n\n    %s\n\n"+
				"(Lost it? `sluice token create --user admin@localhost` mints another.)\n", secret)
		}
	}
	return nil
}

// adminHandler is the admin API: REST shims and GraphQL over one domain,
// with the dashboard (package web) at / and /ui/.
func adminHandler(svc *admin.Service, log *slog.Logger) http.Handler {
	gql := graph.NewHandler(svc, graph.Options{Logger: log})
	return web.Mount(web.Handler(), rest.NewAdmin(svc, rest.AdminOptions{GraphQL: gql, Logger: log}))
}

// configMetrics exports the state of the configuration snapshot:
// sluice_config_version, and sluice_config_load_failing, 1 while the
// latest configuration could not be loaded (the store does not answer, or
// it was refused) and the last good snapshot serves.
func configMetrics(set *metrics.Set, holder *snapshot.Holder) {
	set.NewGauge("sluice_config_version", func() float64 { return float64(holder.Stats().Version) })
	set.NewGauge("sluice_config_load_failing", func() float64 {
		if holder.Stats().LastError != "" {
			return 1
		}
		return 0
	})
}

// healthCheck reports the store's reachability and, in a proxy, whether a
// configuration snapshot is loaded (without one the proxy cannot serve:
// unavailable, 503; while a newer configuration cannot be loaded, the last
// good one serves: degraded) and the analytics pipeline (degraded while it
// buffers or replays).
func healthCheck(st *store.Store, dp *dataPlane) func(context.Context) proxy.Health {
	var holder *snapshot.Holder
	var pipe *analytics.Pipeline
	if dp != nil {
		holder, pipe = dp.holder, dp.pipe
	}
	return func(ctx context.Context) proxy.Health {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		h := proxy.Health{Status: proxy.StatusOK, Checks: map[string]proxy.Check{}}
		if err := st.Ping(ctx); err != nil {
			h.Status = proxy.StatusDegraded
			h.Checks["store"] = proxy.Check{Status: proxy.StatusUnavailable, Detail: "the relational store does not answer"}
		} else {
			h.Checks["store"] = proxy.Check{Status: proxy.StatusOK}
		}
		if holder != nil {
			st := holder.Stats()
			switch {
			case !st.Ready:
				h.Status = proxy.StatusUnavailable
				h.Checks["config"] = proxy.Check{Status: proxy.StatusUnavailable, Detail: "no configuration snapshot loaded yet"}
			case st.LastError != "":
				// Still serving (200): the last good snapshot. Why the newer
				// configuration was not loaded is in the log, not here:
				// /healthz needs no credential.
				h.Status = proxy.StatusDegraded
				h.Checks["config"] = proxy.Check{Status: proxy.StatusDegraded, Detail: fmt.Sprintf(
					"serving version %d; the configuration could not be loaded since %s (see the log)",
					st.Version, st.LastErrorAt.UTC().Format(time.RFC3339))}
			default:
				h.Checks["config"] = proxy.Check{Status: proxy.StatusOK, Detail: fmt.Sprintf("version %d", st.Version)}
			}
		}
		if pipe != nil {
			chk := analyticsCheck(pipe)
			h.Checks["analytics"] = chk
			if chk.Status != proxy.StatusOK && h.Status == proxy.StatusOK {
				h.Status = proxy.StatusDegraded
			}
		}
		return h
	}
}
