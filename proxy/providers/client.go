package providers

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/secret"
)

// Sizes and durations of the client that are not worth a setting.
const (
	// maxErrorBody bounds what is read of an error answer: enough for any
	// provider's JSON error, small enough that a hostile upstream cannot
	// make the gateway buffer much.
	maxErrorBody = 64 << 10
	// MaxMessage is the length an upstream message is cut to.
	MaxMessage = 500
	// defaultCallTimeout bounds a call that has neither a deadline nor a
	// context deadline, so that no call can hang forever.
	defaultCallTimeout = 10 * time.Minute
	// MaxRetryAfter caps an upstream's Retry-After.
	MaxRetryAfter = time.Hour
	// drainWait and drainMax bound Finish: after the last event, what is
	// left of the body (usually just the chunked terminator, already
	// buffered) is read so the connection can be reused.
	drainWait = 100 * time.Millisecond
	drainMax  = 64 << 10
	// readBufferSize also bounds the response headers. OpenAI's answers
	// carry a dozen rate-limit headers and Cloudflare cookies; 4 KiB, the
	// fasthttp default, is too tight.
	readBufferSize = 16 << 10
)

// Resolver looks up host addresses; net.DefaultResolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ClientConfig configures the upstream HTTP client.
type ClientConfig struct {
	// AllowPrivate lets upstreams live on loopback and private addresses
	// (self-hosted models). Link-local, metadata and non-unicast addresses
	// are refused regardless.
	AllowPrivate bool
	// MaxConnsPerHost bounds the connections to one upstream host (512).
	MaxConnsPerHost int
	// DialTimeout bounds resolving, connecting and the TLS handshake (5 s).
	DialTimeout time.Duration
	// FirstByteTimeout bounds the wait for a stream's status line and
	// headers (60 s). A non-streamed call sends nothing until its answer is
	// complete, so only its deadline bounds it.
	FirstByteTimeout time.Duration
	// IdleTimeout bounds the silence between two reads of a stream (60 s).
	IdleTimeout time.Duration
	// MaxResponseBytes bounds a non-streamed answer (32 MiB).
	MaxResponseBytes int
	// UserAgent is sent upstream ("sluice").
	UserAgent string
	// Resolver resolves upstream host names (net.DefaultResolver).
	Resolver Resolver
	// TLSConfig is the base TLS configuration (system roots, TLS 1.2+).
	TLSConfig *tls.Config
}

// Validate reports a setting that cannot work; zero values mean defaults.
func (c ClientConfig) Validate() error {
	switch {
	case c.MaxConnsPerHost < 0:
		return errors.New("max conns per host must not be negative")
	case c.DialTimeout < 0, c.FirstByteTimeout < 0, c.IdleTimeout < 0:
		return errors.New("upstream timeouts must not be negative")
	case c.MaxResponseBytes < 0:
		return errors.New("max response bytes must not be negative")
	}
	return nil
}

func (c ClientConfig) withDefaults() ClientConfig {
	if c.MaxConnsPerHost <= 0 {
		c.MaxConnsPerHost = 512
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 5 * time.Second
	}
	if c.FirstByteTimeout <= 0 {
		c.FirstByteTimeout = 60 * time.Second
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 60 * time.Second
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = 32 << 20
	}
	if c.UserAgent == "" {
		c.UserAgent = "sluice"
	}
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
	if c.TLSConfig == nil {
		c.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	} else {
		c.TLSConfig = c.TLSConfig.Clone()
	}
	if c.TLSConfig.ClientSessionCache == nil {
		c.TLSConfig.ClientSessionCache = tls.NewLRUClientSessionCache(1024)
	}
	return c
}

// Client is the one HTTP client for upstream calls, shared by all
// adapters. It never follows redirects, refuses forbidden addresses at
// connect time (against DNS rebinding), and scrubs secrets from errors.
type Client struct {
	cfg ClientConfig
	fc  *fasthttp.Client
}

