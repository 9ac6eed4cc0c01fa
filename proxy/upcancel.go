package proxy

import (
	"context"
	"io"
	"sync"
	"time"
)

// The upstream calls of a non-streamed request end when its client goes
// away, at its deadline or at the hard stop of a shutdown. A context made
// with context.WithDeadline on the hard stop, with context.AfterFunc in
// the providers' transport to close the call's connection, cost about
// nine allocations per request (a timer, the contexts, their closures, the
// parent's children entry, the Done channel). upCancel does the same with
// none: it is taken from a pool (upCancels) and given back when the
// request's attempts end, and it closes the connection of the call in
// flight itself (providers.connWatcher).

// upCancel is the context of a non-streamed request's upstream calls. It
// is a context.Context that ends when cancel is called (the client went
// away), at its deadline, or when the hard stop ends; its Err is then
// context.Canceled or context.DeadlineExceeded, as for the contexts of
// the context package.
//
// It is pooled: it must not be used after the request's attempts ended
// (upCancels.put). Nothing keeps it: the providers' client holds it only
// while a call runs.
type upCancel struct {
	// stopHard unregisters it from the pool's hard stop (set once, when
	// it is made).
	stopHard func() bool

	mu       sync.Mutex
	active   bool      // taken from the pool by a request
	deadline time.Time // the request's deadline
	err      error     // why it ended; nil while it has not
	// done is made by the first Done and reused by the next request while
	// it was not closed.
	done chan struct{}
	// closer is the connection of the call in flight (CloseOnEnd), closed
	// when it ends.
	closer io.Closer
	// timer closes done at the deadline. It is armed only when Done is
	// asked for (a backoff's wait): the providers' client bounds its call
	// by Deadline itself, and Err checks the deadline.
	timer *time.Timer
	armed bool
}

var _ context.Context = (*upCancel)(nil)

// Deadline returns the request's deadline.
func (u *upCancel) Deadline() (time.Time, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.deadline, true
}

// Done returns a channel closed when u ends.
func (u *upCancel) Done() <-chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.done == nil {
		u.done = make(chan struct{})
		if u.err != nil {
			close(u.done)
		}
	}
	if u.err == nil && !u.armed {
		u.armed = true
		if u.timer == nil {
			u.timer = time.AfterFunc(time.Until(u.deadline), u.expire)
		} else {
			u.timer.Reset(time.Until(u.deadline))
		}
	}
	return u.done
}

// Err returns nil until u ends, then why.
func (u *upCancel) Err() error {
	u.mu.Lock()
	if u.err == nil && u.active && !time.Now().Before(u.deadline) {
		c := u.endLocked(context.DeadlineExceeded)
		u.mu.Unlock()
		closeQuietly(c)
		return context.DeadlineExceeded
	}
	err := u.err
	u.mu.Unlock()
	return err
}

// Value returns nil: u carries no values.
func (u *upCancel) Value(any) any { return nil }

// CloseOnEnd closes c when u ends, at once if it has ended; StopClose
// undoes it. One call is in flight at a time: the request's attempts run
// one after the other.
func (u *upCancel) CloseOnEnd(c io.Closer) {
	u.mu.Lock()
	if u.err != nil {
		u.mu.Unlock()
		closeQuietly(c)
		return
	}
	u.closer = c
	u.mu.Unlock()
}

// StopClose undoes CloseOnEnd. It returns false when u ended meanwhile:
// the connection was or is being closed.
func (u *upCancel) StopClose() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closer = nil
	return u.err == nil
}

// cancel ends u: the request's client went away.
func (u *upCancel) cancel() { u.end(context.Canceled, false) }

// expire ends u at its deadline: the timer armed by Done. A timer of an
// earlier request that fires late finds the deadline ahead and does
// nothing.
func (u *upCancel) expire() { u.end(context.DeadlineExceeded, true) }

// hardStopped ends u if a request holds it: the shutdown's grace period
// is over. A request that takes u afterwards finds the hard stop ended
// (upCancels.get).
func (u *upCancel) hardStopped() { u.end(context.Canceled, false) }

// end ends u with err if a request holds it and it has not ended (and,
// atDeadline, only once its deadline has passed), closing the
// connection of the call in flight outside the lock.
func (u *upCancel) end(err error, atDeadline bool) {
	u.mu.Lock()
	if !u.active || u.err != nil || atDeadline && time.Now().Before(u.deadline) {
		u.mu.Unlock()
		return
	}
	c := u.endLocked(err)
	u.mu.Unlock()
	closeQuietly(c)
}

// endLocked sets err, closes done and returns the closer to close.
func (u *upCancel) endLocked(err error) io.Closer {
	u.err = err
	if u.done != nil {
		close(u.done)
	}
	c := u.closer
	u.closer = nil
	return c
}

func closeQuietly(c io.Closer) {
	if c != nil {
		_ = c.Close()
	}
}

// maxFreeUpCancels bounds the pool: the non-streamed requests in flight
// at a peak beyond it make contexts that are dropped afterwards.
const maxFreeUpCancels = 1024

// upCancels is the pool of upCancel. Each context registers once, when it
// is made, with the hard stop; one dropped from a full pool unregisters.
// A free list under a mutex rather than a sync.Pool: a context the
// sync.Pool dropped would stay registered with the hard stop.
type upCancels struct {
	hardStop context.Context
	mu       sync.Mutex
	free     []*upCancel
}

// get returns a context that ends at deadline, at the hard stop, or at
// cancel.
func (p *upCancels) get(deadline time.Time) *upCancel {
	p.mu.Lock()
	var u *upCancel
	if n := len(p.free); n > 0 {
		u = p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
	}
	p.mu.Unlock()
	if u == nil {
		u = &upCancel{}
		u.stopHard = context.AfterFunc(p.hardStop, u.hardStopped)
	}
	u.mu.Lock()
	u.active, u.deadline = true, deadline
	u.mu.Unlock()
	// The hard stop may have ended while u was in the pool, where
	// hardStopped ignores it.
	if p.hardStop.Err() != nil {
		u.hardStopped()
	}
	return u
}

// put gives u back once its request's attempts ended.
func (p *upCancels) put(u *upCancel) {
	u.mu.Lock()
	u.active, u.closer = false, nil
	if u.armed {
		u.timer.Stop()
		u.armed = false
	}
	if u.err != nil {
		u.err, u.done = nil, nil // a closed channel cannot serve again
	}
	u.mu.Unlock()
	p.mu.Lock()
	if len(p.free) < maxFreeUpCancels {
		p.free = append(p.free, u)
		u = nil
	}
	p.mu.Unlock()
	if u != nil {
		u.stopHard()
	}
}
