package proxy

import (
	"encoding/hex"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"
)

// RequestIDHeader carries the request id: set on every response, and on the
// request before it reaches a handler (overwriting any value the client
// sent), so that handlers, the admin API included, can read it.
const RequestIDHeader = "X-Sluice-Request-Id"

// RequestID returns the id the server gave the request in ctx. The slice
// belongs to ctx: copy it to keep it past the handler.
func RequestID(ctx *fasthttp.RequestCtx) []byte {
	return ctx.Request.Header.Peek(RequestIDHeader)
}

// newRequestID returns a new UUIDv7 in its 36-byte text form, built on the
// stack so that the hot path does not allocate for it.
func newRequestID() [36]byte {
	u, err := uuid.NewV7()
	if err != nil {
		// crypto/rand does not fail since Go 1.24; uuid keeps the error for
		// older toolchains.
		panic("request id: " + err.Error())
	}
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return b
}
