// Package page is the one pagination and time-range policy of the admin
// API (CONTRACT §2), shared by both transports (the REST shims and the
// GraphQL resolvers, through the domain) and both analytics backends.
//
// It holds numbers and decisions only: it builds no wire errors, so that
// storage can use it too. Each caller turns a refusal into its own error.
package page

import (
	"time"
	"unicode/utf8"
)

// Page sizes of every listing.
const (
	// DefaultLimit is the page size of a request that names none.
	DefaultLimit = 50
	// MaxLimit is the largest page size a request may ask for.
	MaxLimit = 1000
)

// MaxCursorLen bounds an opaque cursor as read from a request: the
// cursors Sluice returns are far shorter, so a longer one is not ours.
const MaxCursorLen = 512

// DefaultRange is the time range of a stats or log query that names none:
// the DefaultRange up to its end, which defaults to now.
const DefaultRange = 24 * time.Hour

// Valid reports whether n is a page size a request may name: 1 to
// MaxLimit.
func Valid(n int) bool { return n >= 1 && n <= MaxLimit }

// Limit resolves the page size of a request whose absent size is 0 (the
// domain's Page): 0 is DefaultLimit, a Valid size is itself, and anything
// else is refused (ok false). A transport that can tell "absent" from "0"
// refuses an explicit 0 with Valid instead.
func Limit(n int) (limit int, ok bool) {
	switch {
	case n == 0:
		return DefaultLimit, true
	case !Valid(n):
		return 0, false
	}
	return n, true
}

// Clamp is the page size a backend serves when asked for n: DefaultLimit
// for 0 or less, at most MaxLimit. Backends clamp rather than refuse: the
// domain has refused out-of-range sizes before asking.
func Clamp(n int) int {
	switch {
	case n <= 0:
		return DefaultLimit
	case n > MaxLimit:
		return MaxLimit
	}
	return n
}

// Pages is the number of started pages of DefaultLimit rows in a request
// for n rows, the unit of a list's cost in the GraphQL complexity model.
// A size Limit refuses counts as one page: the request fails anyway.
func Pages(n int) int {
	if !Valid(n) {
		return 1
	}
	return (n + DefaultLimit - 1) / DefaultLimit
}

// CursorOK reports whether s can be a cursor this server returned, as far
// as can be told without decoding it: at most MaxCursorLen bytes of valid
// UTF-8. The owner of the cursor (the store or an analytics backend)
// decodes and checks it further.
func CursorOK(s string) bool {
	return len(s) <= MaxCursorLen && utf8.ValidString(s)
}

// Range resolves a time range: a zero to is now, a zero from is
// DefaultRange before to, and both are returned in UTC. ok is false when
// from is not before to.
func Range(from, to, now time.Time) (rfrom, rto time.Time, ok bool) {
	if to.IsZero() {
		to = now
	}
	if from.IsZero() {
		from = to.Add(-DefaultRange)
	}
	if !from.Before(to) {
		return time.Time{}, time.Time{}, false
	}
	return from.UTC(), to.UTC(), true
}
