// Package proxy is Sluice's front door: one fasthttp listener that answers
// /healthz itself, hands /v1/... to the inference handler and everything else
// (/admin/..., the dashboard at /) to the net/http admin handler in-process.
//
// The server owns what every path shares: a request id on every response,
// the body and header limits, the error shape of requests that could not be
// read, panic recovery and graceful shutdown.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/sluicehq/sluice/internal/apierr"
)

// Defaults of Config.
const (
	DefaultListen        = ":8080"
	DefaultMaxBodyBytes  = 10 << 20 // 10 MiB, CONTRACT §3
	DefaultReadTimeout   = 30 * time.Second
	DefaultWriteTimeout  = 10 * time.Minute // long enough for a slow streamed completion
	DefaultIdleTimeout   = 2 * time.Minute
	DefaultShutdownGrace = 30 * time.Second
	DefaultConcurrency   = 10000

	// concurrencySlack is how far past Concurrency fasthttp's own cap is
	// set: the listener's count drops when a connection is closed, a
	// moment after fasthttp's worker lets it go.
	concurrencySlack = 64

	// readBufferSize bounds the request line plus headers: 16 KiB holds any
	// normal request (long bearer tokens, a few cookies); a larger head is
	// answered 431.
	readBufferSize = 16 << 10

	// healthTimeout bounds one call of Options.Health.
	healthTimeout = 5 * time.Second

	// An oversized or refused request is read and discarded after its
	// error answer (proxy/linger.go), up to lingerBodies times the body
	// limit or lingerMinBytes, whichever is more, and for at most the read
	// timeout; beyond that the connection is reset.
	lingerBodies   = 4
	lingerMinBytes = 64 << 20
)

// Config is the listener's configuration. The zero value is valid after
// Validate, which fills the defaults.
type Config struct {
	// Listen is the address ListenAndServe binds; default ":8080".
	Listen string
	// MaxBodyBytes is the largest request body accepted; larger ones are
	// answered 413 body_too_large. Default 10 MiB.
	MaxBodyBytes int
	// ReadTimeout bounds reading a request's header and body; default 30s.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing a response, a whole stream included;
	// default 10m.
	WriteTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a keep-alive
	// connection; default 2m.
	IdleTimeout time.Duration
	// ShutdownGrace is how long in-flight requests may run after shutdown
	// begins; default 30s.
	ShutdownGrace time.Duration
	// DrainDelay is how long the server keeps accepting and serving after
	// its context ends, with /healthz answering 503 (status unavailable,
	// check "shutdown"), before the listener closes and ShutdownGrace
	// begins: long enough for a load balancer or Kubernetes to see the
	// failing readiness probe and stop sending new requests. Default 0:
	// the listener closes at once.
	DrainDelay time.Duration
	// Concurrency is the maximum number of connections served at once;
	// default 10000. Connections beyond it are answered 503 and closed.
	Concurrency int
}

