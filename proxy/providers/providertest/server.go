package providertest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

const (
	// DefaultMaxRecorded is how many of the latest requests Requests keeps
	// when Options.MaxRecorded is 0: plenty for a test, and a bound on the
	// memory of a long benchmark.
	DefaultMaxRecorded = 10000

	// shutdownGrace bounds the wait for open connections when Serve stops.
	// Waits inside the mock (latency, chunk delays) end at shutdown, so
	// this is only reached when a client stops reading.
	shutdownGrace = 5 * time.Second

	// maxBodyBytes is the largest request body read: far above any test's,
	// so a large embeddings batch is never refused by the mock.
	maxBodyBytes = 64 << 20

	// readBufferSize bounds the request line plus headers; 16 KiB holds
	// long bearer tokens and signed headers.
	readBufferSize = 16 << 10
)

// Options configure a Server. The zero value is valid.
type Options struct {
	// Logger receives fasthttp's connection errors (at debug level: clients
	// of a mock disconnect on purpose) and Serve's start. Nil discards.
	Logger *slog.Logger
	// MaxRecorded is how many of the latest requests Requests returns;
	// 0 means DefaultMaxRecorded, a negative value records none. Count
	// counts every request either way.
	MaxRecorded int
}

// Server is a mock upstream model provider. Its methods are safe for
// concurrent use; the zero value is not usable, call New or Start.
type Server struct {
	log    *slog.Logger
	routes map[string]endpoint // built by New, read-only afterwards: no lock
	// prefixRoutes are tried in order when no exact route matches.
	prefixRoutes []prefixRoute
	seq          atomic.Uint64 // numbers response ids
	url          atomic.Pointer[string]
	work         tracker
	pool         sync.Pool // *openAIExchange

	mu       sync.Mutex
	script   []Step
	count    int
	maxRec   int
	recs     []record // a ring once full; head is its oldest entry
	recsHead int
	// cached holds the prompt prefixes written to the mock's prompt
	// cache (caching.go); it grows with the distinct prefixes of a test.
	cached map[string]bool

	// Set by Start: stop ends the serving goroutine, which closes served
	// after storing serveErr.
	stop     context.CancelFunc
	served   chan struct{}
	serveErr error
}

// New returns a Server that answers with the default behaviour until
// Script is called. It serves nothing until Serve (or use Start).
func New(opts Options) *Server {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	maxRec := opts.MaxRecorded
	if maxRec == 0 {
		maxRec = DefaultMaxRecorded
	}
	s := &Server{log: log, maxRec: maxRec, routes: map[string]endpoint{}}
	s.openAIRoutes()
	s.anthropicRoutes()
	s.geminiRoutes()
	s.bedrockRoutes()
	s.azureRoutes()
	s.cohereRoutes()
	return s
}

// Start listens on addr ("127.0.0.1:0" when empty) and serves in a
// goroutine owned by the returned Server until ctx ends or Close is called.
// It returns the base URL, e.g. "http://127.0.0.1:41234", also given by URL.
func Start(ctx context.Context, addr string) (*Server, string, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("listen on %s: %w", addr, err)
	}
	s := New(Options{})
	s.setURL(ln.Addr())
	ctx, s.stop = context.WithCancel(ctx)
	s.served = make(chan struct{})
	go func() {
		defer close(s.served)
		s.serveErr = s.Serve(ctx, ln)
	}()
	return s, s.URL(), nil
}

// Close stops a Server made by Start and waits until its connections and
// streams have ended; it returns Serve's error. It may be called more than
// once. For a Server served by the caller's Serve, it does nothing: cancel
// that context instead.
func (s *Server) Close() error {
	if s.served == nil {
		return nil
	}
	s.stop()
	<-s.served
	return s.serveErr
}

// URL returns the base URL of the listener being served, without /v1
// ("http://127.0.0.1:41234"), or "" before Serve. An unspecified listen
// address is reported as 127.0.0.1.
func (s *Server) URL() string {
	if u := s.url.Load(); u != nil {
		return *u
	}
	return ""
}

func (s *Server) setURL(a net.Addr) {
	u := "http://" + a.String()
	if ta, ok := a.(*net.TCPAddr); ok && (ta.IP == nil || ta.IP.IsUnspecified()) {
		u = "http://" + net.JoinHostPort("127.0.0.1", fmt.Sprint(ta.Port))
	}
	s.url.Store(&u)
}

