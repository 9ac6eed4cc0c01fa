package providers

import (
	"context"
	"io"
	"time"

	"github.com/valyala/fasthttp"
)

// fasthttp cannot abort a call in flight: its client blocks in the read
// of the answer until the answer or the deadline. A non-streamed call can
// take minutes (a long completion is sent only once it is complete), and
// when the gateway's client has gone away the upstream must stop
// generating, and stop being billed, at once. So the client's transport
// closes the call's connection when the call's context ends: the read
// fails, the call returns, and the upstream sees its connection closed.
//
// Streamed calls keep fasthttp's own transport, which hands the body over
// as a stream (StreamResponse then watches the context itself).

// ctxKey is the fasthttp.Request user value that carries a call's context
// to cancelTransport.
type ctxKey struct{}

// connWatcher is a call's context that closes the call's connection itself
// when it ends, so that watching a call allocates nothing (the proxy's
// pooled context of a request's upstream calls, proxy/upcancel.go). Other
// contexts are watched with context.AfterFunc.
type connWatcher interface {
	// CloseOnEnd closes c when the context ends, at once if it has ended.
	CloseOnEnd(c io.Closer)
	// StopClose undoes CloseOnEnd. It returns false when the context
	// ended meanwhile: c was or is being closed.
	StopClose() bool
}

// cancelTransport is the client's fasthttp.RoundTripper: fasthttp's own
// transport for a buffered answer, but with the connection closed when
// the call's context ends.
type cancelTransport struct{}

var _ fasthttp.RoundTripper = cancelTransport{}

// RoundTrip sends req on a connection of hc and reads the whole answer
// into resp. It follows fasthttp's transport (v1.74) for what the client
// uses: the request's timeout as the deadline of the write and the read,
// the host client's MaxResponseBodySize, and keep-alive unless either side
// asked to close.
func (cancelTransport) RoundTrip(hc *fasthttp.HostClient, req *fasthttp.Request, resp *fasthttp.Response) (bool, error) {
	ctx, _ := req.UserValue(ctxKey{}).(context.Context)
	if ctx == nil || resp.StreamBody {
		return fasthttp.DefaultTransport.RoundTrip(hc, req, resp)
	}
	w, watcher := ctx.(connWatcher)
	if !watcher && ctx.Done() == nil {
		return fasthttp.DefaultTransport.RoundTrip(hc, req, resp)
	}
	var deadline time.Time
	if t := req.GetTimeOut(); t > 0 {
		deadline = time.Now().Add(t)
	}
	cc, err := hc.AcquireConn(req.GetTimeOut(), req.ConnectionClose())
	if err != nil {
		return false, err
	}
	conn := cc.Conn()
	// Closing the connection is safe while another goroutine is in a Read
	// or Write on it: that call fails at once.
	var stop func() bool
	if watcher {
		w.CloseOnEnd(conn)
		stop = w.StopClose // a method value that does not escape
	} else {
		stop = context.AfterFunc(ctx, func() { _ = conn.Close() })
	}
	resp.ParseNetConn(conn)

	if err := conn.SetWriteDeadline(deadline); err != nil {
		stop()
		hc.CloseConn(cc)
		return true, err
	}
	bw := hc.AcquireWriter(conn)
	err = req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	hc.ReleaseWriter(bw)
	if err == nil {
		err = conn.SetReadDeadline(deadline)
	}
	if err == nil {
		br := hc.AcquireReader(conn)
		err = resp.ReadLimitBody(br, hc.MaxResponseBodySize)
		hc.ReleaseReader(br)
	}
	if !stop() {
		// The context ended: the connection is closed (or being closed),
		// whether or not the answer made it in time.
		hc.CloseConn(cc)
		if err == nil {
			return false, nil // a complete answer: the upstream billed it
		}
		return false, context.Cause(ctx)
	}
	if err != nil {
		if to, ok := err.(interface{ Timeout() bool }); ok && to.Timeout() {
			err = fasthttp.ErrTimeout
		}
		hc.CloseConn(cc)
		// Whatever the answer was, another try would not be idempotent:
		// the client makes one attempt per call (MaxIdemponentCallAttempts).
		return false, err
	}
	if req.ConnectionClose() || resp.ConnectionClose() {
		hc.CloseConn(cc)
	} else {
		hc.ReleaseConn(cc)
	}
	return false, nil
}
