package proxy

import (
	"errors"
	"net"
	"net/http"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/apierr"
)

// writeError answers ctx with e in the contract's error shape.
func writeError(ctx *fasthttp.RequestCtx, e *apierr.Error) {
	ctx.SetStatusCode(e.Status)
	ctx.SetContentType("application/json")
	if e.Allow != "" {
		ctx.Response.Header.Set("Allow", e.Allow)
	}
	ctx.SetBody(e.Body())
}

// readError is fasthttp's ErrorHandler: it answers a request that could not
// be read or parsed. fasthttp closes the connection afterwards, since the
// rest of the stream cannot be trusted to start at a request boundary.
func (s *Server) readError(ctx *fasthttp.RequestCtx, err error) {
	id := newRequestID()
	ctx.Response.Header.SetBytesV(RequestIDHeader, id[:])
	e := s.classifyReadError(err)
	writeError(ctx, e)
	ctx.SetConnectionClose()
	if e.Status != http.StatusRequestTimeout {
		// The client may still be sending (a body or header block over
		// the limit): read it off so that it can read this answer. A
		// client too slow to send a request is not waited for again.
		lingerOnClose(ctx)
	}
}

// classifyReadError maps a request-read error to the wire.
func (s *Server) classifyReadError(err error) *apierr.Error {
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return apierr.New(http.StatusRequestEntityTooLarge, apierr.CodeBodyTooLarge,
			"the request body is larger than the limit of %d bytes", s.cfg.MaxBodyBytes)
	case errors.As(err, &small):
		return apierr.New(http.StatusRequestHeaderFieldsTooLarge, apierr.CodeHeadersTooLarge,
			"the request line and headers are larger than the limit of %d bytes", readBufferSize)
	case errors.As(err, &netErr) && netErr.Timeout():
		return apierr.New(http.StatusRequestTimeout, apierr.CodeRequestTimeout,
			"the request was not received within %s", s.cfg.ReadTimeout)
	}
	return apierr.New(http.StatusBadRequest, apierr.CodeInvalidRequest, "the request could not be parsed as HTTP/1.1")
}