// NewClient returns a Client; zero fields of cfg take their defaults.
func NewClient(cfg ClientConfig) *Client {
	c := &Client{cfg: cfg.withDefaults()}
	c.fc = &fasthttp.Client{
		Name:                     c.cfg.UserAgent,
		NoDefaultUserAgentHeader: true,
		// Plain dialer as a fallback: fasthttp then does TLS itself.
		// ConfigureClient replaces it with one that does TLS within the
		// dial timeout.
		DialTimeout: func(addr string, timeout time.Duration) (net.Conn, error) {
			return c.dial(addr, timeout, false)
		},
		ConfigureClient: func(hc *fasthttp.HostClient) error {
			useTLS := hc.IsTLS
			hc.DialTimeout = func(addr string, timeout time.Duration) (net.Conn, error) {
				return c.dial(addr, timeout, useTLS)
			}
			return nil
		},
		TLSConfig:          c.cfg.TLSConfig,
		MaxConnsPerHost:    c.cfg.MaxConnsPerHost,
		MaxConnWaitTimeout: c.cfg.DialTimeout,
		// One attempt: POSTs are not idempotent, and retrying is the
		// proxy's decision.
		MaxIdemponentCallAttempts: 1,
		MaxResponseBodySize:       c.cfg.MaxResponseBytes,
		ReadBufferSize:            readBufferSize,
		// The URL is an admin-validated base URL plus a fixed path: send
		// it as written.
		DisablePathNormalizing: true,
		// LIFO keeps the fewest connections warm under uneven load.
		ConnPoolStrategy: fasthttp.LIFO,
		// Closes a call's connection when its context ends
		// (providers/transport.go).
		Transport: cancelTransport{},
	}
	return c
}

// MaxResponseBytes is the most a non-streamed answer may hold; a codec
// that reads a streamed body whole holds it to the same bound.
func (c *Client) MaxResponseBytes() int { return c.cfg.MaxResponseBytes }

// CloseIdleConnections closes pooled keep-alive connections, e.g. at
// shutdown.
func (c *Client) CloseIdleConnections() { c.fc.CloseIdleConnections() }

// HTTPRequest is one upstream call.
type HTTPRequest struct {
	// Method defaults to POST.
	Method string
	// BaseURL and Path make the URL: BaseURL without its trailing slashes,
	// "/", then Path ("chat/completions").
	BaseURL string
	Path    string
	// Key is the credential, sent as KeyHeader: KeyPrefix+Key (by default
	// "Authorization: Bearer <key>"); nothing is sent when it is empty. The
	// client scrubs it from every error.
	Key       secret.Value
	KeyHeader string
	KeyPrefix string
	// ContentType defaults to application/json.
	ContentType string
	// Traceparent is sent as the traceparent header when it is not empty
	// and has no control character.
	Traceparent string
	// Header holds other headers to propagate. Hop-by-hop, credential and
	// framing headers, and values with control characters, are dropped.
	Header http.Header
	// Body is sent as it is; the client does not keep it after Do or
	// Stream returns.
	Body []byte
	// Deadline bounds the call; the context's deadline applies too.
	Deadline time.Time
}

// HTTPResponse is a complete 2xx answer.
type HTTPResponse struct {
	Status int
	// Body is a copy owned by the caller.
	Body []byte
}

// Do sends req and reads the whole answer, up to MaxResponseBytes. A
// status outside 2xx (redirects included: they are never followed) is an
// *Error carrying the status, the upstream's scrubbed message and its
// Retry-After; transport failures are an *Error with Status 0.
//
// Cancellation: when ctx ends during the call, the call's connection is
// closed (providers/transport.go), so the call returns at once with an
// *Error wrapping the context's cause, and the upstream sees its client
// go away and stops generating. ctx's deadline also shortens the call's.
// An answer that arrived complete is returned even when ctx ended
// meanwhile, because the upstream billed it.
func (c *Client) Do(ctx context.Context, req *HTTPRequest) (*HTTPResponse, error) {
	deadline, err := callDeadline(ctx, req.Deadline)
	if err != nil {
		return nil, err
	}
	fr := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(fr)
	defer fasthttp.ReleaseResponse(resp)
	if err := c.prepare(fr, req); err != nil {
		return nil, err
	}
	fr.SetUserValue(ctxKey{}, ctx) // for cancelTransport; cleared by ReleaseRequest
	if err := c.fc.DoDeadline(fr, resp, deadline); err != nil {
		return nil, c.transportError(ctx, err, req.Key)
	}
	status := resp.StatusCode()
	if status < 200 || status > 299 {
		body := resp.Body()
		return nil, statusError(status, &resp.Header, body[:min(len(body), maxErrorBody)], req.Key)
	}
	// Copy out: resp's buffer goes back to the pool.
	return &HTTPResponse{Status: status, Body: append([]byte(nil), resp.Body()...)}, nil
}

