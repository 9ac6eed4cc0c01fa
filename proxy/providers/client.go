package providers

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/ssrf"
)

// Sizes and durations of the client that are not worth a setting.
const (
	// maxErrorBody bounds what is read of an error answer: enough for any
	// provider's JSON error, small enough that a hostile upstream cannot
	// make the gateway buffer much.
	maxErrorBody = 64 << 10
	// maxMessage is the length an upstream message is cut to.
	maxMessage = 500
	// defaultCallTimeout bounds a call that has neither a deadline nor a
	// context deadline, so that no call can hang forever.
	defaultCallTimeout = 10 * time.Minute
	// maxRetryAfter caps an upstream's Retry-After.
	maxRetryAfter = time.Hour
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
	// Header holds headers to propagate (traceparent). Hop-by-hop,
	// credential and framing headers, and values with control characters,
	// are dropped.
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
		return 0, &Error{Err: errStreamClosed}
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
	return n, &Error{Err: scrubError(err, s.key)}
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
		_ = s.body.CloseWithError(errStreamClosed)
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

var errStreamClosed = errors.New("stream already closed")

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

// trackedConn is every connection the client dials. Its LocalAddr leads
// back to it through fasthttp's Response.LocalAddr, which lets a stream
// move the read deadline fasthttp set for the headers, and apply the idle
// limit per read, on the raw connection (also under TLS).
type trackedConn struct {
	net.Conn
	laddr  connAddr
	broken atomic.Bool // a read failed (EOF included): never reuse
}

func (c *trackedConn) LocalAddr() net.Addr { return &c.laddr }

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.broken.Store(true)
	}
	return n, err
}

// connAddr is a connection's local address that knows its connection.
type connAddr struct {
	net.Addr
	conn *trackedConn
}

// ForbiddenAddrError is the dial error for an upstream host that resolves
// to an address the gateway must not connect to.
type ForbiddenAddrError struct {
	Host   string
	Addr   netip.Addr
	Reason string // "link-local", "loopback", …
}

func (e *ForbiddenAddrError) Error() string {
	return fmt.Sprintf("upstream host %s resolves to a %s address (%s), which is not allowed", e.Host, e.Reason, e.Addr)
}

// dial resolves addr, refuses it when any of its addresses is forbidden,
// connects to the checked address itself (so a second resolution cannot
// differ), and with useTLS does the handshake within the same timeout.
func (c *Client) dial(addr string, timeout time.Duration, useTLS bool) (net.Conn, error) {
	if timeout <= 0 || timeout > c.cfg.DialTimeout {
		timeout = c.cfg.DialTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("invalid port in %q", addr)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = c.cfg.Resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	for _, ip := range ips {
		if why := forbidden(ip, c.cfg.AllowPrivate); why != "" {
			return nil, &ForbiddenAddrError{Host: host, Addr: ip, Reason: why}
		}
	}
	d := net.Dialer{Control: c.controlDial}
	var raw net.Conn
	for _, ip := range ips {
		if raw, err = d.DialContext(ctx, "tcp", netip.AddrPortFrom(ip.Unmap(), uint16(port)).String()); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: raw}
	tc.laddr = connAddr{Addr: raw.LocalAddr(), conn: tc}
	if !useTLS {
		return tc, nil
	}
	cfg := c.cfg.TLSConfig.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	conn := tls.Client(tc, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		_ = tc.Close()
		return nil, err
	}
	return conn, nil
}

// forbidden says why an upstream address is refused, or "" when it is
// allowed: the rule of package ssrf, the same the admin API applies to a
// key's base_url.
func forbidden(a netip.Addr, allowPrivate bool) string {
	return ssrf.Reason(a, allowPrivate)
}

// controlDial is the dialer's last word: it judges the address the socket
// is about to connect to, whatever resolved it, so that no code path can
// reach a refused address (the resolved addresses were checked before).
func (c *Client) controlDial(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s %s: not an IP address and port", network, address)
	}
	if why := forbidden(ap.Addr(), c.cfg.AllowPrivate); why != "" {
		return &ForbiddenAddrError{Host: ap.Addr().String(), Addr: ap.Addr(), Reason: why}
	}
	return nil
}

// transportError maps a failed fasthttp call to an *Error.
func (c *Client) transportError(ctx context.Context, err error, key secret.Value) *Error {
	switch {
	case ctx.Err() != nil:
		return ctxError(ctx)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return &Error{Status: http.StatusBadGateway,
			Message: fmt.Sprintf("the upstream answer is larger than %d bytes", c.cfg.MaxResponseBytes)}
	}
	return &Error{Timeout: isTimeout(err), Err: scrubError(err, key)}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, fasthttp.ErrDialTimeout) ||
		errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &ne) && ne.Timeout()
}

