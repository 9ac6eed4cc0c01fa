package admin

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/testenv"
)

// signInService returns a service on SQLite with the given sign-in limits.
func signInService(t *testing.T, l SignInLimits) *Service {
	t.Helper()
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: testenv.Store(t, testenv.SQLite), Box: box, SignIn: l})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func statusOf(err error) int {
	if err == nil {
		return 201
	}
	ae, _ := apierr.From(err)
	return ae.Status
}

// TestSignInFreshEmailsAreThrottled checks defect 1 of issue 12: attempts
// with a fresh email each, from one address, were never throttled (the
// only limit was per email and address); now the address's limit stops
// them, before any hashing.
func TestSignInFreshEmailsAreThrottled(t *testing.T) {
	s := signInService(t, SignInLimits{PerAddress: 5})
	var hashes atomic.Int64
	s.hashes.hook = func() { hashes.Add(1) }
	ctx := context.Background()
	var statuses []int
	for i := range 12 {
		_, err := s.CreateSession(ctx, fmt.Sprintf("fresh%d@nowhere.test", i), "some password", "203.0.113.7")
		statuses = append(statuses, statusOf(err))
	}
	want := []int{401, 401, 401, 401, 401, 429, 429, 429, 429, 429, 429, 429}
	if fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Fatalf("statuses %v, want %v", statuses, want)
	}
	if n := hashes.Load(); n != 5 {
		t.Fatalf("%d passwords hashed, want 5: a refused attempt costs no hash", n)
	}
	// IPv6 addresses count per /64: a client rotating within its block
	// is one client.
	s = signInService(t, SignInLimits{PerAddress: 3})
	statuses = nil
	for i := range 5 {
		_, err := s.CreateSession(ctx, fmt.Sprintf("fresh%d@nowhere.test", i), "some password", fmt.Sprintf("2001:db8:1:2::%x", i+1))
		statuses = append(statuses, statusOf(err))
	}
	if fmt.Sprint(statuses) != fmt.Sprint([]int{401, 401, 401, 429, 429}) {
		t.Fatalf("IPv6 statuses %v, want three 401 then 429", statuses)
	}
}

// TestSignInNamedUserNotLockedOut checks that a flood from one address —
// fresh emails, and wrong passwords for a real user's email — locks that
// user out neither from another address nor, once it has signed in from
// it, from the flooded address itself (a NAT or a load balancer shared with
// the attacker).
func TestSignInNamedUserNotLockedOut(t *testing.T) {
	s := signInService(t, SignInLimits{PerAddress: 6, PerPair: 3, PerEmail: 5})
	ctx := context.Background()
	const pw = "member password 1"
	member(t, s, "alice@acme.test", pw)
	const shared, other = "198.51.100.1", "198.51.100.2"

	if _, err := s.CreateSession(ctx, "alice@acme.test", pw, shared); err != nil {
		t.Fatalf("first sign-in: %v", err)
	}
	// The flood from the shared address: wrong passwords for alice until
	// her pair limit, then fresh emails until the address limit.
	for range 5 {
		_, _ = s.CreateSession(ctx, "alice@acme.test", "wrong password", shared)
	}
	for i := range 20 {
		_, err := s.CreateSession(ctx, fmt.Sprintf("bot%d@x.test", i), "wrong password", shared)
		if i >= 10 && statusOf(err) != 429 {
			t.Fatalf("flood attempt %d: status %d, want 429", i, statusOf(err))
		}
	}
	_, err := s.CreateSession(ctx, "bob@acme.test", "whatever password", shared)
	wantCode(t, err, 429, "rate_limit_exceeded")

	// Alice from another address: the flood spent only its pair's share
	// of her email's limit.
	if _, err := s.CreateSession(ctx, "alice@acme.test", pw, other); err != nil {
		t.Fatalf("alice from another address: %v", err)
	}
	// Alice from the flooded address, after her pair's minute: she signed
	// in from there before, so the address limit does not hold her.
	clock := s.cfg.Now
	s.cfg.Now = func() time.Time { return clock().Add(time.Minute) }
	for i := range 10 {
		_, _ = s.CreateSession(ctx, fmt.Sprintf("bot-again%d@x.test", i), "wrong password", shared)
	}
	_, err = s.CreateSession(ctx, "carol@acme.test", "whatever password", shared)
	wantCode(t, err, 429, "rate_limit_exceeded")
	if _, err := s.CreateSession(ctx, "alice@acme.test", pw, shared); err != nil {
		t.Fatalf("alice from the flooded address she signed in from before: %v", err)
	}
}