// Stream sends req and returns once the status line and headers arrived,
// within FirstByteTimeout. A status outside 2xx is an *Error as for Do,
// read from at most 64 KiB of the body, so an error before the first byte
// keeps its real status. The caller must Close (or Finish) the stream.
//
// After the headers, each Read must see data within IdleTimeout and the
// whole stream must end by the deadline; otherwise Read fails with an
// *Error whose Timeout is set. Cancelling ctx closes the connection and
// so interrupts a Read in progress; before the headers, a cancellation
// takes effect when they arrive or at the first-byte timeout (the body of
// a stream is handed over by fasthttp's own transport, which cannot be
// interrupted; see providers/transport.go).
func (c *Client) Stream(ctx context.Context, req *HTTPRequest) (*StreamResponse, error) {
	deadline, err := callDeadline(ctx, req.Deadline)
	if err != nil {
		return nil, err
	}
	fr := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(fr)
	if err := c.prepare(fr, req); err != nil {
		return nil, err
	}
	resp := fasthttp.AcquireResponse()
	resp.StreamBody = true
	// fasthttp keeps the deadline it is given on the connection while the
	// body streams; it is moved to the real deadline below.
	firstByte := time.Now().Add(c.cfg.FirstByteTimeout)
	if deadline.Before(firstByte) {
		firstByte = deadline
	}
	if err := c.fc.DoDeadline(fr, resp, firstByte); err != nil {
		fasthttp.ReleaseResponse(resp)
		return nil, c.transportError(ctx, err, req.Key)
	}
	if err := ctx.Err(); err != nil {
		fasthttp.ReleaseResponse(resp) // closes the unread body's connection
		return nil, ctxError(ctx)
	}
	status := resp.StatusCode()
	body, _ := resp.BodyStream().(fasthttp.ReadCloserWithError)
	if status < 200 || status > 299 {
		var msg []byte
		if body != nil {
			msg, _ = io.ReadAll(io.LimitReader(body, maxErrorBody))
		}
		err := statusError(status, &resp.Header, msg, req.Key)
		fasthttp.ReleaseResponse(resp)
		return nil, err
	}
	// The connection is ours (see trackedConn) even under TLS, whose
	// LocalAddr is the underlying connection's.
	addr, ok := resp.LocalAddr().(*connAddr)
	if body == nil || !ok {
		fasthttp.ReleaseResponse(resp)
		return nil, &Error{Err: errors.New("streamed response without a tracked connection")}
	}
	s := &StreamResponse{
		Status:   status,
		resp:     resp,
		body:     body,
		conn:     addr.conn,
		idle:     c.cfg.IdleTimeout,
		deadline: deadline,
		ctx:      ctx,
		key:      req.Key,
	}
	if ctx.Done() != nil {
		s.watchDone = make(chan struct{})
		s.stopWatch = context.AfterFunc(ctx, func() {
			defer close(s.watchDone)
			// Safe while a Read is blocked: fasthttp closes the
			// connection to interrupt it, then releases the body.
			_ = body.CloseWithError(context.Cause(ctx))
		})
	}
	return s, nil
}

// StreamResponse is an upstream answer whose body is being streamed.
// Read and Close must be called from one goroutine; to interrupt a Read
// from elsewhere, cancel the context given to Stream.
type StreamResponse struct {
	Status int

	resp     *fasthttp.Response
	body     fasthttp.ReadCloserWithError
	conn     *trackedConn
	idle     time.Duration
	deadline time.Time
	ctx      context.Context
	key      secret.Value

	stopWatch func() bool
	watchDone chan struct{} // closed when the context watcher has finished

	eof, closed bool
}

// Header returns a response header; the slice is valid until Close.
func (s *StreamResponse) Header(name string) []byte { return s.resp.Header.Peek(name) }

// Read reads the body. Errors other than io.EOF are *Error.
func (s *StreamResponse) Read(p []byte) (int, error) {
	if s.closed {
		return 0, &Error{Err: ErrStreamClosed}
	}
	if s.eof {
		return 0, io.EOF
	}
	// The idle limit, capped by the deadline. Under TLS the raw
	// connection's deadline is the one that counts.
	d := time.Now().Add(s.idle)
	if d.After(s.deadline) {
		d = s.deadline
	}
	_ = s.conn.SetReadDeadline(d)
	n, err := s.body.Read(p)
	switch {
	case err == nil:
		return n, nil
	case err == io.EOF:
		s.eof = true
		return n, io.EOF
	case s.ctx.Err() != nil:
		return n, ctxError(s.ctx)
	case isTimeout(err):
		if !time.Now().Before(s.deadline) {
			return n, &Error{Timeout: true, Err: os.ErrDeadlineExceeded}
		}
		return n, &Error{Timeout: true, Err: ErrStreamIdle}
	}
	return n, &Error{Err: ScrubError(err, s.key)}
}

// Close ends the stream. Unless the body was read to its end, it closes
// the connection, which is how an upstream learns to stop generating. It
// is safe to call twice.
func (s *StreamResponse) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.stopWatch != nil && !s.stopWatch() {
		<-s.watchDone
	}
	if !s.eof || s.conn.broken.Load() {
		// fasthttp pools a connection whose body reported io.EOF, and a
		// chunked body cut at a chunk boundary reports just that; so
		// unless Finish saw a clean end, discard the connection.
		_ = s.body.CloseWithError(ErrStreamClosed)
	}
	fasthttp.ReleaseResponse(s.resp) // pools the connection, if still open
	return nil
}

