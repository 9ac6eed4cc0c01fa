package proxy

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/ratelimit"
)

// Rate limits and budgets (docs/governance.md, "Rate limits" and
// "Budgets"). admit is the one choke point: the pipeline's policies step
// calls it for every request that is about to reach a provider, whatever
// the path (compat, provider, chat, completions, embeddings) and whatever
// the credential (gateway, user, playground token; an Administrator's
// too).

// defaultMaxTokens is the completion tokens a chat request without
// max_tokens reserves per choice (proxy/reserve.go). Under a hard budget
// the upstream is told to stop there; otherwise a longer answer is
// trued up when it ends.
const defaultMaxTokens = 4096

// promptBytesPerToken is the cheap prompt bound of a request held to soft
// budgets only (a token per 3 bytes of the body, about right for English
// and CJK text), and the bound of media other than images
// (proxy/reserve.go).
const promptBytesPerToken = 3

// flagSoftBudget marks the record of a request that exceeded a soft
// budget.
const flagSoftBudget = "budget_exceeded_soft"

// admission is what admit took for a call.
type admission struct {
	// at is when the request was counted: refunds use the same instant.
	at time.Time
	// tpm are the tokens-per-minute reservations, trued up to the
	// request's real tokens when it settles (proxy/reserve.go).
	tpm []tpmHold
	// capOut is the output cap sent upstream (per choice; 0 for none):
	// set under a hard budget for a request without a maximum output.
	capOut int64
	// reservation is the budgets' hold of the worst-case cost.
	reservation *budget.Reservation
	// flagged is true once the record carries flagSoftBudget.
	flagged bool
	// headers are the x-ratelimit-* values, written on success and on
	// errors alike (reply resets the response).
	headers limitHeaders
}

// limitScope is one holder of rate limits: the gateway, the token or the
// token's user.
type limitScope struct {
	name string // gateway, token, user: for messages
	// kind and id make the limiter key kind + id + ":rpm" (or ":tpm"),
	// built only for a limit that is set.
	kind, id string
	rl       store.RateLimit
}

// admit applies the rate limits (gateway, token, user) and reserves the
// request's worst-case cost against its budgets (tenant, gateway, user,
// token) before
// any upstream call. It is the one choke point every provider-reaching
// request passes. A refusal is a 429 (a 503 when a hard budget's spend
// cannot be read).
//
// Tokens per minute are reserved first (the request's worst case in
// tokens, trued up at settle), then requests per minute are counted, then
// the budgets reserve. A refusal at a later step takes back the counts and
// reservations already made.
func (h *Inference) admit(c *call) *apierr.Error {
	p := &c.plan
	ctx := context.Background() // the counters must not be cut by the client going away
	now := c.start
	c.lim.at = now
	var scopes [3]limitScope
	n := 0
	scopes[n] = limitScope{"gateway", "gw:", c.gw.ID, c.gw.RateLimit}
	n++
	scopes[n] = limitScope{"token", "tok:", c.tok.ID, c.tok.RateLimit}
	n++
	if u := c.tok.User; u != nil {
		scopes[n] = limitScope{"user", "user:", u.ID, u.RateLimit}
		n++
	}
	limits := budgetLimits(c)
	est := h.reservation(c, p, scopes[:n], limits)
	for _, s := range scopes[:n] {
		if s.rl.TokensPerMinute == nil {
			continue
		}
		limit, key := *s.rl.TokensPerMinute, s.kind+s.id+":tpm"
		cost := est.tpmCost(limit)
		d, err := h.cfg.Limiter.Allow(ctx, key, limit, cost, now)
		if err != nil {
			h.log.Warn("rate limiter failed; the limit is not applied to this request", "key", key, "err", err)
			continue
		}
		c.lim.headers.tokens.merge(limit, d)
		if !d.Allowed {
			h.takeBackTokens(ctx, c)
			h.peekRequests(ctx, c, scopes[:n], now)
			c.retryAfter = retryAfterSeconds(d.RetryAfter)
			return apierr.New(http.StatusTooManyRequests, apierr.CodeRateLimitExceeded, "rate limit reached: this %s allows %d tokens per minute; retry after %s s",
				s.name, limit, c.retryAfter)
		}
		c.lim.tpm = append(c.lim.tpm, tpmHold{key, cost})
	}
	var counted [3]string
	nc := 0
	for _, s := range scopes[:n] {
		if s.rl.RequestsPerMinute == nil {
			continue
		}
		limit, key := *s.rl.RequestsPerMinute, s.kind+s.id+":rpm"
		d, err := h.cfg.Limiter.Allow(ctx, key, limit, 1, now)
		if err != nil {
			h.log.Warn("rate limiter failed; the limit is not applied to this request", "key", key, "err", err)
			continue
		}
		c.lim.headers.requests.merge(limit, d)
		if !d.Allowed {
			h.refund(ctx, counted[:nc], now)
			h.takeBackTokens(ctx, c)
			c.retryAfter = retryAfterSeconds(d.RetryAfter)
			return apierr.New(http.StatusTooManyRequests, apierr.CodeRateLimitExceeded, "rate limit reached: this %s allows %d requests per minute; retry after %s s",
				s.name, limit, c.retryAfter)
		}
		counted[nc] = key
		nc++
	}
	if len(limits) > 0 {
		// Reserve holds the worst case on every budget or on none: a
		// refusal by one gives back what the others already held.
		res, ref := h.cfg.Budgets.Reserve(ctx, now, limits, est.worstCost(c, p))
		if ref != nil {
			h.refund(ctx, counted[:nc], now)
			h.takeBackTokens(ctx, c)
			if !ref.Unknown {
				c.lim.headers.budget = remainingOf(ref)
			}
			return budgetExceeded(c, ref)
		}
		c.lim.reservation = res
		c.lim.headers.budget = budgetRemaining{set: true, usd: res.Remaining}
		if res.SoftExceeded {
			c.flagSoftBudget()
		}
	}
	c.lim.headers.write(&c.ctx.Response.Header)
	return nil
}