// statusError builds the *Error of a non-2xx answer.
func statusError(status int, h *fasthttp.ResponseHeader, body []byte, key secret.Value) *Error {
	e := &Error{Status: status, RetryAfter: retryAfter(h, time.Now())}
	if status >= 300 && status < 400 {
		e.Message = "the upstream answered with a redirect, which is not followed"
		return e
	}
	e.KeyRejected = status == http.StatusUnauthorized || status == http.StatusForbidden ||
		status == http.StatusBadRequest && bytes.Contains(body, []byte(`"API_KEY_INVALID"`))
	e.Message = scrub(errorMessage(body), key)
	if e.Message == "" {
		e.Message = strings.ToLower(http.StatusText(status))
	}
	return e
}

// retryAfter reads retry-after-ms (OpenAI, more precise) or Retry-After
// (seconds or an HTTP date).
func retryAfter(h *fasthttp.ResponseHeader, now time.Time) time.Duration {
	var d time.Duration
	if v := h.Peek("Retry-After-Ms"); len(v) > 0 {
		if ms, err := strconv.ParseFloat(string(v), 64); err == nil && ms > 0 {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	} else if v := h.Peek("Retry-After"); len(v) > 0 {
		if s, err := strconv.ParseFloat(string(v), 64); err == nil && s > 0 {
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(string(v)); err == nil {
			d = t.Sub(now)
		}
	}
	return min(max(d, 0), maxRetryAfter)
}

// keyPrefixes start the API keys of common providers; a token starting
// with one is redacted from upstream messages whoever's key it is.
var keyPrefixes = []string{"sk-", "sk_", "gsk_", "xai-", "pplx-", "csk-", "AIza", "fw_"}

const redacted = "[REDACTED]"

// scrub makes an upstream message safe to log and return: control
// characters become spaces, invalid UTF-8 is replaced, and it redacts the
// token after "Bearer ", tokens that look like API keys, and any run of 8
// or more characters of key; the result is cut to 500 bytes.
func scrub(msg string, key secret.Value) string {
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	if len(msg) > 8*maxMessage {
		msg = msg[:8*maxMessage]
	}
	b := []byte(msg)
	for i, c := range b {
		if c < 0x20 || c == 0x7f {
			b[i] = ' '
		}
	}
	cut := make([]bool, len(b)) // bytes to redact
	mark := func(from, to int) {
		for i := from; i < to; i++ {
			cut[i] = true
		}
	}
	for i := 0; i < len(b); i++ {
		if i > 0 && isKeyChar(b[i-1]) {
			continue // only at the start of a token
		}
		rest := b[i:]
		if len(rest) > 7 && strings.EqualFold(string(rest[:7]), "bearer ") {
			j := i + 7
			for j < len(b) && b[j] == ' ' {
				j++
			}
			end := tokenEnd(b, j)
			mark(j, end)
			continue
		}
		for _, p := range keyPrefixes {
			if bytes.HasPrefix(rest, []byte(p)) {
				if end := tokenEnd(b, i+len(p)); end-(i+len(p)) >= 6 {
					mark(i, end)
				}
				break
			}
		}
	}
	if k := key.Reveal(); len(k) >= 8 {
		for i := 0; i+8 <= len(b); i++ {
			if strings.Contains(k, string(b[i:i+8])) {
				mark(i, i+8)
			}
		}
	}
	var out []byte
	for i := 0; i < len(b); {
		if !cut[i] {
			out = append(out, b[i])
			i++
			continue
		}
		out = append(out, redacted...)
		for i < len(b) && cut[i] {
			i++
		}
	}
	out = bytes.TrimSpace(out)
	if len(out) > maxMessage {
		n := maxMessage
		for n > 0 && !utf8.RuneStart(out[n]) {
			n--
		}
		out = out[:n]
	}
	return string(out)
}

func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// tokenEnd returns the end of the token starting at i: key characters
// plus the '*' of masked keys and the inner '.' of JWTs.
func tokenEnd(b []byte, i int) int {
	for i < len(b) && (isKeyChar(b[i]) || b[i] == '*' || b[i] == '.') {
		i++
	}
	for i > 0 && b[i-1] == '.' {
		i-- // a full stop ends the sentence, not the token
	}
	return i
}

// scrubbedError is a transport error whose text went through Scrub.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

func scrubError(err error, key secret.Value) error {
	var fe *ForbiddenAddrError
	if errors.As(err, &fe) {
		return err
	}
	return &scrubbedError{msg: scrub(err.Error(), key), err: err}
}