// Finish is Close for a stream whose last event was read: it first reads
// what is left of the body for at most 100 ms and 64 KiB, usually the
// already-buffered chunked terminator, so that the connection can be
// reused instead of closed.
func (s *StreamResponse) Finish() error {
	if !s.closed && !s.eof && s.ctx.Err() == nil {
		_ = s.conn.SetReadDeadline(time.Now().Add(drainWait))
		_, err := io.CopyN(io.Discard, s.body, drainMax)
		s.eof = err == io.EOF
	}
	return s.Close()
}

// ErrStreamIdle is the Err of the *Error returned when a stream stayed
// silent for longer than IdleTimeout.
var ErrStreamIdle = errors.New("upstream stream idle for too long")

// ErrStreamClosed is the Err of the *Error returned when a stream is read
// after Close.
var ErrStreamClosed = errors.New("stream already closed")

// callDeadline is the earlier of the call's and ctx's deadlines, or
// defaultCallTimeout from now when neither has one.
func callDeadline(ctx context.Context, d time.Time) (time.Time, error) {
	if ctx.Err() != nil {
		return time.Time{}, ctxError(ctx)
	}
	if cd, ok := ctx.Deadline(); ok && (d.IsZero() || cd.Before(d)) {
		d = cd
	}
	if d.IsZero() {
		d = time.Now().Add(defaultCallTimeout)
	}
	if !time.Now().Before(d) {
		return time.Time{}, &Error{Timeout: true, Err: os.ErrDeadlineExceeded}
	}
	return d, nil
}

func ctxError(ctx context.Context) *Error {
	return &Error{Err: context.Cause(ctx), Timeout: errors.Is(ctx.Err(), context.DeadlineExceeded)}
}

// uriPool holds scratch buffers for building URLs and header values.
var uriPool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// prepare fills fr from req.
func (c *Client) prepare(fr *fasthttp.Request, req *HTTPRequest) error {
	bp := uriPool.Get().(*[]byte)
	defer uriPool.Put(bp)
	b := append((*bp)[:0], strings.TrimRight(req.BaseURL, "/")...)
	b = append(b, '/')
	b = append(b, strings.TrimLeft(req.Path, "/")...)
	fr.SetRequestURIBytes(b)

	if req.Method == "" {
		fr.Header.SetMethod(fasthttp.MethodPost)
	} else {
		fr.Header.SetMethod(req.Method)
	}
	if req.ContentType == "" {
		fr.Header.SetContentType("application/json")
	} else {
		fr.Header.SetContentType(req.ContentType)
	}
	keyHeader := req.KeyHeader
	if keyHeader == "" {
		keyHeader = "Authorization"
	}
	for name, values := range req.Header {
		if !forwardable(name, keyHeader) {
			continue
		}
		for _, v := range values {
			if validFieldValue(v) {
				fr.Header.Add(name, v)
			}
		}
	}
	if req.Traceparent != "" && validFieldValue(req.Traceparent) {
		fr.Header.Set("traceparent", req.Traceparent)
	}
	if req.Key != "" {
		prefix := req.KeyPrefix
		if req.KeyHeader == "" && prefix == "" {
			prefix = "Bearer "
		}
		// The one place a provider key is revealed: onto the wire.
		b = append(b[:0], prefix...)
		b = append(b, req.Key.Reveal()...)
		if !validFieldValue(b) {
			return &Error{Status: 0, Err: errors.New("the provider key contains characters not allowed in a header")}
		}
		fr.Header.SetBytesV(keyHeader, b)
		clear(b) // the scratch buffer is pooled; do not leave the key in it
	}
	*bp = b[:0]
	fr.SetBodyRaw(req.Body)
	return nil
}

// dropHeaders are never propagated: hop-by-hop, framing, routing and
// credential headers.
var dropHeaders = []string{
	"Authorization", "Proxy-Authorization", "Api-Key", "X-Api-Key", "X-Goog-Api-Key", "Cookie",
	"Host", "Content-Length", "Content-Type", "Transfer-Encoding", "Connection", "Keep-Alive",
	"Proxy-Connection", "Te", "Trailer", "Upgrade", "Expect",
}

func forwardable(name, keyHeader string) bool {
	if name == "" || strings.EqualFold(name, keyHeader) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return false
		}
	}
	for _, d := range dropHeaders {
		if strings.EqualFold(name, d) {
			return false
		}
	}
	return true
}

func isTokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// validFieldValue reports whether v may be sent as a header value (RFC
// 9110 field-value: no control characters but HTAB). fasthttp does not
// check values the application sets (fasthttp #875, #1794).
func validFieldValue[T string | []byte](v T) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