// settle replaces the reservations made by admit with the real cost and
// the real tokens. It is called exactly once for every request admit let
// through, on every exit path.
func (h *Inference) settle(c *call, u llm.Usage) {
	ctx := context.Background()
	h.trueUpTokens(ctx, c, u)
	if c.lim.reservation == nil {
		return
	}
	var actual money.USD
	if pr, ok := c.snap.Price(c.rec.Provider, c.rec.Model); ok {
		actual = cost(pr, u)
	}
	if h.cfg.Budgets.Settle(ctx, c.lim.reservation, actual) {
		c.flagSoftBudget()
	}
	c.lim.reservation = nil
}

// llmUsageZero settles a request that reached no provider answer.
var llmUsageZero llm.Usage

// release gives back the call's in-flight slots and settles its
// admission once, whatever the exit path.
func (h *Inference) release(c *call, u llm.Usage) {
	c.slots.release()
	if !c.admitted || c.settled {
		return
	}
	c.settled = true
	h.settle(c, u)
}

// peekRequests fills the requests headers of a request refused before
// it was counted, without counting it.
func (h *Inference) peekRequests(ctx context.Context, c *call, scopes []limitScope, now time.Time) {
	for _, s := range scopes {
		if s.rl.RequestsPerMinute == nil {
			continue
		}
		if d, err := h.cfg.Limiter.Allow(ctx, s.kind+s.id+":rpm", *s.rl.RequestsPerMinute, 0, now); err == nil {
			c.lim.headers.requests.merge(*s.rl.RequestsPerMinute, d)
		}
	}
}

// refund takes back the request counts of a request refused afterwards.
func (h *Inference) refund(ctx context.Context, keys []string, at time.Time) {
	for _, key := range keys {
		if err := h.cfg.Limiter.Add(ctx, key, -1, at); err != nil {
			h.log.Warn("rate limiter failed to take back a count", "key", key, "err", err)
		}
	}
}

func (c *call) flagSoftBudget() {
	if !c.lim.flagged {
		c.lim.flagged = true
		c.rec.Flags = append(c.rec.Flags, flagSoftBudget)
	}
}

// budgetLimits are the budgets the call is held to (CONTRACT §14): its
// gateway's tenant's, its gateway's, for user and playground tokens its
// user's, and its token's — the widest first, so that an exhausted
// tenant refuses before the narrower counters are touched. No credential
// is exempt.
func budgetLimits(c *call) []budget.Limit {
	var out []budget.Limit
	if t := c.gw.Tenant; t != nil && t.Budget != nil {
		out = appendLimit(out, budget.TenantScope(t.ID), t.Budget)
	}
	if c.gw.Budget != nil {
		out = appendLimit(out, budget.GatewayScope(c.gw.ID), c.gw.Budget)
	}
	if u := c.tok.User; u != nil && u.Budget != nil {
		out = appendLimit(out, budget.UserScope(u.ID), u.Budget)
	}
	if c.tok.Budget != nil {
		out = appendLimit(out, budget.TokenScope(c.tok.ID), c.tok.Budget)
	}
	return out
}

