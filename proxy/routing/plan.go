// Package routing chooses which provider key serves each attempt of a request and how long to
// wait between attempts. It is pure: time, randomness and breaker state come from the caller.
package routing

import (
	"math/bits"
)

// Route strategies, as stored on a gateway's routes.
const (
	StrategyFallback    = "fallback"
	StrategyLoadBalance = "loadbalance"
)

// Key is a provider key of the gateway, as routing sees it.
type Key struct {
	ID, Alias string
	// Weight balances the keys of one provider. Keys of weight zero or less are used only after
	// every positive-weight key of the target was tried.
	Weight int
}

// Target is one provider/model of a route.
type Target struct {
	Provider, Model string
	// KeyAlias restricts the target to the key with that alias; "" allows any key of Provider.
	KeyAlias string
	// Weight is the target's share under the loadbalance strategy; zero or less means "only
	// after every positive-weight target was tried". Fallback ignores it.
	Weight int
}

// Candidate is one (target, key) pair a request may try.
type Candidate struct {
	Target Target
	Key    Key
}

// span is one target's slice of Plan.keys: keys[lo:hi] are the target's eligible keys.
type span struct{ target, lo, hi int }

// Inline capacity of a Plan: routes of up to 4 targets and 8 keys in all need no allocation
// beyond the Plan itself.
const (
	inlineSpans = 4
	inlineKeys  = 8
)

// Plan yields the candidates one request tries, in order, at most maxAttempts in total: the
// attempt budget is for the whole request, never per target or per key (LiteLLM PR #34129 made
// (1+N)² upstream calls by retrying at two levels).
//
// Order: fallback takes targets as listed; loadbalance draws targets by weight without
// replacement. Within a target the keys of its provider (only KeyAlias when set) are drawn by
// weight without replacement, so a failing key falls over to the next key of the same target
// before the plan moves to the next target. When every candidate has been tried once and
// attempts remain, the plan starts over with fresh draws; retrying the same key is allowed then.
//
// A Plan belongs to one request and is not safe for concurrent use.
type Plan struct {
	targets  []Target
	spans    []span // targets with at least one eligible key; loadbalance reorders them in place
	keys     []Key  // eligible keys grouped by span; reordered in place as keys are drawn
	balance  bool
	rnd      func() uint64
	skip     func(Candidate) bool
	max      int
	attempts int

	ti      int  // position in spans of the current target in this round
	ki      int  // index in keys of the next key to draw for spans[ti]
	started bool // spans[ti] was chosen and ki points into it
	yielded int  // candidates yielded in this round
	skipped bool // skip returned true at least once

	spanBuf [inlineSpans]span
	keyBuf  [inlineKeys]Key
}

// NewPlan returns the plan of one request.
//
// keys returns the keys of a provider; it is called twice per target while building the plan
// (to size and then fill its buffers) and must return the same keys both times — a read of the
// gateway's immutable snapshot. maxAttempts below 1 counts as 1. rnd is the source of
// randomness (rand.Uint64 from math/rand/v2 in production, a seeded generator in tests) and must
// not be nil. skip, when not nil, is asked about each candidate immediately before Next would
// return it, at most once per candidate per round and never once the attempts are used up; a
// candidate it rejects is passed over without counting an attempt. skip may therefore take a
// breaker's probe slot (breaker.Allow): the candidate it accepts is the one Next returns.
func NewPlan(strategy string, targets []Target, keys func(provider string) []Key, maxAttempts int,
	rnd func() uint64, skip func(Candidate) bool) *Plan {
	p := new(Plan)
	p.Init(strategy, targets, keys, maxAttempts, rnd, skip)
	return p
}

