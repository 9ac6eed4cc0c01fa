package proxy

import (
	"bufio"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
)

// Clients that go away (docs/security.md, "Client disconnect" and "Slow
// stream readers").
//
// fasthttp does not tell a handler that its client closed the connection:
// it reads the connection only between requests. A streamed answer finds
// out at its next write; a non-streamed one would wait for the whole
// upstream answer and log it 200. So while a non-streamed request waits
// for its upstream, a watcher goroutine reads the client's connection, as
// net/http's server does: a read that ends in EOF or an error means the
// client is gone, and the request's upstream call is cancelled. A byte
// that arrives instead (the next request of a client that pipelines) is
// kept and handed to fasthttp's next read, and the watch ends there.
//
// Cost: one goroutine and two deadline updates per non-streamed request
// (the figures are in the commit that added it). A client that half-closes
// its connection after sending the request (shutdown(SHUT_WR)) reads as
// gone, as with net/http.

// watchListener wraps the listener the server accepts from, so that
// client connections can be watched: those of the net package (TCP, Unix),
// whose read deadline interrupts a Read in progress, which is how a watch
// ends. Others (fasthttputil's in-memory pipes) are served unwatched.
type watchListener struct{ net.Listener }

func (l watchListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if _, ok := findConn[syscall.Conn](c); !ok {
		return c, nil
	}
	return &clientConn{Conn: c}, nil
}

// clientConn is a client connection that a handler can watch for its
// client going away. fasthttp serves a connection from one goroutine, so
// at most one watch runs at a time.
type clientConn struct {
	net.Conn

	// ahead holds what the watcher read: the start of the client's next
	// request, owed to fasthttp's next Read. Written by the watcher,
	// read after stopWatch (the WaitGroup orders the two).
	ahead []byte
	one   [1]byte

	onGone   *upCancel
	stopping atomic.Bool
	gone     atomic.Bool
	wg       sync.WaitGroup
}

// NetConn returns the wrapped connection.
func (c *clientConn) NetConn() net.Conn { return c.Conn }

// Read returns what the watcher read ahead first.
func (c *clientConn) Read(p []byte) (int, error) {
	if len(c.ahead) > 0 {
		n := copy(p, c.ahead)
		c.ahead = c.ahead[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// aLongTimeAgo is a read deadline in the past: it ends a blocked Read.
var aLongTimeAgo = time.Unix(1, 0)

// watchClient starts watching the connection of ctx, when it is one the
// server accepted: if the client goes away before stop, onGone is
// cancelled (from another goroutine). It returns nil for a connection it cannot
// watch (in-process calls of the handler). The caller must call stopWatch
// before the handler returns.
func watchClient(ctx *fasthttp.RequestCtx, onGone *upCancel) *clientConn {
	c, ok := ctx.Conn().(*clientConn)
	if !ok || len(c.ahead) > 0 {
		// A byte read ahead by an earlier watch is still owed to fasthttp
		// (it parsed this request from its buffer): the client is
		// pipelining, so it is there, and a new watch would read over it.
		return nil
	}
	c.onGone = onGone
	c.stopping.Store(false)
	c.gone.Store(false)
	// fasthttp's read deadline for this request's body would end the
	// watch; fasthttp sets its own again before it reads the next request.
	_ = c.Conn.SetReadDeadline(time.Time{})
	c.wg.Add(1)
	go c.watch()
	return c
}

// watch is the watcher: one Read that returns when the client sends
// something, closes the connection, or stopWatch ends it.
func (c *clientConn) watch() {
	defer c.wg.Done()
	n, err := c.Conn.Read(c.one[:])
	switch {
	case n > 0:
		c.ahead = c.one[:n]
	case err != nil && !c.stopping.Load():
		c.gone.Store(true)
		c.onGone.cancel()
	}
}

// stopWatch ends the watch and waits for the watcher; fasthttp may read
// the connection afterwards.
func (c *clientConn) stopWatch() {
	c.stopping.Store(true)
	_ = c.Conn.SetReadDeadline(aLongTimeAgo)
	c.wg.Wait()
	c.onGone = nil
}

// clientGone reports whether the watch saw the client go away.
func (c *clientConn) clientGone() bool { return c != nil && c.gone.Load() }

// clientClosed is the end of a non-streamed request whose client went
// away while its upstream call ran: the call was cancelled, so the request
// is logged 499 client_closed with the usage it may have cost (the
// prompt, estimated; no answer arrived) and flagged partial.
func (h *Inference) clientClosed(c *call) *apierr.Error {
	c.out = outcome{usage: h.estimate(c, llm.Usage{}, nil, nil), billed: true, answered: true}
	return apierr.New(statusClientClosed, apierr.CodeClientClosed, "the client closed the connection before the answer")
}

// statusClientClosed is the status logged for a request whose client went
// away (nginx's 499); it is never sent.
const statusClientClosed = 499

// streamWriter is what a stream writes to its client through: the
// writer fasthttp hands to the stream, with a timer that gives up on a
// client that does not take a write within the stream write timeout. A
// write blocks when the client stops reading (its TCP window is full,
// then fasthttp's small pipe between the stream and the connection);
// the timer then closes the connection, which fails the write, so the
// stream ends, its upstream is cancelled and its slots are given back.
// What one stream buffers stays bounded: one event here, fasthttp's pipe
// of 4 writes and its 4 KiB writer, and the kernel's socket buffers.
type streamWriter struct {
	w *bufio.Writer
	// timer closes the client's connection when it fires; nil when the
	// connection is not known (in-process calls).
	timer    *time.Timer
	d        time.Duration
	timedOut atomic.Bool
}

func newStreamWriter(w *bufio.Writer, conn net.Conn, d time.Duration) *streamWriter {
	sw := &streamWriter{w: w, d: d}
	if conn != nil {
		sw.timer = time.AfterFunc(d, func() {
			sw.timedOut.Store(true)
			_ = conn.Close()
		})
		sw.timer.Stop()
	}
	return sw
}

// Write writes p, giving up on the client after the write timeout.
func (s *streamWriter) Write(p []byte) (int, error) {
	s.arm()
	n, err := s.w.Write(p)
	s.disarm()
	return n, err
}

// Flush sends what is buffered, giving up on the client after the write
// timeout.
func (s *streamWriter) Flush() error {
	s.arm()
	err := s.w.Flush()
	s.disarm()
	return err
}

func (s *streamWriter) arm() {
	if s.timer != nil {
		s.timer.Reset(s.d)
	}
}

func (s *streamWriter) disarm() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// clientStatus is the status and code of a stream whose client write
// failed: the client went away, or did not read within the timeout.
func (s *streamWriter) clientStatus() (int, string) {
	if s.timedOut.Load() {
		return statusClientClosed, apierr.CodeClientWriteTimeout
	}
	return statusClientClosed, apierr.CodeClientClosed
}
