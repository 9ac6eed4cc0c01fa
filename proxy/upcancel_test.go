package proxy

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// closeCounter counts its Close calls.
type closeCounter struct{ n atomic.Int32 }

func (c *closeCounter) Close() error { c.n.Add(1); return nil }

// The pooled context of upstream calls (issue 17) ends as the context
// package's would: at cancel with Canceled, closing the connection of the
// call in flight; at its deadline with DeadlineExceeded, Done closed;
// at the hard stop, for a context in use and one taken afterwards. One
// given back and taken again starts afresh.
func TestUpCancel(t *testing.T) {
	hard, stop := context.WithCancel(context.Background())
	defer stop()
	p := &upCancels{hardStop: hard}

	u := p.get(time.Now().Add(time.Hour))
	var conn closeCounter
	u.CloseOnEnd(&conn)
	if u.Err() != nil {
		t.Fatalf("Err = %v before anything ended it", u.Err())
	}
	u.cancel()
	if !errors.Is(u.Err(), context.Canceled) || conn.n.Load() != 1 || u.StopClose() {
		t.Errorf("after cancel: Err %v, %d closes, StopClose true; want Canceled, 1, false", u.Err(), conn.n.Load())
	}
	select {
	case <-u.Done():
	default:
		t.Error("Done not closed after cancel")
	}
	p.put(u)

	u2 := p.get(time.Now().Add(50 * time.Millisecond))
	if u2 != u {
		t.Fatal("the pool did not hand back the context it was given")
	}
	if u2.Err() != nil {
		t.Fatalf("a context taken again: Err = %v, want nil", u2.Err())
	}
	var conn2 closeCounter
	u2.CloseOnEnd(&conn2)
	if !u2.StopClose() || conn2.n.Load() != 0 {
		t.Error("StopClose before the end: want true and the connection open")
	}
	select {
	case <-u2.Done():
		if !errors.Is(u2.Err(), context.DeadlineExceeded) {
			t.Errorf("Err at the deadline = %v, want DeadlineExceeded", u2.Err())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed at the deadline")
	}
	if d, ok := u2.Deadline(); !ok || d.IsZero() {
		t.Error("no deadline")
	}
	p.put(u2)

	u3 := p.get(time.Now().Add(time.Hour))
	var conn3 closeCounter
	u3.CloseOnEnd(&conn3)
	stop()
	select {
	case <-u3.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the hard stop did not end a context in use")
	}
	if !errors.Is(u3.Err(), context.Canceled) || conn3.n.Load() != 1 {
		t.Errorf("at the hard stop: Err %v, %d closes; want Canceled, 1", u3.Err(), conn3.n.Load())
	}
	p.put(u3)
	if u4 := p.get(time.Now().Add(time.Hour)); !errors.Is(u4.Err(), context.Canceled) {
		t.Errorf("a context taken after the hard stop: Err = %v, want Canceled", u4.Err())
	}
}
