package admin

import (
	"context"
	"net/http"
	"net/netip"
	"runtime"
	"time"

	"github.com/sluicehq/sluice/internal/apierr"
)

// SignInLimits bound the work that sign-in attempts (POST /admin/v1/session)
// can cause; docs/security.md describes them. Zero values take the
// defaults.
//
// Each attempt is counted, before any lookup or hashing, against its client
// address (any email), then against its pair of email and address, then
// against its email (any address); the first limit it exceeds answers 429
// and the attempt counts on no later one. So a flood of fresh emails from
// one address stops at PerAddress, and one address can spend at most
// PerPair of an email's PerEmail: it cannot lock that user out of the other
// addresses. A pair that signed in successfully in the last 24 hours is not
// held to PerAddress (only to PerPair and PerEmail), so that a named user
// behind an address shared with a flood (a NAT, a load balancer that hides
// client addresses) can still sign in.
type SignInLimits struct {
	// PerAddress is the attempts a minute from one client address, any
	// email (default 30). IPv6 addresses count per /64.
	PerAddress int
	// PerPair is the attempts a minute on one email from one address
	// (default 10).
	PerPair int
	// PerEmail is the attempts a minute on one email, any address
	// (default 30).
	PerEmail int
	// Hashes is the number of passwords hashed at once, by sign-ins and by
	// password changes together (default GOMAXPROCS/2, from 1 to 4). Each
	// argon2id hash holds 19 MiB and a core for tens of milliseconds.
	Hashes int
	// HashQueue is the number of callers that may wait for a hash slot
	// (default 16); more are answered 503 at once.
	HashQueue int
	// HashWait is how long a caller waits for a hash slot before it is
	// answered 503 (default 5 s).
	HashWait time.Duration
}

func (l SignInLimits) withDefaults() SignInLimits {
	if l.PerAddress <= 0 {
		l.PerAddress = 30
	}
	if l.PerPair <= 0 {
		l.PerPair = 10
	}
	if l.PerEmail <= 0 {
		l.PerEmail = 30
	}
	if l.Hashes <= 0 {
		l.Hashes = min(max(runtime.GOMAXPROCS(0)/2, 1), 4)
	}
	if l.HashQueue <= 0 {
		l.HashQueue = 16
	}
	if l.HashWait <= 0 {
		l.HashWait = 5 * time.Second
	}
	return l
}

const (
	// signInWindow is the window of the sign-in limits.
	signInWindow = time.Minute
	// knownPairTTL is how long a successful sign-in exempts its pair of
	// email and address from the per-address limit.
	knownPairTTL = 24 * time.Hour
	// maxEmailLen is the longest email an attempt may carry (RFC 5321).
	maxEmailLen = 254
)

// signInLimiter holds the sign-in limits' counters.
type signInLimiter struct {
	addr, pair, email *windowLimiter
	known             *windowLimiter // pairs that signed in successfully
}

func newSignInLimiter(l SignInLimits) *signInLimiter {
	return &signInLimiter{
		addr:  newWindowLimiter(l.PerAddress, signInWindow, defaultMaxKeys),
		pair:  newWindowLimiter(l.PerPair, signInWindow, defaultMaxKeys),
		email: newWindowLimiter(l.PerEmail, signInWindow, defaultMaxKeys),
		known: newWindowLimiter(1, knownPairTTL, defaultMaxKeys),
	}
}

func errTooManySignIns() error {
	return apierr.New(http.StatusTooManyRequests, apierr.CodeRateLimitExceeded, "too many sign-in attempts; try again in a minute")
}

// admit counts an attempt on email (normalised, at most maxEmailLen bytes)
// from ip and answers 429 when a limit is exceeded. The answer is the same
// whichever limit it was.
func (l *signInLimiter) admit(email, ip string, now time.Time) error {
	addr := addressKey(ip)
	pair := email + "|" + addr
	if l.addr.add(addr, now) > l.addr.limit && !l.known.seen(pair, now) {
		return errTooManySignIns()
	}
	if !l.pair.allow(pair, now) || !l.email.allow(email, now) {
		return errTooManySignIns()
	}
	return nil
}

// succeeded records a successful sign-in of email from ip.
func (l *signInLimiter) succeeded(email, ip string, now time.Time) {
	l.known.add(email+"|"+addressKey(ip), now)
}

// addressKey is the limiter key of a client address: the address itself,
// or for IPv6 its /64, the block one subscriber usually holds.
func addressKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip // not an address (a test, a unix socket): itself
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// hashGate bounds the password hashing that runs at once and the callers
// waiting for it, so that neither a flood of sign-ins nor of password
// changes can take the process's memory or CPU.
type hashGate struct {
	// slots holds one token per running hash; its size is
	// SignInLimits.Hashes. A caller blocks on it for at most wait.
	slots chan struct{}
	// tickets holds one token per running or waiting caller; its size is
	// Hashes + HashQueue. When it is full a caller is refused at once.
	tickets chan struct{}
	wait    time.Duration
	// hook, when set (tests), runs in place of nothing inside each slot,
	// before the hash.
	hook func()
}

func newHashGate(l SignInLimits) *hashGate {
	return &hashGate{
		slots:   make(chan struct{}, l.Hashes),
		tickets: make(chan struct{}, l.Hashes+l.HashQueue),
		wait:    l.HashWait,
	}
}

func errHashBusy() error {
	return apierr.Unavailable("too many passwords are being checked right now; try again in a few seconds")
}

// run runs fn in a hash slot, waiting for one as long as g allows. It
// answers 503 when the queue is full or the wait runs out, and the
// context's error when the caller goes away.
func (g *hashGate) run(ctx context.Context, fn func()) error {
	select {
	case g.tickets <- struct{}{}:
	default:
		return errHashBusy()
	}
	defer func() { <-g.tickets }()
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
	case <-t.C:
		return errHashBusy()
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-g.slots }()
	if g.hook != nil {
		g.hook()
	}
	fn()
	return nil
}

// hash returns the argon2id hash of pw, computed in a hash slot.
func (s *Service) hash(ctx context.Context, pw string) (string, error) {
	var h string
	var herr error
	if err := s.hashes.run(ctx, func() { h, herr = hashPassword(pw) }); err != nil {
		return "", err
	}
	return h, herr
}

// verify reports whether pw matches hash, computed in a hash slot.
func (s *Service) verify(ctx context.Context, hash, pw string) (bool, error) {
	var ok bool
	if err := s.hashes.run(ctx, func() { ok = verifyPassword(hash, pw) }); err != nil {
		return false, err
	}
	return ok, nil
}
