package proxy

import (
	"net/http"
	"time"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

// In-flight limits (docs/security.md, "In-flight limits" and "Upstream
// fairness"): how many requests a tenant, a gateway, a user and a token
// may have in flight at once in this process, and how many calls a tenant
// may have open to one upstream host. Counting is one atomic add per
// scope on counters hung off the snapshot's objects (snapshot.InFlight),
// which survive snapshot rebuilds.

// Defaults of the concurrency settings of InferenceConfig.
const (
	// DefaultTenantMaxInFlight is the in-flight limit of a tenant whose
	// settings set none. A process accepts 10,000 connections
	// (DefaultConcurrency): at 1,000 no tenant can hold more than a tenth
	// of them, so a flood from one tenant leaves room for nine more, while
	// 1,000 concurrent requests is more than most providers' keys allow a
	// tenant anyway.
	DefaultTenantMaxInFlight = 1000
	// DefaultUpstreamShare is how many calls one tenant may have in
	// flight to one upstream host: a quarter of the 512 connections the
	// upstream client keeps per host, so that three tenants flooding the
	// same provider still leave a quarter of its connections to everyone
	// else.
	DefaultUpstreamShare = 128
	// DefaultStreamWriteTimeout is how long a stream waits for its client
	// to take the next chunk before it gives up on the client.
	DefaultStreamWriteTimeout = 30 * time.Second
)

// fillInFlightDefaults sets the defaults of the concurrency settings.
func (c *InferenceConfig) fillInFlightDefaults() {
	if c.TenantMaxInFlight <= 0 {
		c.TenantMaxInFlight = DefaultTenantMaxInFlight
	}
	if c.UpstreamShare <= 0 {
		c.UpstreamShare = DefaultUpstreamShare
	}
	if c.StreamWriteTimeout <= 0 {
		c.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
}

// slots are the in-flight counters a call holds.
type slots struct {
	held [4]*snapshot.InFlight
	n    int
}

// release gives back every slot held; a second call does nothing. The
// call is owned by one goroutine at a time (the handler, then a stream's
// writer), so a plain field makes the release happen exactly once.
func (s *slots) release() {
	for i := range s.n {
		s.held[i].Release()
		s.held[i] = nil
	}
	s.n = 0
}

// inFlightScope is one holder of an in-flight limit.
type inFlightScope struct {
	name  string
	f     *snapshot.InFlight
	limit int64 // 0: none
}

// acquireSlots counts the call in flight for its tenant, gateway, user
// and token, and refuses it with 429 concurrency_limit_exceeded, naming
// the scope, when one of them is at its limit. Every scope is counted,
// limited or not, so that a limit set while requests run sees them. The
// slots are given back by release, on every exit path.
func (h *Inference) acquireSlots(c *call) *apierr.Error {
	var scopes [4]inFlightScope // tenant, gateway, user, token: the first one full is named
	if t := c.gw.Tenant; t != nil {
		limit := int64(h.cfg.TenantMaxInFlight)
		if v := t.Settings.MaxInFlight; v != nil {
			limit = int64(*v)
		}
		scopes[0] = inFlightScope{name: "tenant", f: t.InFlight, limit: limit}
	}
	scopes[1] = inFlightScope{name: "gateway", f: c.gw.InFlight, limit: limitOf(c.gw.RateLimit.MaxInFlight)}
	if u := c.tok.User; u != nil {
		scopes[2] = inFlightScope{name: "user", f: u.InFlight, limit: limitOf(u.RateLimit.MaxInFlight)}
	}
	scopes[3] = inFlightScope{name: "token", f: c.tok.InFlight, limit: limitOf(c.tok.RateLimit.MaxInFlight)}
	for i := range scopes {
		s := &scopes[i]
		if s.f == nil {
			continue
		}
		if !s.f.Acquire(s.limit) {
			c.slots.release()
			c.retryAfter = "1"
			return apierr.New(http.StatusTooManyRequests, apierr.CodeConcurrencyLimitExceeded,
				"too many requests in flight: this %s allows %d at once; retry after 1 s", s.name, s.limit)
		}
		c.slots.held[c.slots.n] = s.f
		c.slots.n++
	}
	return nil
}

func limitOf(v *int) int64 {
	if v == nil {
		return 0
	}
	return int64(*v)
}

// acquireUpstream takes a slot of the tenant's share of k's upstream host
// for the attempt about to be made; false when the share is used up, and
// the routing plan then passes the candidate over. The slot is given back
// when the attempt ends, or for a stream when the stream ends.
func (h *Inference) acquireUpstream(c *call, k *snapshot.Key) bool {
	if k.Upstream == nil {
		return true
	}
	if !k.Upstream.Acquire(int64(h.cfg.UpstreamShare)) {
		c.shareFull = k.Provider
		return false
	}
	c.upstream = k.Upstream
	return true
}

// releaseUpstream gives back the attempt's upstream slot, if it holds one.
func (c *call) releaseUpstream() {
	if c.upstream != nil {
		c.upstream.Release()
		c.upstream = nil
	}
}

// releaseSlot gives back f, if set.
func releaseSlot(f *snapshot.InFlight) {
	if f != nil {
		f.Release()
	}
}

// shareRefusal is the 429 of a request whose every candidate was passed
// over because the tenant's share of its upstream was used up.
func (h *Inference) shareRefusal(c *call) *apierr.Error {
	c.retryAfter = "1"
	return apierr.New(http.StatusTooManyRequests, apierr.CodeConcurrencyLimitExceeded,
		"too many requests in flight: this tenant allows %d at once to the upstream of provider %s (its share of the gateway's connections to it); retry after 1 s",
		h.cfg.UpstreamShare, c.shareFull)
}
