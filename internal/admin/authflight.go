package admin

import (
	"context"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/sluicehq/sluice/internal/auth"
)

// authLookupTimeout bounds one shared credential lookup. It runs detached
// from the context of the caller that started it, so that one caller going
// away does not fail the others waiting on the same lookup.
const authLookupTimeout = 10 * time.Second

// authFlights coalesces concurrent lookups of one credential, keyed by the
// full hash of its secret (never a prefix): a cold-cache stampede of
// requests with one token — or one unknown token — costs the store one
// query, and the store's bounded pool sees at most one query per distinct
// token in flight (security checklist item 57). Nothing is cached beyond
// the flight: a revocation, an expiry or a role change takes effect on the
// next lookup.
type authFlights struct {
	g singleflight.Group
	// joined and lookup, when set (tests), run after a caller joined a
	// flight and inside a flight before its lookup.
	joined, lookup func()
}

// do returns the result of lookup(h), shared with every concurrent caller
// of the same h. The principal is shared: callers must not modify it (the
// REST middleware works on a copy).
func (f *authFlights) do(ctx context.Context, h string, lookup func(context.Context, string) (*auth.Principal, error)) (*auth.Principal, error) {
	ch := f.g.DoChan(h, func() (any, error) {
		if f.lookup != nil {
			f.lookup()
		}
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), authLookupTimeout)
		defer cancel()
		return lookup(lctx, h)
	})
	if f.joined != nil {
		f.joined()
	}
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*auth.Principal), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
