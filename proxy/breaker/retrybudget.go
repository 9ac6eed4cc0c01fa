package breaker

import "sync/atomic"

// The retry budget of each gateway × provider, after Envoy's retry_budget: the retries in flight
// to a provider may be at most RetryBudgetPercent of the attempts in flight to it, and never
// fewer than MinRetryConcurrency.
const (
	RetryBudgetPercent  = 20
	MinRetryConcurrency = 3
)

// RetryBudget bounds the retries one gateway sends to one provider, so that while the provider
// fails its traffic is not multiplied by the gateway's attempt count: the attempt cap bounds one
// request, the budget bounds all of them together. A retry is an attempt on a provider that the
// same request has already tried (another key of it, or the same key again); a first attempt on
// a provider — a route falling back to its next provider — is not one and is never refused.
//
// Its counters are atomics: Begin and End cost one atomic add each on the hot path.
type RetryBudget struct {
	active  atomic.Int64 // attempts in flight, first attempts and retries alike
	retries atomic.Int64 // retries admitted by TryRetry and not yet done
}

// Begin counts an attempt in flight; every Begin is followed by one End.
func (r *RetryBudget) Begin() { r.active.Add(1) }

// End counts the end of an attempt.
func (r *RetryBudget) End() { r.active.Add(-1) }

// TryRetry admits a retry when fewer retries are in flight than the budget allows,
// max(MinRetryConcurrency, RetryBudgetPercent % of the attempts in flight). An admitted retry is
// ended with DoneRetry once it was made, or abandoned.
func (r *RetryBudget) TryRetry() bool {
	for {
		n := r.retries.Load()
		if n >= max(MinRetryConcurrency, r.active.Load()*RetryBudgetPercent/100) {
			return false
		}
		if r.retries.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// DoneRetry ends a retry that TryRetry admitted.
func (r *RetryBudget) DoneRetry() { r.retries.Add(-1) }

// InFlight returns the attempts and the retries in flight.
func (r *RetryBudget) InFlight() (attempts, retries int64) {
	return r.active.Load(), r.retries.Load()
}

// RetryBudget returns the retry budget of provider in gatewayID, creating it on first use.
func (s *Set) RetryBudget(gatewayID, provider string) *RetryBudget {
	g, ok := s.gateways.Load(gatewayID)
	if !ok {
		g, _ = s.gateways.LoadOrStore(gatewayID, &gatewayBreakers{})
	}
	gb := g.(*gatewayBreakers)
	r, ok := gb.budgets.Load(provider)
	if !ok {
		r, _ = gb.budgets.LoadOrStore(provider, &RetryBudget{})
	}
	return r.(*RetryBudget)
}
