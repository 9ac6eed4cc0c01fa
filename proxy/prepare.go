package proxy

import (
	"crypto/sha256"
	"net/http"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/store"
)

// prepare is the pipeline's first step (proxy/pipeline.go): who asks, on
// which gateway, for what. In the contract's order of checks: the
// configuration is loaded (503) → credential (401) → method (405) → path
// (400/404) → role and gateway (403/404) → content type (415) → x-sluice-*
// headers (400) → body (400). Nothing is counted yet.
func (h *Inference) prepare(c *call) *apierr.Error {
	if c.snap = h.cfg.Snapshots.Load(); c.snap == nil {
		return apierr.Unavailable("the gateway has not loaded its configuration yet")
	}
	// The path as sent, not ctx.Path(): fasthttp decodes and normalises
	// that one ("%63", "//", "/../"), so a non-canonical path would be
	// routed instead of refused. It is parsed first so that the refusals
	// before its check (401, 405) are in its door's shape, and checked in
	// the contract's order.
	raw := c.ctx.Request.URI().PathOriginal()
	r, ok := parsePath(raw)
	if ok {
		c.door = doorFor(r)
	}
	if e := h.authenticate(c); e != nil {
		return e
	}
	// The models paths answer GET, every other path POST.
	if ok && r.models {
		if !c.ctx.IsGet() {
			return apierr.MethodNotAllowed("GET")
		}
	} else if !c.ctx.IsPost() {
		return apierr.MethodNotAllowed("POST")
	}
	if !ok {
		return pathError(raw)
	}
	c.route = r
	c.rec.Operation = r.operation()
	if e := h.authorize(c); e != nil {
		return e
	}
	if r.models {
		return h.readModelsRequest(c)
	}
	return h.readBody(c)
}

// authenticate finds the token the client presented (401 when there is
// none, or it is unknown or expired).
func (h *Inference) authenticate(c *call) *apierr.Error {
	secret, e := credential(&c.ctx.Request.Header)
	if e != nil {
		return e
	}
	tok, ok := c.snap.Token(sha256.Sum256(secret))
	if !ok {
		return apierr.Unauthenticated(apierr.CodeInvalidToken, "the token is not valid")
	}
	if tok.Expired(c.start) {
		return apierr.Unauthenticated(apierr.CodeTokenExpired, "the token has expired")
	}
	c.tok = tok
	c.rec.TokenID, c.rec.TenantID = tok.ID, tok.TenantID
	if tok.User != nil {
		c.rec.UserID = tok.User.ID
	}
	// In memory only: proxy/lastuse writes it off the request path.
	h.cfg.LastUse.Mark(tok.ID, c.rec.UserID, c.start)
	return nil
}

// authorize resolves the gateway and checks that the token may use it.
// Another tenant's gateway, an unknown one and one the token is not for
// all answer the same 404, so nothing can be enumerated.
func (h *Inference) authorize(c *call) *apierr.Error {
	tok := c.tok
	if u := tok.User; u != nil && !u.Role.CanCallInference() {
		return apierr.New(http.StatusForbidden, apierr.CodeRoleCannotCallInference, "the %s role cannot call the inference API", u.Role)
	}
	gw, ok := c.snap.Gateway(string(c.route.tenant), string(c.route.gateway))
	if !ok {
		return apierr.NotFound("gateway")
	}
	if !tok.ValidOn(gw) {
		// A user of the gateway's own tenant is told why; anyone else gets
		// the 404 of a gateway that does not exist.
		if u := tok.User; u != nil && tok.Kind == store.TokenUser && u.TenantID == gw.TenantID {
			return apierr.New(http.StatusForbidden, apierr.CodeGatewayNotAssigned, "this gateway is not assigned to the token's user")
		}
		return apierr.NotFound("gateway")
	}
	if gw.Tenant != nil && gw.Tenant.Status == store.TenantSuspended {
		return apierr.New(http.StatusForbidden, apierr.CodeTenantSuspended, "the tenant of this gateway is suspended")
	}
	c.gw = gw
	c.rec.TenantID, c.rec.GatewayID = gw.TenantID, gw.ID
	return nil
}

// readBody checks the content type, validates the x-sluice-* headers and
// then the body: a malformed header is refused before anything is counted.
func (h *Inference) readBody(c *call) *apierr.Error {
	ct := c.ctx.Request.Header.ContentType()
	if !isJSON(ct) {
		return apierr.New(http.StatusUnsupportedMediaType, apierr.CodeUnsupportedMediaType,
			"the request body must be JSON (Content-Type: application/json)")
	}
	md, e := readHeaders(&c.ctx.Request.Header, &c.hdr)
	if e != nil {
		return e
	}
	c.rec.Metadata = md
	p := h.parsers.Get()
	defer h.parsers.Put(p)
	c.body = c.ctx.Request.Body()
	in, e := c.door.decode(p, c.body, c.route.op)
	if e != nil {
		return e
	}
	c.in = in
	if in.body != nil {
		c.body = in.body
		if d, ok := c.door.(*messagesDoor); ok {
			d.inputTokens = h.promptTokens(c)
		}
	}
	return nil
}

func isJSON(ct []byte) bool {
	if i := indexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = trimSpace(ct)
	return len(ct) == len("application/json") && equalFoldASCII(ct, "application/json")
}

// pathError tells a non-canonical path (400) from an unknown one (404).
func pathError(p []byte) *apierr.Error {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '%', '\\':
			return apierr.New(http.StatusBadRequest, apierr.CodeInvalidPath, "the path must be canonical: no percent-escapes or backslashes")
		case '/':
			if i+1 == len(p) || p[i+1] == '/' {
				return apierr.New(http.StatusBadRequest, apierr.CodeInvalidPath, "the path must be canonical: no empty segments")
			}
			if i+1 < len(p) && p[i+1] == '.' {
				return apierr.New(http.StatusBadRequest, apierr.CodeInvalidPath, "the path must be canonical: no dot segments")
			}
		}
	}
	return apierr.New(http.StatusNotFound, apierr.CodeNotFound, "no inference endpoint at this path; see the documentation for the five inference paths")
}
