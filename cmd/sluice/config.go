package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/internal/rules"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy"
	"github.com/sluicehq/sluice/proxy/lastuse"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

// config is every setting of the binary. Each is a flag and an environment
// variable (SLUICE_ + the flag name in upper case, '-' as '_'); a flag
// given on the command line wins over the environment.
type config struct {
	Listen string
	// PublicURL is the base URL clients reach the inference API at; the
	// dashboard shows gateway URLs and snippets with it ("" : its origin).
	PublicURL            string
	DataDir              string
	DatabaseURL          string
	ClickHouseURL        string
	RedisURL             string
	LogLevel             string
	LogFormat            string
	AllowPrivateUpstream bool
	ShutdownGrace        time.Duration
	DrainDelay           time.Duration

	// Concurrency limits of the proxy (docs/security.md).
	TenantMaxInFlight    int
	UpstreamConnsPerHost int
	StreamWriteTimeout   time.Duration

	// RedisFallbackReplicas divides rate limits and remaining budgets
	// among the replicas while Redis is unreachable.
	RedisFallbackReplicas int
	// AnalyticsBatchSize is the most records one analytics write takes; 0
	// picks the backend's default (analyticsBatchSize).
	AnalyticsBatchSize int
	// RuleBudget is the matching time content rules may spend on one
	// request (proxy.InferenceConfig.RuleBudget).
	RuleBudget time.Duration
	// SnapshotMaxRows bounds the configuration rows a proxy loads.
	SnapshotMaxRows int
	// LastUseInterval is how often a proxy writes its tokens' last use.
	LastUseInterval time.Duration
	// Observability (docs/observability.md): the OTLP collector's base
	// URL and the share of new traces sent; the access log ("", "stderr"
	// or a file path).
	OTLPEndpoint      string
	OTLPSamplingRatio float64
	AccessLog         string
	// MetricsNoModel drops the model label of the traffic series
	// (proxy.MetricsConfig.NoModel, docs/observability.md).
	MetricsNoModel bool
	// MasterKeyFile names a file holding the master key (a container
	// secret); the flag names the file, never the key.
	MasterKeyFile string
	// MasterKeyPreviousFile names a file holding the previous master key
	// (a rotation in progress); the flag names the file, never the key.
	MasterKeyPreviousFile string
	// From the environment only: secrets do not belong in process arguments.
	MasterKey         string
	MasterKeyPrevious string
	AdminToken        string
}

// bindFlags registers the shared flags on fs.
func (c *config) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Listen, "listen", ":8080", "address to listen on")
	fs.StringVar(&c.PublicURL, "public-url", "", "base URL clients reach the inference API at (https://ai.example.com), shown by the dashboard in gateway URLs and SDK snippets; empty: the dashboard's own origin")
	fs.StringVar(&c.DataDir, "data-dir", "./sluice-data", "directory of the embedded stores, the master key file and spill files")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "PostgreSQL URL (postgres://…); empty: embedded SQLite in the data dir")
	fs.StringVar(&c.ClickHouseURL, "clickhouse-url", "", "ClickHouse URL (clickhouse://…); empty: embedded analytics in the data dir")
	fs.StringVar(&c.RedisURL, "redis-url", "", "Redis URL shared by proxy replicas; empty: in-process counters and cache")
	fs.IntVar(&c.RedisFallbackReplicas, "redis-fallback-replicas", 1, "replicas expected to share limits: while Redis is unreachable each process enforces rate limits and remaining budgets divided by it")
	fs.IntVar(&c.AnalyticsBatchSize, "analytics-batch-size", 0, "most request records one analytics write takes (1–1000000); 0: 100000 with ClickHouse (larger batches ingest faster), 5000 with the embedded store (smaller ones keep each in-process write short)")
	fs.IntVar(&c.SnapshotMaxRows, "snapshot-max-rows", snapshot.DefaultMaxRows, "most configuration rows (tenants, gateways, keys, rules, users, assignments, tokens, prices together) a proxy loads; a larger configuration is refused and the last one loaded keeps serving")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", "text", "text or json")
	fs.BoolVar(&c.AllowPrivateUpstream, "allow-private-upstreams", false, "let provider base URLs point at loopback and private addresses (self-hosted models); link-local and metadata addresses stay refused")
	fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", 30*time.Second, "how long in-flight requests and streams may run on after SIGTERM")
	fs.DurationVar(&c.DrainDelay, "drain-delay", 0, "after SIGTERM, how long to keep serving with /healthz answering 503 before the listener closes, so that load balancers and Kubernetes stop sending requests first (docs/deployment.md)")
	fs.DurationVar(&c.RuleBudget, "rule-budget", rules.DefaultBudget, "matching time the content rules may spend on one request (request, response and stream together); past it unchecked block and redact rules refuse the request (400 content_blocked) and flag rules let it pass; negative: no limit")
	fs.StringVar(&c.MasterKeyFile, "master-key-file", "", "file holding the master key (a container or Kubernetes secret), instead of SLUICE_MASTER_KEY")
	fs.StringVar(&c.MasterKeyPreviousFile, "master-key-previous-file", "", "file holding the previous master key during a rotation (or SLUICE_MASTER_KEY_PREVIOUS): provider keys sealed with it still open, and sluice keys reseal moves them to the current key")
	fs.IntVar(&c.TenantMaxInFlight, "tenant-max-in-flight", proxy.DefaultTenantMaxInFlight, "requests a tenant may have in flight at once in this process, unless its settings.max_in_flight says otherwise")
	fs.IntVar(&c.UpstreamConnsPerHost, "upstream-conns-per-host", 512, "connections kept to one upstream host; one tenant may use a quarter of them")
	fs.StringVar(&c.OTLPEndpoint, "otlp-endpoint", "", "OpenTelemetry collector base URL (http://host:4318): spans of every request are POSTed to URL/v1/traces (OTLP/HTTP, protobuf); empty: no export")
	fs.Float64Var(&c.OTLPSamplingRatio, "otlp-sampling-ratio", 1, "share of new traces exported (0–1); a request with a traceparent follows its sampled flag")
	fs.StringVar(&c.AccessLog, "access-log", "", "write one JSON line per inference request to stderr (\"stderr\") or to this file; empty: off")
	fs.BoolVar(&c.MetricsNoModel, "metrics-no-model", false, "drop the model label of sluice_requests_total, sluice_tokens_total and sluice_cost_usd_total: fewer series per gateway (docs/observability.md)")
	fs.DurationVar(&c.LastUseInterval, "last-use-interval", lastuse.DefaultInterval, "how often a proxy writes the last use of the tokens it served (last_used_at, and the users' last_seen_at)")
	fs.DurationVar(&c.StreamWriteTimeout, "stream-write-timeout", proxy.DefaultStreamWriteTimeout, "how long a stream waits for its client to read before it closes the connection")
}