// Validate fills the defaults of unset fields and reports an invalid one.
func (c *Config) Validate() error {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("listen address %q: %w", c.Listen, err)
	}
	type field struct {
		name string
		v    *time.Duration
		def  time.Duration
	}
	for _, f := range []field{
		{"read timeout", &c.ReadTimeout, DefaultReadTimeout},
		{"write timeout", &c.WriteTimeout, DefaultWriteTimeout},
		{"idle timeout", &c.IdleTimeout, DefaultIdleTimeout},
		{"shutdown grace", &c.ShutdownGrace, DefaultShutdownGrace},
	} {
		switch {
		case *f.v < 0:
			return fmt.Errorf("%s %s is negative", f.name, *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	if c.DrainDelay < 0 {
		return fmt.Errorf("drain delay %s is negative", c.DrainDelay)
	}
	switch {
	case c.MaxBodyBytes < 0:
		return fmt.Errorf("max body bytes %d is negative", c.MaxBodyBytes)
	case c.MaxBodyBytes == 0:
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	switch {
	case c.Concurrency < 0:
		return fmt.Errorf("concurrency %d is negative", c.Concurrency)
	case c.Concurrency == 0:
		c.Concurrency = DefaultConcurrency
	}
	return nil
}

// Options are the parts New wires together.
type Options struct {
	Config Config
	// Admin serves /admin/... and every path that is neither /v1 nor
	// /healthz. Nil (a proxy-only process): those paths answer 404.
	Admin http.Handler
	// Inference serves /v1/.... Nil: those paths answer 501 not_implemented.
	Inference fasthttp.RequestHandler
	// Health reports the process's health for /healthz; Version and UptimeS
	// are filled by the server. Nil: always ok.
	Health func(ctx context.Context) Health
	// Logger receives panics and fasthttp's connection errors; nil means
	// slog.Default().
	Logger *slog.Logger
	// Version is reported by /healthz.
	Version string
	// EndStreams is called when the shutdown grace period is over with
	// requests still running: it ends open inference streams with an SSE
	// error event and returns once they have written it.
	EndStreams func()
	// Metrics writes the process's metrics in the Prometheus text format
	// for GET /metrics. Nil: /metrics is not served by the proxy (it goes
	// to Admin like any other path).
	Metrics func(w io.Writer)
}

// Server is the one listener of a Sluice process.
type Server struct {
	cfg       Config
	log       *slog.Logger
	version   string
	started   time.Time
	health    func(ctx context.Context) Health
	checked   healthCache // the last answer of health, reused for a second
	inference fasthttp.RequestHandler
	admin     fasthttp.RequestHandler
	srv       *fasthttp.Server
	endStream func()
	metrics   func(w io.Writer)
	// draining is set when the server's context ends: /healthz answers
	// 503 from then on and responses close their connections.
	draining atomic.Bool

	// hardStop is cancelled when the shutdown grace has run out (or Serve
	// returned): admin requests see their context cancelled then, and not
	// when shutdown merely begins, as fasthttp's RequestCtx.Done would do.
	hardStop       context.Context
	cancelHardStop context.CancelFunc
}

// New validates opts.Config and builds the server.
func New(opts Options) (*Server, error) {
	cfg := opts.Config
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{
		cfg:       cfg,
		log:       log,
		version:   opts.Version,
		started:   time.Now(),
		health:    opts.Health,
		inference: opts.Inference,
		endStream: opts.EndStreams,
		metrics:   opts.Metrics,
	}
	s.hardStop, s.cancelHardStop = context.WithCancel(context.Background())
	if s.inference == nil {
		s.inference = notEnabled
	}
	if opts.Admin != nil {
		s.admin = fasthttpadaptor.NewFastHTTPHandler(s.detachShutdown(opts.Admin))
	} else {
		s.admin = noAdmin
	}
	s.srv = &fasthttp.Server{
		Handler:      s.Handler(),
		ErrorHandler: s.readError,
		Logger:       fasthttpLogger{log},
		// The listener refuses connections past cfg.Concurrency with a JSON
		// 503 (proxy/linger.go); fasthttp's own refusal, plain text, is
		// only a backstop for connections closed but not yet counted off.
		Concurrency:           cfg.Concurrency + concurrencySlack,
		ReadBufferSize:        readBufferSize,
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.WriteTimeout,
		IdleTimeout:           cfg.IdleTimeout,
		MaxRequestBodySize:    cfg.MaxBodyBytes,
		MaxConnsPerIP:         0,
		NoDefaultServerHeader: true,
		NoDefaultDate:         false,
		ReduceMemoryUsage:     false,
		StreamRequestBody:     false,
		// Bodies are relayed as bytes; nothing here wants a parsed form.
		DisablePreParseMultipartForm: true,
		CloseOnShutdown:              true,
		SecureErrorLogMessage:        true, // request bytes may hold credentials
	}
	return s, nil
}

// ListenAndServe listens on Config.Listen and serves until ctx is cancelled.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Listen, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves ln until ctx is cancelled, then shuts down gracefully: it
// stops accepting, closes idle connections and waits up to ShutdownGrace for
// in-flight requests. It returns nil on a clean shutdown. Serve takes
// ownership of ln and may be called once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer s.cancelHardStop()

	stopLinger, cancelLinger := context.WithCancel(context.Background())
	defer cancelLinger()
	ln = &lingerListener{Listener: ln, stop: stopLinger, maxConns: int64(s.cfg.Concurrency), maxTime: s.cfg.ReadTimeout,
		maxBytes: max(lingerBodies*int64(s.cfg.MaxBodyBytes), lingerMinBytes)}
	served := make(chan error, 1) // one send, by the serving goroutine
	// watchListener lets a handler notice its client going away
	// (proxy/clientconn.go).
	go func() { served <- s.srv.Serve(watchListener{ln}) }()

	select {
	case err := <-served:
		// Serve stopped on its own: the listener failed.
		_ = s.srv.Shutdown() // connections still open finish on their own
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}

	s.drain()
	cancelLinger()
	graceCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownGrace)
	defer cancel()
	shutErr := s.srv.ShutdownWithContext(graceCtx)
	// fasthttp's shutdown closes only a listener its Serve has registered:
	// when the context ends before the serving goroutine got that far,
	// shutdown returns at once and Serve would then serve on. Closing the
	// listener here too ends it either way (a second close only errs).
	_ = ln.Close()
	s.cancelHardStop()
	if errors.Is(shutErr, context.DeadlineExceeded) && s.endStream != nil {
		// Streams still open after the grace period end with an error
		// event rather than a silent cut; their connections then close.
		s.endStream()
		shutErr = nil
	}
	serveErr := <-served
	switch {
	case errors.Is(shutErr, context.DeadlineExceeded):
		return fmt.Errorf("shutdown: requests still running after %s", s.cfg.ShutdownGrace)
	case shutErr != nil:
		return fmt.Errorf("shutdown: %w", shutErr)
	case serveErr != nil:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), serveErr)
	}
	return nil
}

