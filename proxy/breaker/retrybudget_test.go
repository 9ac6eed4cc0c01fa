package breaker

import (
	"sync"
	"sync/atomic"
	"testing"
)

// A retry is admitted while fewer retries are in flight than max(3, 20 % of the attempts in
// flight); an admitted retry holds its slot until DoneRetry.
func TestRetryBudget(t *testing.T) {
	s := NewSet(nil)
	r := s.RetryBudget("gw", "openai")
	if s.RetryBudget("gw", "openai") != r {
		t.Fatal("RetryBudget returned a new budget for the same gateway and provider")
	}
	if s.RetryBudget("gw", "groq") == r || s.RetryBudget("gw2", "openai") == r {
		t.Fatal("budgets are shared across providers or gateways")
	}

	// Few attempts in flight: the minimum, 3.
	for i := range MinRetryConcurrency {
		if !r.TryRetry() {
			t.Fatalf("retry %d refused with %d in flight; the minimum is %d", i+1, i, MinRetryConcurrency)
		}
	}
	if r.TryRetry() {
		t.Fatal("a fourth retry admitted with 0 attempts in flight")
	}
	r.DoneRetry()
	if !r.TryRetry() {
		t.Fatal("a retry refused after one ended")
	}

	// 50 attempts in flight: 20 % of them, 10.
	for range 50 {
		r.Begin()
	}
	n := MinRetryConcurrency
	for r.TryRetry() {
		n++
	}
	if n != 10 {
		t.Fatalf("%d retries admitted with 50 attempts in flight, want 10", n)
	}
	if a, rt := r.InFlight(); a != 50 || rt != 10 {
		t.Fatalf("InFlight() = %d, %d; want 50, 10", a, rt)
	}
	for range 50 {
		r.End()
	}
	for range n {
		r.DoneRetry()
	}
	if a, rt := r.InFlight(); a != 0 || rt != 0 {
		t.Fatalf("InFlight() after everything ended = %d, %d; want 0, 0", a, rt)
	}

	s.Forget("gw")
	if s.RetryBudget("gw", "openai") == r {
		t.Fatal("Forget kept the gateway's retry budget")
	}
}

// Concurrent TryRetry calls never admit more than the budget.
func TestRetryBudgetConcurrent(t *testing.T) {
	r := NewSet(nil).RetryBudget("gw", "openai")
	for range 100 {
		r.Begin()
	}
	var admitted atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 64 {
		wg.Go(func() {
			<-start
			if r.TryRetry() {
				admitted.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if got := admitted.Load(); got != 20 {
		t.Fatalf("%d retries admitted with 100 attempts in flight, want exactly 20", got)
	}
}

func BenchmarkRetryBudgetBeginEnd(b *testing.B) {
	s := NewSet(nil)
	s.RetryBudget("gw_01JABCDEFGHJKMNPQRSTVWXYZ0", "openai")
	b.ReportAllocs()
	for b.Loop() {
		r := s.RetryBudget("gw_01JABCDEFGHJKMNPQRSTVWXYZ0", "openai")
		r.Begin()
		r.End()
	}
}
