package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/apierr"
)

// Health statuses.
const (
	StatusOK          = "ok"
	StatusDegraded    = "degraded"    // serving, e.g. with analytics buffering
	StatusUnavailable = "unavailable" // not serving, e.g. no configuration loaded
)

// Health is the body of /healthz (CONTRACT §9).
type Health struct {
	Status  string           `json:"status"` // ok | degraded | unavailable
	Version string           `json:"version"`
	UptimeS int64            `json:"uptime_s"`
	Checks  map[string]Check `json:"checks"`
}

// Check is the health of one dependency, keyed by its name in Health.Checks.
type Check struct {
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// serveHealth answers /healthz: 200 for ok and degraded, 503 for
// unavailable. It needs no credential and says nothing secret.
func (s *Server) serveHealth(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsHead() {
		writeError(ctx, apierr.MethodNotAllowed("GET, HEAD"))
		return
	}
	h := s.report()
	body, err := json.Marshal(h)
	if err != nil { // only strings, numbers and maps of them: cannot fail
		s.log.Error("encode health", "err", err)
		writeError(ctx, apierr.Internal())
		return
	}
	status := http.StatusOK
	if h.Status == StatusUnavailable {
		status = http.StatusServiceUnavailable
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetBody(body)
}

// report asks Options.Health, bounded by healthTimeout, and fills what the
// server owns. A status it does not know is reported as unavailable.
func (s *Server) report() Health {
	h := Health{Status: StatusOK}
	if s.health != nil {
		// Not the RequestCtx: its Done fires when shutdown begins, and a
		// check must not keep a reference to it after the handler returns.
		ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
		h = s.health(ctx)
		cancel()
	}
	switch h.Status {
	case StatusOK, StatusDegraded, StatusUnavailable:
	case "":
		h.Status = StatusOK
	default:
		h.Status = StatusUnavailable
	}
	h.Version = s.version
	h.UptimeS = int64(time.Since(s.started) / time.Second)
	if h.Checks == nil {
		h.Checks = map[string]Check{}
	}
	return h
}
