package proxy

import (
	"github.com/sluicehq/sluice/apierr"
	"github.com/sluicehq/sluice/llm"
)

// admit applies the rate limits (gateway, token, user) and reserves the
// request's worst-case cost against its budgets (gateway, user) before
// any upstream call. It is the one choke point every provider-reaching
// request passes. A refusal is a 429.
func (h *Inference) admit(c *call, p *plan) *apierr.Error { return nil }

// settle replaces the reservation made by admit with the real cost and
// adds the real tokens to the token-per-minute windows. It is called
// exactly once for every request admit let through, on every exit path.
func (h *Inference) settle(c *call, u llm.Usage) {}

// llmUsageZero settles a request that reached no provider answer.
var llmUsageZero llm.Usage

// release settles the call's admission once, whatever the exit path.
func (h *Inference) release(c *call, u llm.Usage) {
	if !c.admitted || c.settled {
		return
	}
	c.settled = true
	h.settle(c, u)
}