// TestSignInBoundsInputFirst checks that an over-long email or password is
// refused before anything else: no limiter key, no hash.
func TestSignInBoundsInputFirst(t *testing.T) {
	s := signInService(t, SignInLimits{})
	var hashes atomic.Int64
	s.hashes.hook = func() { hashes.Add(1) }
	ctx := context.Background()
	_, err := s.CreateSession(ctx, strings.Repeat("a", 300)+"@x.test", "password", "192.0.2.1")
	wantParam(t, err, 400, "invalid_request", "email")
	_, err = s.CreateSession(ctx, "a@x.test", strings.Repeat("p", 257), "192.0.2.1")
	wantParam(t, err, 400, "invalid_request", "password")
	if n := s.logins.addr.size() + s.logins.pair.size() + s.logins.email.size(); n != 0 || hashes.Load() != 0 {
		t.Fatalf("refused input left %d limiter keys and %d hashes, want none", n, hashes.Load())
	}
}

// TestPasswordHashingIsBounded checks that at most SignInLimits.Hashes
// passwords are hashed at once, that at most HashQueue callers wait, and
// that the others are answered 503 at once (each hash holds 19 MiB: 400
// concurrent sign-ins took the process from 44 MB to 2.3 GB).
func TestPasswordHashingIsBounded(t *testing.T) {
	const hashesAtOnce, queue, callers = 2, 3, 20
	s := signInService(t, SignInLimits{Hashes: hashesAtOnce, HashQueue: queue, HashWait: time.Minute})
	var cur, peak atomic.Int64
	release := make(chan struct{})
	s.hashes.hook = func() {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		cur.Add(-1)
	}
	ctx := context.Background()
	var busy atomic.Int64
	var wg sync.WaitGroup
	results := make(chan int, callers)
	for i := range callers {
		wg.Go(func() {
			// Distinct addresses: the limiters stay out of the way.
			_, err := s.CreateSession(ctx, fmt.Sprintf("u%d@x.test", i), "password", fmt.Sprintf("192.0.2.%d", i+1))
			if st := statusOf(err); st == 503 {
				busy.Add(1)
			} else {
				results <- st
			}
		})
	}
	// Every caller beyond the slots and the queue is refused at once.
	deadline := time.Now().Add(time.Minute)
	for busy.Load() < callers-hashesAtOnce-queue {
		if time.Now().After(deadline) {
			t.Fatalf("%d callers answered 503, want %d", busy.Load(), callers-hashesAtOnce-queue)
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(results)
	if got := peak.Load(); got != hashesAtOnce {
		t.Fatalf("%d passwords hashed at once, want %d", got, hashesAtOnce)
	}
	if got := busy.Load(); got != callers-hashesAtOnce-queue {
		t.Fatalf("%d callers answered 503, want %d", got, callers-hashesAtOnce-queue)
	}
	for st := range results {
		if st != 401 {
			t.Fatalf("a caller that got a slot answered %d, want 401", st)
		}
	}
	// Setting a password goes through the same slots.
	admin := platformAdmin(t, s)
	if _, err := s.CreateTenant(ctx, admin, TenantInput{ID: "acme"}); err != nil {
		t.Fatal(err)
	}
	s.hashes.hook = func() { cur.Add(1) }
	cur.Store(0)
	if _, err := s.CreateUser(ctx, admin, "acme", UserInput{Email: "m@acme.test", Role: auth.Member, Password: "a long password"}); err != nil {
		t.Fatal(err)
	}
	if cur.Load() != 1 {
		t.Fatalf("setting a password hashed %d times in the slots, want 1", cur.Load())
	}
}

// TestWindowLimiterMemoryIsBounded checks that a limiter holds at most its
// maxKeys keys whatever it is sent, and drops ended windows by age.
func TestWindowLimiterMemoryIsBounded(t *testing.T) {
	l := newWindowLimiter(3, time.Minute, 100)
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for i := range 1000 {
		l.add(fmt.Sprintf("key-%d", i), now)
		if n := l.size(); n > 100 {
			t.Fatalf("after %d keys the limiter holds %d, want at most 100", i+1, n)
		}
	}
	l.add("again", now.Add(30*time.Second))
	// A minute after the flood, its windows have ended and are swept out.
	l.add("later", now.Add(61*time.Second))
	if n := l.size(); n != 2 {
		t.Fatalf("after the window the limiter holds %d keys, want 2 (the live ones)", n)
	}
	for range 3 {
		if !l.allow("k", now) {
			t.Fatal("within the limit refused")
		}
	}
	if l.allow("k", now) {
		t.Fatal("over the limit allowed")
	}
}
