package proxy

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/apierr"
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

// healthCacheTTL is how long one answer of Options.Health serves /healthz,
// which needs no credential: a flood of probes costs one store ping a
// second, not one each.
const healthCacheTTL = time.Second

// healthCache holds the last answer of Options.Health. Readers load it
// without a lock; a caller that finds it stale refreshes it under mu, so
// that concurrent probes wait for one check instead of running their own.
type healthCache struct {
	mu   sync.Mutex
	last atomic.Pointer[checkedHealth]
}

type checkedHealth struct {
	h  Health // shared by every reader: never modified once stored
	at time.Time
}

// check returns an answer of s.health no older than healthCacheTTL.
func (s *Server) check() Health {
	c := &s.checked
	if l := c.last.Load(); l != nil && time.Since(l.at) < healthCacheTTL {
		return l.h
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := c.last.Load(); l != nil && time.Since(l.at) < healthCacheTTL {
		return l.h // refreshed while this caller waited
	}
	// Not the RequestCtx: its Done fires when shutdown begins, and a
	// check must not keep a reference to it after the handler returns.
	ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
	defer cancel()
	h := s.health(ctx)
	c.last.Store(&checkedHealth{h: h, at: time.Now()})
	return h
}

// report asks Options.Health (at most once per healthCacheTTL), bounded by
// healthTimeout, and fills what the server owns in a copy. A status it
// does not know is reported as unavailable.
func (s *Server) report() Health {
	h := Health{Status: StatusOK}
	if s.health != nil {
		h = s.check()
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
	if s.draining.Load() {
		// A copy: the cached answer's map is shared by every reader.
		h.Checks = maps.Clone(h.Checks)
		if h.Checks == nil {
			h.Checks = map[string]Check{}
		}
		h.Status = StatusUnavailable
		h.Checks["shutdown"] = Check{Status: StatusUnavailable, Detail: "draining: this process is shutting down"}
	}
	if h.Checks == nil {
		h.Checks = map[string]Check{}
	}
	return h
}