// Init makes p the plan NewPlan would return, in place: a caller that
// keeps its plan inside its own state allocates none (issue 17).
func (p *Plan) Init(strategy string, targets []Target, keys func(provider string) []Key, maxAttempts int,
	rnd func() uint64, skip func(Candidate) bool) {
	if rnd == nil {
		panic("routing: NewPlan with a nil rnd")
	}
	*p = Plan{
		targets: targets,
		balance: strategy == StrategyLoadBalance,
		rnd:     rnd,
		skip:    skip,
		max:     max(maxAttempts, 1),
	}
	n := 0
	for _, t := range targets {
		n += len(keys(t.Provider))
	}
	p.keys = p.keyBuf[:0]
	if n > inlineKeys {
		p.keys = make([]Key, 0, n)
	}
	p.spans = p.spanBuf[:0]
	if len(targets) > inlineSpans {
		p.spans = make([]span, 0, len(targets))
	}
	for i, t := range targets {
		lo := len(p.keys)
		for _, k := range keys(t.Provider) {
			if t.KeyAlias == "" || k.Alias == t.KeyAlias {
				p.keys = append(p.keys, k)
			}
		}
		if len(p.keys) > lo {
			p.spans = append(p.spans, span{target: i, lo: lo, hi: len(p.keys)})
		}
	}
}

// Next returns the next candidate and counts it as an attempt. It returns false when the
// attempts are used up or when a whole round yields no candidate (none exist, or skip rejected
// all of them).
func (p *Plan) Next() (Candidate, bool) {
	for p.attempts < p.max {
		if p.ti == len(p.spans) {
			if p.yielded == 0 {
				return Candidate{}, false
			}
			p.ti, p.started, p.yielded = 0, false, 0
			continue
		}
		if !p.started {
			if p.balance {
				rest := p.spans[p.ti:]
				j := pick(len(rest), func(i int) int { return p.targets[rest[i].target].Weight }, p.rnd)
				toFront(rest, j)
			}
			p.ki, p.started = p.spans[p.ti].lo, true
		}
		sp := p.spans[p.ti]
		if p.ki == sp.hi {
			p.ti, p.started = p.ti+1, false
			continue
		}
		rest := p.keys[p.ki:sp.hi]
		toFront(rest, pick(len(rest), func(i int) int { return rest[i].Weight }, p.rnd))
		p.ki++
		c := Candidate{Target: p.targets[sp.target], Key: rest[0]}
		if p.skip != nil && p.skip(c) {
			p.skipped = true
			continue
		}
		p.attempts++
		p.yielded++
		return c, true
	}
	return Candidate{}, false
}

// Attempts returns the number of candidates Next has returned.
func (p *Plan) Attempts() int { return p.attempts }

// AllSkipped reports whether the plan ended without yielding any candidate because skip
// rejected every one of them (every breaker open: 503 circuit_open). It is false when the plan
// had no candidates at all or yielded at least one.
func (p *Plan) AllSkipped() bool { return p.attempts == 0 && p.skipped }

// pick draws an index in [0, n) with probability proportional to weight(i). Weights of zero or
// less are never drawn while a positive weight remains; when none does, it returns 0 so that
// such entries keep their listed order.
func pick(n int, weight func(i int) int, rnd func() uint64) int {
	if n <= 1 {
		return 0
	}
	var total uint64
	for i := range n {
		if w := weight(i); w > 0 {
			total += uint64(w)
		}
	}
	if total == 0 {
		return 0
	}
	r := uniform(rnd(), total)
	for i := range n {
		w := weight(i)
		if w <= 0 {
			continue
		}
		if r < uint64(w) {
			return i
		}
		r -= uint64(w)
	}
	return n - 1 // unreachable: r < total
}

// toFront moves s[j] to s[0], shifting s[:j] up by one, so that the entries not drawn keep
// their relative (listed) order.
func toFront[T any](s []T, j int) {
	if j == 0 {
		return
	}
	x := s[j]
	copy(s[1:j+1], s[:j])
	s[0] = x
}

// uniform maps a random 64-bit value to [0, n) without the bias of a modulo by multiplying and
// keeping the high word (Lemire); the remaining bias is below n/2⁶⁴.
func uniform(x, n uint64) uint64 {
	hi, _ := bits.Mul64(x, n)
	return hi
}