// Serve serves ln with fasthttp until ctx ends, then shuts down: it stops
// accepting, ends pending waits and streams, and returns once the
// connections and stream goroutines are gone. ln is closed on return. A
// clean stop returns nil.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.setURL(ln.Addr())
	srv := &fasthttp.Server{
		Handler:                      s.Handler(),
		Logger:                       fasthttpLogger{s.log},
		ReadBufferSize:               readBufferSize,
		MaxRequestBodySize:           maxBodyBytes,
		NoDefaultServerHeader:        true,
		DisablePreParseMultipartForm: true,
		CloseOnShutdown:              true,
		SecureErrorLogMessage:        true, // requests carry API keys
	}
	s.log.Info("mock provider serving", "url", s.URL())
	errc := make(chan error, 1) // srv.Serve's one result; buffered so its goroutine never blocks
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		s.work.wait()
		return fmt.Errorf("serve mock provider: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := srv.ShutdownWithContext(sctx)
	// A shutdown that comes before srv.Serve has registered ln does not
	// close it, and srv.Serve would then accept forever: close it here
	// (a second close is harmless), and take the closed listener's error
	// as the clean stop it is.
	_ = ln.Close()
	if serr := <-errc; serr != nil && !errors.Is(serr, net.ErrClosed) && err == nil {
		err = serr
	}
	s.work.wait()
	if err != nil {
		return fmt.Errorf("shut down mock provider: %w", err)
	}
	return nil
}

// Handler returns the Server's request handler, for callers that run their
// own fasthttp.Server (or an in-memory listener). Streams and delays end
// when that server shuts down.
func (s *Server) Handler() fasthttp.RequestHandler { return s.handle }

// endpoint serves one provider path. st is the Step this request took.
type endpoint func(ctx *fasthttp.RequestCtx, st Step)

// prefixRoute serves every path under prefix (wire formats whose paths
// carry parameters: Gemini's /v1beta/models/{m}:…, Azure OpenAI's
// /openai/deployments/{d}/…, Bedrock's /model/{id}/…). The endpoint parses
// the rest of the path itself.
type prefixRoute struct {
	prefix string
	ep     endpoint
}

// handle is the router: the /_mock control paths, then each wire format's
// paths by exact match (map lookups with string(b) do not allocate). Wire
// formats whose paths carry parameters (Gemini's /v1beta/models/{m}:…, Azure
// OpenAI's /openai/deployments/{d}/…) are to be matched here by prefix after
// the exact lookup fails.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	path := ctx.Path()
	if len(path) > 7 && string(path[:7]) == "/_mock/" {
		s.control(ctx, path)
		return
	}
	ep := s.routes[string(path)]
	if ep == nil {
		for _, pr := range s.prefixRoutes {
			if len(path) >= len(pr.prefix) && string(path[:len(pr.prefix)]) == pr.prefix {
				ep = pr.ep
				break
			}
		}
	}
	st := s.record(ctx, ep != nil)
	if ep == nil {
		writeOpenAIError(ctx, fasthttp.StatusNotFound, "Invalid URL ("+string(ctx.Method())+" "+string(path)+")", "invalid_request_error", "")
		return
	}
	ep(ctx, st)
}

// control serves /_mock/stats and /_mock/reset for clients in another
// process. These requests are neither counted nor recorded.
func (s *Server) control(ctx *fasthttp.RequestCtx, path []byte) {
	switch string(path) {
	case "/_mock/stats":
		if !ctx.IsGet() {
			writeOpenAIError(ctx, fasthttp.StatusMethodNotAllowed, "use GET", "invalid_request_error", "")
			return
		}
		ctx.SetContentType("application/json")
		ctx.SetBody(fmt.Appendf(nil, `{"requests":%d}`, s.Count()))
	case "/_mock/reset":
		if !ctx.IsPost() {
			writeOpenAIError(ctx, fasthttp.StatusMethodNotAllowed, "use POST", "invalid_request_error", "")
			return
		}
		s.Reset()
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	default:
		writeOpenAIError(ctx, fasthttp.StatusNotFound, "unknown mock control path "+string(path), "invalid_request_error", "")
	}
}

// sleep waits d before the status line; it returns false, having answered
// 503, when the serving fasthttp.Server shuts down first.
func sleep(ctx *fasthttp.RequestCtx, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		ctx.SetConnectionClose()
		writeOpenAIError(ctx, fasthttp.StatusServiceUnavailable, "mock provider shutting down", "server_error", "")
		return false
	}
}

// tracker counts the goroutines that play streams (fasthttp's stream
// writers and hijacked connections), which fasthttp's shutdown does not wait
// for, so that Serve can. While wait runs it refuses new ones, which avoids
// the WaitGroup rule that Add must not race with Wait.
type tracker struct {
	mu      sync.Mutex
	closing bool
	wg      sync.WaitGroup
}

// enter registers a goroutine; false means shutdown is under way and the
// goroutine should return at once without calling leave.
func (t *tracker) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return false
	}
	t.wg.Add(1)
	return true
}

func (t *tracker) leave() { t.wg.Done() }

func (t *tracker) wait() {
	t.mu.Lock()
	t.closing = true
	t.mu.Unlock()
	t.wg.Wait()
	t.mu.Lock()
	t.closing = false
	t.mu.Unlock()
}

// fasthttpLogger sends fasthttp's messages (mostly clients that hung up) to
// slog at debug level.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	if l.log.Enabled(context.Background(), slog.LevelDebug) {
		l.log.Debug(fmt.Sprintf(format, args...))
	}
}