func appendLimit(out []budget.Limit, scope string, b *store.Budget) []budget.Limit {
	return append(out, budget.Limit{Scope: scope, Amount: b.AmountUSD, Period: b.Period, Hard: b.Hard})
}

// budgetExceeded is the 429 of a hard budget with not enough left, or
// the 503 of one whose spend is not known (budget.Refusal.Unknown).
func budgetExceeded(c *call, ref *budget.Refusal) *apierr.Error {
	c.retryAfter = retryAfterSeconds(ref.RetryAfter)
	what, _, _ := budget.SplitScope(ref.Limit.Scope)
	if what == budget.KindToken {
		what = "API token"
	}
	if ref.Unknown {
		return apierr.Unavailable("the %s budget's spend cannot be read now (the analytics store does not answer); a hard budget refuses requests until it can; retry after %s s",
			what, c.retryAfter)
	}
	resets := "it does not reset (period total)"
	if ref.ResetsAt != nil {
		resets = "it resets at " + ref.ResetsAt.UTC().Format(time.RFC3339)
	}
	e := apierr.New(http.StatusTooManyRequests, apierr.CodeBudgetExceeded, "the %s budget of $%s per %s period has not enough left for this request (spent $%s, in flight $%s); %s",
		what, ref.Limit.Amount, periodName(ref.Limit.Period), ref.Spent, ref.Reserved, resets)
	e.Type = apierr.TypeInsufficientQuota
	return e
}

func periodName(p string) string {
	switch p {
	case store.PeriodDaily:
		return "day"
	case store.PeriodWeekly:
		return "week"
	case store.PeriodMonthly:
		return "month"
	}
	return "total"
}

// limitHeaders are the OpenAI-style x-ratelimit-* headers of a call and
// its x-sluice-budget-remaining-usd.
type limitHeaders struct {
	requests, tokens headerTrio
	budget           budgetRemaining
}

// BudgetRemainingHeader says, on an answer under a budget, the least left
// among the budgets that applied once this request's worst case was
// reserved (CONTRACT §14; docs/governance.md "The remaining-budget
// header"). A refusal says what the refusing budget had left.
const BudgetRemainingHeader = "x-sluice-budget-remaining-usd"

// budgetRemaining is the value of BudgetRemainingHeader; unset when no
// budget applied.
type budgetRemaining struct {
	set bool
	usd money.USD
}

// remainingOf is what a refusing budget had left: its amount less its
// spend and its open reservations, at least 0.
func remainingOf(ref *budget.Refusal) budgetRemaining {
	return budgetRemaining{set: true, usd: max(ref.Limit.Amount-ref.Spent-ref.Reserved, 0)}
}

// headerTrio is one limit-remaining-reset trio: of the scopes with a
// limit, the one with the least remaining.
type headerTrio struct {
	set       bool
	limit     int
	remaining int
	reset     time.Duration
}

func (t *headerTrio) merge(limit int, d ratelimit.Decision) {
	if t.set && (d.Remaining > t.remaining || d.Remaining == t.remaining && d.ResetAfter <= t.reset) {
		return
	}
	*t = headerTrio{set: true, limit: limit, remaining: d.Remaining, reset: d.ResetAfter}
}

// trioNames are the header names of one unit.
type trioNames struct{ limit, remaining, reset string }

var (
	requestNames = trioNames{"x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"}
	tokenNames   = trioNames{"x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"}
)

func (h *limitHeaders) write(hd *fasthttp.ResponseHeader) {
	h.requests.write(hd, &requestNames)
	h.tokens.write(hd, &tokenNames)
	if h.budget.set {
		var buf [32]byte
		hd.SetBytesV(BudgetRemainingHeader, strconv.AppendFloat(buf[:0], h.budget.usd.Float(), 'f', -1, 64))
	}
}

func (t *headerTrio) write(hd *fasthttp.ResponseHeader, n *trioNames) {
	if !t.set {
		return
	}
	var buf [20]byte
	hd.SetBytesV(n.limit, strconv.AppendInt(buf[:0], int64(t.limit), 10))
	hd.SetBytesV(n.remaining, strconv.AppendInt(buf[:0], int64(t.remaining), 10))
	hd.Set(n.reset, resetString(t.reset))
}

// resetString renders a reset time as OpenAI does: Go duration syntax to
// the millisecond ("1s", "6m0s", "20ms", "0s").
func resetString(d time.Duration) string {
	return d.Round(time.Millisecond).String()
}
