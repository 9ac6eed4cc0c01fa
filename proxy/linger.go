package proxy

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/apierr"
)

// Lingering close. When the server answers a request before reading all of
// it (a body over the limit, a header block over the limit, a malformed or
// ambiguous request), the client may still be sending. Closing the socket
// with unread data makes the kernel send a reset, and a client that writes
// the whole request before reading (Python's http.client and requests, the
// openai SDK's httpx) sees EPIPE or ECONNRESET instead of the answer, and
// may retry. So such a connection is closed the way nginx's lingering
// close does it: the answer is flushed, the sending side is shut down
// (FIN), and what the client still sends is read and discarded until it
// closes its side, within bounds of time and bytes; then the socket is
// closed.

// lingerIdle bounds the wait for the client's next bytes while lingering.
const lingerIdle = 5 * time.Second

// lingerListener hands out connections that can linger on close, and
// enforces the server's connection cap: a connection past maxConns is
// answered 503 in the error shape of every other refusal, with
// Retry-After, and closed (fasthttp's own refusal is plain text).
type lingerListener struct {
	net.Listener
	// maxConns caps the connections open at once (0: no cap); open counts
	// them.
	maxConns int64
	open     atomic.Int64
	// stop ends lingering at once (the server is shutting down).
	stop context.Context
	// maxTime and maxBytes bound what one connection lingers for.
	maxTime  time.Duration
	maxBytes int64
}

// Accept wraps the accepted connection.
func (l *lingerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if n := l.open.Add(1); l.maxConns > 0 && n > l.maxConns {
			l.open.Add(-1)
			refuseConn(c)
			continue
		}
		return &lingerConn{Conn: c, l: l}, nil
	}
}

// connLimitAnswer is the whole answer to a connection past the cap.
var connLimitAnswer = func() []byte {
	body := apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "the gateway is serving as many connections as it allows; retry shortly").Body()
	return append([]byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"+
		"Connection: close\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"), body...)
}()

// refuseConn answers a connection past the cap and closes it. The answer
// fits a fresh socket's send buffer; the deadline bounds the write anyway,
// so that a flood of connections costs the accept loop nothing but this.
func refuseConn(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write(connLimitAnswer)
	_ = c.Close()
}

// lingerConn is a connection that lingers on Close once marked.
type lingerConn struct {
	net.Conn
	l      *lingerListener
	linger atomic.Bool
	closed atomic.Bool // counted off the listener's open connections
}

// NetConn returns the wrapped connection (as tls.Conn.NetConn does), for
// code that needs the *net.TCPConn behind ctx.Conn().
func (c *lingerConn) NetConn() net.Conn { return c.Conn }

// Close lingers first when the connection was marked, then closes it.
// fasthttp calls it from the connection's own goroutine; a second call
// (e.g. by shutdown) closes at once, which also ends a lingering read.
func (c *lingerConn) Close() error {
	if c.linger.CompareAndSwap(true, false) {
		c.drain()
	}
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.l.open.Add(-1)
	}
	return err
}

// drain shuts down the sending side and discards what the client sends
// until it closes its side, the bounds are reached or the server stops.
func (c *lingerConn) drain() {
	cw, ok := c.Conn.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	// Shutdown interrupts a read in progress; the loop then sees stop.
	unhook := context.AfterFunc(c.l.stop, func() { _ = c.Conn.SetReadDeadline(time.Now()) })
	defer unhook()
	end := time.Now().Add(c.l.maxTime)
	buf := make([]byte, 32<<10) // one per lingering connection, a rare event
	var n int64
	for n < c.l.maxBytes {
		deadline := time.Now().Add(lingerIdle)
		if deadline.After(end) {
			deadline = end
		}
		if c.Conn.SetReadDeadline(deadline) != nil || c.l.stop.Err() != nil {
			return
		}
		m, err := c.Conn.Read(buf)
		n += int64(m)
		if err != nil {
			return // EOF: the client read the answer and closed
		}
	}
}

// lingerOnClose marks the connection of ctx to linger when it is closed.
// It does nothing for a request that did not come from a lingerListener
// (in-process calls of Handler).
func lingerOnClose(ctx *fasthttp.RequestCtx) {
	if c, ok := findConn[*lingerConn](ctx.Conn()); ok {
		c.linger.Store(true)
	}
}

// findConn returns the first connection of type T in the chain of
// wrappers that starts at c (each wrapper names the next with NetConn):
// the server stacks the lingering and the watched connection.
func findConn[T any](c net.Conn) (T, bool) {
	for c != nil {
		if t, ok := c.(T); ok {
			return t, true
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = u.NetConn()
	}
	var zero T
	return zero, false
}
