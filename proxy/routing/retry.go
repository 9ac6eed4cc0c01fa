package routing

import (
	"strconv"
	"strings"
	"time"
)

// MaxBackoff caps the computed exponential backoff; a longer Retry-After is still honoured.
const MaxBackoff = 10 * time.Second

// MaxRetryAfter bounds a Retry-After from upstream, so that a bogus or hostile value cannot park
// a request (or a key) for days.
const MaxRetryAfter = time.Hour

// Backoff returns the wait before attempt n of a request, where n = 1 is the first retry (n < 1
// waits for nothing but retryAfter). The computed wait is base·2^(n-1), capped at MaxBackoff,
// with jitter drawn uniformly from [d/2, d] so that clients failing together do not retry
// together. A positive retryAfter (from the upstream's Retry-After) raises the wait to at least
// that, up to MaxRetryAfter. ok is false when the wait would reach the deadline: the caller
// should give up rather than sleep past the request's timeout. A zero deadline means none. rnd
// is the source of randomness (rand.Uint64 in production) and must not be nil when base > 0.
func Backoff(n int, base, retryAfter time.Duration, now, deadline time.Time, rnd func() uint64) (time.Duration, bool) {
	var d time.Duration
	if n >= 1 && base > 0 {
		d = base
		for i := 1; i < n && d < MaxBackoff; i++ {
			d *= 2
		}
		d = min(d, MaxBackoff)
		half := d / 2
		d = half + time.Duration(uniform(rnd(), uint64(d-half)+1))
	}
	wait := max(d, min(retryAfter, MaxRetryAfter))
	if !deadline.IsZero() && !now.Add(wait).Before(deadline) {
		return 0, false
	}
	return wait, true
}

// HTTP-date layouts accepted by RFC 9110 §5.6.7: IMF-fixdate and the two obsolete forms.
var httpDateLayouts = [...]string{
	"Mon, 02 Jan 2006 15:04:05 GMT",
	"Monday, 02-Jan-06 15:04:05 GMT",
	"Mon Jan _2 15:04:05 2006",
}

// ParseRetryAfter parses a Retry-After header value: delta-seconds ("120") or an HTTP date,
// taken relative to now (a date in the past means "now": 0, true). The result is bounded to
// MaxRetryAfter. Anything else — negative numbers, fractions, garbage — gives 0, false.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		return boundedSeconds(v, time.Second)
	}
	for _, layout := range httpDateLayouts {
		t, err := time.Parse(layout, v)
		if err != nil {
			continue
		}
		d := t.Sub(now)
		return min(max(d, 0), MaxRetryAfter), true
	}
	return 0, false
}

// ParseRetryAfterMS parses the OpenAI-style retry-after-ms header: non-negative milliseconds,
// possibly with a fraction ("1500", "20.5"). The result is bounded to MaxRetryAfter; anything
// else gives 0, false.
func ParseRetryAfterMS(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	whole, frac, hasDot := strings.Cut(v, ".")
	if !isDigits(whole) || (hasDot && !isDigits(frac)) {
		return 0, false
	}
	d, ok := boundedSeconds(whole, time.Millisecond)
	if !ok || d == MaxRetryAfter || !hasDot {
		return d, ok
	}
	// Sub-millisecond precision is noise for a retry delay; keep up to microseconds.
	var us time.Duration
	for i := range min(len(frac), 3) {
		us = us*10 + time.Duration(frac[i]-'0')
	}
	for range 3 - min(len(frac), 3) {
		us *= 10
	}
	return min(d+us*time.Microsecond, MaxRetryAfter), true
}

// boundedSeconds converts a string of digits counting units into a duration bounded to
// MaxRetryAfter; values too large to parse are bounded too.
func boundedSeconds(digits string, unit time.Duration) (time.Duration, bool) {
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n > uint64(MaxRetryAfter/unit) {
		return MaxRetryAfter, true // only digits, so the only possible error is overflow
	}
	return time.Duration(n) * unit, true
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
