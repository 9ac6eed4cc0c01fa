// Package ratelimit counts requests and tokens per minute in sliding
// windows: the rate limits of gateways, tokens and users.
//
// A window is the last 60 seconds, kept as per-second buckets: a count
// made at second s stops counting at second s+60. The window therefore
// slides one second at a time and never resets all at once, as a fixed
// per-minute counter would (which lets through twice the limit across a
// minute boundary).
//
// Two implementations share these semantics exactly: Local, per process,
// and Redis, one atomic Lua script per call, shared by every proxy replica
// using the same Redis. Redis falls back to a Local limiter with divided
// limits while Redis cannot be reached.
package ratelimit

import (
	"context"
	"time"
)

// Window is the length of every window.
const Window = time.Minute

// windowSeconds is Window in buckets of one second.
const windowSeconds = int64(Window / time.Second)

// Limiter counts costs against per-key limits in sliding windows of one
// minute. Keys are opaque ("gw:<id>:rpm"); the limit is passed on every
// call, so a changed limit applies to the counts already made.
type Limiter interface {
	// Allow counts cost against key when the window allows it: when the
	// window's count is below limit and count+cost does not exceed it. A
	// cost of 0 counts nothing and only checks that the limit is not yet
	// reached (tokens per minute, whose cost is known only afterwards).
	// A refused call counts nothing.
	Allow(ctx context.Context, key string, limit int, cost int, now time.Time) (Decision, error)
	// Add counts cost against key unconditionally: the tokens of a
	// finished request. A negative cost takes back a count made by Allow
	// at the same now (a request refused by a later check, a reservation
	// trued up): it only lowers the bucket of that second, never below
	// zero, and does nothing once that bucket has left the window.
	Add(ctx context.Context, key string, cost int, now time.Time) error
}

// TrueUp replaces a reservation made by Allow at at — reserved counted in
// the bucket of that second — with actual, the real cost known at now:
// it adds the difference to that bucket while it is still in the window
// (one call), and counts actual at now once the reservation has left it.
// Tokens per minute are reserved this way: the request's estimate at
// admission, its real tokens when it ends.
func TrueUp(ctx context.Context, l Limiter, key string, reserved, actual int, at, now time.Time) error {
	if floorDiv(now.UnixMilli(), 1000)-floorDiv(at.UnixMilli(), 1000) >= windowSeconds {
		return l.Add(ctx, key, actual, now)
	}
	return l.Add(ctx, key, actual-reserved, at)
}

// Decision is the answer of Allow.
type Decision struct {
	// Allowed reports whether the cost was counted.
	Allowed bool
	// Remaining is what is left of the limit after this call, never
	// negative.
	Remaining int
	// ResetAfter is the time until the window is empty again (OpenAI's
	// x-ratelimit-reset-*); 0 when it is empty.
	ResetAfter time.Duration
	// RetryAfter is, for a refused call, the time until the same call
	// would be allowed: when enough of the oldest counts have left the
	// window. A cost above the limit can never be allowed; its RetryAfter
	// is the whole window. 0 for an allowed call.
	RetryAfter time.Duration
}

// bucket is the count of one second.
type bucket struct {
	sec int64 // unix second
	n   int64
}

// decide is the rule both implementations apply: live holds the window's
// nonzero buckets in ascending second order and used is their sum. It
// returns the decision and whether cost is to be counted.
func decide(live []bucket, used, limit, cost int64, now time.Time) Decision {
	nowMS := now.UnixMilli()
	nowSec := floorDiv(nowMS, 1000)
	var d Decision
	if used < limit && used+cost <= limit {
		d.Allowed = true
		used += cost
	}
	d.Remaining = int(max(limit-used, 0))
	newest := int64(-1 << 62)
	if len(live) > 0 {
		newest = live[len(live)-1].sec
	}
	if d.Allowed && cost > 0 {
		newest = max(newest, nowSec)
	}
	if used > 0 && newest > -1<<62 {
		d.ResetAfter = msDuration((newest+windowSeconds)*1000 - nowMS)
	}
	if !d.Allowed {
		d.RetryAfter = Window
		u := used
		for _, b := range live {
			u -= b.n
			if u < limit && u+cost <= limit {
				d.RetryAfter = msDuration((b.sec+windowSeconds)*1000 - nowMS)
				break
			}
		}
	}
	return d
}

// msDuration converts milliseconds to a Duration, never negative.
func msDuration(ms int64) time.Duration {
	return time.Duration(max(ms, 0)) * time.Millisecond
}

// floorDiv divides rounding towards negative infinity, as Lua's
// math.floor does, so that both implementations agree on the bucket of
// any instant.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
