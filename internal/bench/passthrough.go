package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"time"

	"github.com/valyala/fasthttp"
)

// passthroughHealth is the path the pass-through answers itself, so that
// startPassthrough can wait for it like for the gateway's /healthz.
const passthroughHealth = "/healthz"

// ServePassthrough serves the floor of a `sluice bench --baseline` run: a
// bare fasthttp reverse proxy that sends each request's method, path,
// Authorization, Content-Type and body to upstream and relays the answer,
// streaming an event stream as it arrives. No parsing, no auth, no
// logging: what any gateway on fasthttp costs at least. It serves on addr
// until ctx ends.
func ServePassthrough(ctx context.Context, addr, upstream string) error {
	u, err := url.Parse(upstream)
	if err != nil || u.Host == "" {
		return fmt.Errorf("upstream URL %q: %v", upstream, err)
	}
	c := &fasthttp.HostClient{
		Addr:                u.Host,
		MaxIdleConnDuration: time.Minute,
		ReadTimeout:         requestTimeout,
		WriteTimeout:        requestTimeout,
		ReadBufferSize:      readBufferSize,
		StreamResponseBody:  true,
	}
	s := &fasthttp.Server{
		Handler:               func(rc *fasthttp.RequestCtx) { relay(rc, c) },
		NoDefaultServerHeader: true,
		NoDefaultDate:         true,
		ReadBufferSize:        readBufferSize,
	}
	errc := make(chan error, 1) // the one result of ListenAndServe
	go func() { errc <- s.ListenAndServe(addr) }()
	select {
	case err := <-errc:
		return fmt.Errorf("pass-through on %s: %w", addr, err)
	case <-ctx.Done():
		return s.Shutdown()
	}
}

// relay forwards one request. The upstream response is released when the
// client has it: after the copy for a stream, at once otherwise (the body
// is copied into the server's response).
func relay(rc *fasthttp.RequestCtx, c *fasthttp.HostClient) {
	if string(rc.Path()) == passthroughHealth {
		return
	}
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.Header.SetMethodBytes(rc.Method())
	req.SetRequestURIBytes(rc.RequestURI())
	req.SetHost(c.Addr)
	req.Header.SetContentTypeBytes(rc.Request.Header.ContentType())
	req.Header.SetBytesV(fasthttp.HeaderAuthorization, rc.Request.Header.Peek(fasthttp.HeaderAuthorization))
	req.SetBodyRaw(rc.Request.Body())
	resp := fasthttp.AcquireResponse()
	if err := c.Do(req, resp); err != nil {
		fasthttp.ReleaseResponse(resp)
		rc.Error(err.Error(), fasthttp.StatusBadGateway)
		return
	}
	rc.SetStatusCode(resp.StatusCode())
	rc.Response.Header.SetContentTypeBytes(resp.Header.ContentType())
	if !isEventStream(resp.Header.ContentType()) {
		rc.SetBody(resp.Body())
		fasthttp.ReleaseResponse(resp)
		return
	}
	body := resp.BodyStream()
	rc.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer fasthttp.ReleaseResponse(resp)
		buf := make([]byte, 4096)
		for {
			n, err := body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil || w.Flush() != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
}

// startPassthrough starts `<command> bench-passthrough` (ServePassthrough)
// the way startGateway starts the gateway: a child process on a free
// loopback port, GOMAXPROCS=1, pinned to o.cpu, with o.env added.
func startPassthrough(ctx context.Context, o gatewayOptions, upstream string) (*gateway, error) {
	command, cpu := o.command, o.cpu
	g, addr, err := newGateway("sluice-bench-floor-", "pass-through's dir", rand.Text())
	if err != nil {
		return nil, err
	}
	args := append(append([]string{}, command[1:]...), "bench-passthrough", "--listen", addr, "--upstream", upstream)
	g.cmd = exec.Command(command[0], args...)
	g.cmd.Env = append(append(envWithout(os.Environ(), "SLUICE_"), "GOMAXPROCS=1"), o.env...)
	return g.run(ctx, cpu, "pass-through")
}