// checkLimits reports a concurrency setting that cannot work, or a
// --public-url that is not a base URL.
func (c *config) checkLimits() error {
	if err := checkPublicURL(c.PublicURL); err != nil {
		return err
	}
	switch {
	case c.TenantMaxInFlight < 1:
		return fmt.Errorf("--tenant-max-in-flight must be at least 1, got %d", c.TenantMaxInFlight)
	case c.UpstreamConnsPerHost < 4:
		return fmt.Errorf("--upstream-conns-per-host must be at least 4, got %d", c.UpstreamConnsPerHost)
	case c.StreamWriteTimeout < time.Second:
		return fmt.Errorf("--stream-write-timeout must be at least 1s, got %s", c.StreamWriteTimeout)
	}
	return nil
}

// checkPublicURL refuses a --public-url that is not an absolute http(s)
// URL without user info, query or fragment: the dashboard puts gateway
// paths after it.
func checkPublicURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--public-url must be an absolute http or https URL without query or fragment, e.g. https://ai.example.com, got %q", raw)
	}
	return nil
}

// applyEnv fills every flag not set on the command line from its
// environment variable.
func applyEnv(fs *pflag.FlagSet) error {
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			return
		}
		name := "SLUICE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
		}
	})
	return errors.Join(errs...)
}

func (c *config) loadEnvSecrets() {
	c.MasterKey = os.Getenv("SLUICE_MASTER_KEY")
	c.MasterKeyPrevious = os.Getenv("SLUICE_MASTER_KEY_PREVIOUS")
	c.AdminToken = os.Getenv("SLUICE_ADMIN_TOKEN")
}

func (c *config) logger() (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch c.LogFormat {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("log format must be text or json, got %q", c.LogFormat)
}

// openStore opens and migrates the relational store.
func (c *config) openStore(ctx context.Context) (*store.Store, error) {
	st, err := store.Open(ctx, store.Config{DatabaseURL: c.DatabaseURL, DataDir: c.DataDir})
	if err != nil {
		return nil, err
	}
	if _, err := st.Migrate(ctx); err != nil {
		_ = st.Close()
		return nil, err
	}
	return st, nil
}

// box returns the sealer of provider keys: SLUICE_MASTER_KEY, or with the
// embedded store a key file in the data dir (created with mode 0600). With
// a previous key (SLUICE_MASTER_KEY_PREVIOUS or --master-key-previous-file)
// it also opens values sealed with that key: a rotation in progress.
func (c *config) box() (*secret.Box, error) {
	b, err := c.currentBox()
	if err != nil {
		return nil, err
	}
	prev, err := c.previousBox()
	if err != nil || prev == nil {
		return b, err
	}
	if prev.KeyID() == b.KeyID() {
		return nil, errors.New("the previous master key is the current one: set SLUICE_MASTER_KEY to the new key and the previous key to the old one")
	}
	return b.WithPrevious(prev), nil
}

func (c *config) currentBox() (*secret.Box, error) {
	b, err := keyBox(c.MasterKey, "SLUICE_MASTER_KEY", c.MasterKeyFile, "--master-key-file")
	if b != nil || err != nil {
		return b, err
	}
	if c.DatabaseURL != "" {
		return nil, secret.ErrNoKey
	}
	k, err := secret.LoadOrCreateKeyFile(filepath.Join(c.DataDir, "master.key"))
	if err != nil {
		return nil, err
	}
	return secret.NewBox(k)
}

// previousBox returns the box of the previous master key, or nil when none
// is set. The key comes from SLUICE_MASTER_KEY_PREVIOUS or from the file
// --master-key-previous-file names, not both.
func (c *config) previousBox() (*secret.Box, error) {
	return keyBox(c.MasterKeyPrevious, "SLUICE_MASTER_KEY_PREVIOUS", c.MasterKeyPreviousFile, "--master-key-previous-file")
}

// keyBox returns the box of a master key given in the environment variable
// env (its value raw) or in the file the flag names, not both; nil when
// neither is set. Errors name the source, never the key.
func keyBox(raw, env, file, flag string) (*secret.Box, error) {
	from := env
	switch {
	case raw != "" && file != "":
		return nil, fmt.Errorf("set the key once: %s or %s, not both", env, flag)
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", flag, err)
		}
		raw, from = string(data), flag
	case raw == "":
		return nil, nil
	}
	k, err := secret.ParseKey(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return secret.NewBox(k)
}

// withConfig wraps a command's run function with flag/env parsing.
func withConfig(c *config, run func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := applyEnv(cmd.Flags()); err != nil {
			return err
		}
		c.loadEnvSecrets()
		return run(cmd, args)
	}
}