// drain marks the server as draining and, for Config.DrainDelay, serves
// on with /healthz failing, so that load balancers take this process out
// of rotation before its listener closes.
func (s *Server) drain() {
	s.draining.Store(true)
	if s.cfg.DrainDelay <= 0 {
		return
	}
	s.log.Info("draining: /healthz answers 503 until the listener closes", "drain_delay", s.cfg.DrainDelay.String())
	t := time.NewTimer(s.cfg.DrainDelay)
	defer t.Stop()
	<-t.C
}

// Handler returns the routing handler, for in-process tests and embedding.
func (s *Server) Handler() fasthttp.RequestHandler {
	return s.serve
}

// serve routes one request.
func (s *Server) serve(ctx *fasthttp.RequestCtx) {
	id := newRequestID()
	ctx.Request.Header.SetBytesV(RequestIDHeader, id[:])
	defer func() {
		if v := recover(); v != nil {
			// The panic value may quote request bytes: it is redacted like
			// fasthttp's lines.
			s.log.Error("handler panicked", "request_id", string(id[:]), "path", string(ctx.Path()),
				"panic", redactLogText(fmt.Sprint(v)))
			ctx.Response.Reset()
			writeError(ctx, apierr.Internal())
		}
		// Set last so a handler that replaced the response cannot drop it.
		ctx.Response.Header.SetBytesV(RequestIDHeader, id[:])
	}()

	if e := checkHeaders(&ctx.Request.Header); e != nil {
		writeError(ctx, e)
		ctx.SetConnectionClose()
		lingerOnClose(ctx)
		return
	}
	if e := checkFraming(ctx.Request.Header.RawHeaders()); e != nil {
		writeError(ctx, e)
		ctx.SetConnectionClose()
		lingerOnClose(ctx)
		return
	}

	if s.draining.Load() {
		// Keep-alive clients (a load balancer's pool) reconnect, to a
		// replica that is not going away.
		ctx.SetConnectionClose()
	}
	path := ctx.Path()
	switch {
	case string(path) == "/healthz":
		s.serveHealth(ctx)
	case string(path) == "/metrics" && s.metrics != nil:
		s.serveMetrics(ctx)
	case hasSegmentPrefix(path, "/v1"):
		s.inference(ctx)
	default:
		s.admin(ctx)
	}
}

// serveMetrics answers /metrics in the Prometheus text format. Like
// /healthz it needs no credential, so no metric may carry a secret or a
// tenant's data.
func (s *Server) serveMetrics(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsHead() {
		writeError(ctx, apierr.MethodNotAllowed("GET, HEAD"))
		return
	}
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	s.metrics(ctx)
}

// hasSegmentPrefix reports whether path is prefix or starts with prefix + "/".
func hasSegmentPrefix(path []byte, prefix string) bool {
	return len(path) >= len(prefix) && string(path[:len(prefix)]) == prefix &&
		(len(path) == len(prefix) || path[len(prefix)] == '/')
}

// checkHeaders rejects a header value with NUL, CR or LF. fasthttp's parser
// already refuses such bytes on the wire; this also covers headers set by
// code in-process, so nothing downstream ever relays one.
func checkHeaders(h *fasthttp.RequestHeader) *apierr.Error {
	for k, v := range h.All() {
		for _, c := range v {
			if c == 0 || c == '\r' || c == '\n' {
				return apierr.New(http.StatusBadRequest, apierr.CodeInvalidRequest,
					"the value of header %q contains a control character", k).WithParam(string(k))
			}
		}
	}
	return nil
}

// notEnabled answers /v1 in a process without the inference proxy.
func notEnabled(ctx *fasthttp.RequestCtx) {
	writeError(ctx, apierr.New(http.StatusNotImplemented, apierr.CodeNotImplemented,
		"the inference proxy is not enabled in this process"))
}

// noAdmin answers admin paths in a process without the admin API.
func noAdmin(ctx *fasthttp.RequestCtx) {
	writeError(ctx, apierr.New(http.StatusNotFound, apierr.CodeNotFound,
		"%s not found: the admin API is not served by this process", ctx.Path()))
}

// detachShutdown gives admin requests a context that keeps the RequestCtx's
// values but is cancelled only at the hard stop, so that shutdown lets an
// in-flight admin request (and its database transaction) finish.
func (s *Server) detachShutdown(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
		defer cancel()
		stop := context.AfterFunc(s.hardStop, cancel)
		defer stop()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}
