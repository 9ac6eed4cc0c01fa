package routing

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func constRnd(v uint64) func() uint64 { return func() uint64 { return v } }

func TestBackoff(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name       string
		n          int
		base       time.Duration
		retryAfter time.Duration
		deadline   time.Time
		rnd        uint64
		want       time.Duration
		wantOK     bool
	}{
		{"first retry, low jitter", 1, 200 * ms, 0, time.Time{}, 0, 100 * ms, true},
		{"first retry, high jitter", 1, 200 * ms, 0, time.Time{}, math.MaxUint64, 200 * ms, true},
		{"second retry doubles", 2, 200 * ms, 0, time.Time{}, math.MaxUint64, 400 * ms, true},
		{"fourth retry", 4, 200 * ms, 0, time.Time{}, math.MaxUint64, 1600 * ms, true},
		{"cap", 10, 200 * ms, 0, time.Time{}, math.MaxUint64, 10 * time.Second, true},
		{"cap, low jitter", 10, 200 * ms, 0, time.Time{}, 0, 5 * time.Second, true},
		{"huge n", math.MaxInt, 200 * ms, 0, time.Time{}, math.MaxUint64, 10 * time.Second, true},
		{"huge base", 3, time.Duration(math.MaxInt64), 0, time.Time{}, math.MaxUint64, 10 * time.Second, true},
		{"no base", 3, 0, 0, time.Time{}, 0, 0, true},
		{"n below 1", 0, 200 * ms, 0, time.Time{}, math.MaxUint64, 0, true},
		{"retry-after wins", 1, 200 * ms, 3 * time.Second, time.Time{}, math.MaxUint64, 3 * time.Second, true},
		{"computed wins", 5, 200 * ms, time.Second, time.Time{}, math.MaxUint64, 3200 * ms, true},
		{"retry-after beyond cap honoured", 1, 200 * ms, 30 * time.Second, t0.Add(time.Minute), 0, 30 * time.Second, true},
		{"retry-after bounded", 1, 200 * ms, 48 * time.Hour, time.Time{}, 0, time.Hour, true},
		{"fits before deadline", 1, 200 * ms, 0, t0.Add(201 * ms), math.MaxUint64, 200 * ms, true},
		{"reaches deadline", 1, 200 * ms, 0, t0.Add(200 * ms), math.MaxUint64, 0, false},
		{"retry-after past deadline", 1, 200 * ms, 5 * time.Second, t0.Add(2 * time.Second), 0, 0, false},
		{"deadline already passed", 0, 0, 0, t0.Add(-time.Second), 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Backoff(tt.n, tt.base, tt.retryAfter, t0, tt.deadline, constRnd(tt.rnd))
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Backoff(%d, %v, %v) = %v, %v; want %v, %v", tt.n, tt.base, tt.retryAfter, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestBackoffJitterBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := 150 * time.Millisecond
	for n := 1; n <= 12; n++ {
		d := min(base<<(n-1), MaxBackoff)
		lo, hi := d, time.Duration(0)
		for range 2000 {
			got, ok := Backoff(n, base, 0, t0, time.Time{}, r.Uint64)
			if !ok || got < d/2 || got > d {
				t.Fatalf("Backoff(%d) = %v, %v; want within [%v, %v]", n, got, ok, d/2, d)
			}
			lo, hi = min(lo, got), max(hi, got)
		}
		// The draws should cover most of the range, not sit at one end.
		if spread := hi - lo; spread < d/2*9/10 {
			t.Errorf("Backoff(%d) drew only [%v, %v] of [%v, %v]", n, lo, hi, d/2, d)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"5", 5 * time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"0", 0, true},
		{"3600", time.Hour, true},
		{"3601", time.Hour, true},
		{"99999999999999999999999999", time.Hour, true},
		{"-1", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"1e3", 0, false},
		{"abc", 0, false},
		{"", 0, false},
		{"5 s", 0, false},
		{"Sun, 01 Mar 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Sunday, 01-Mar-26 12:02:00 GMT", 2 * time.Minute, true},
		{"Sun Mar  1 12:00:10 2026", 10 * time.Second, true},
		{"Sun, 01 Mar 2026 11:00:00 GMT", 0, true},
		{"Mon, 02 Mar 2026 12:00:00 GMT", time.Hour, true},
		{"Sun, 01 Mar 2026 12:00:30 PST", 0, false},
		{"2026-03-01T12:00:30Z", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := ParseRetryAfter(tt.in, t0)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestParseRetryAfterMS(t *testing.T) {
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"1500", 1500 * time.Millisecond, true},
		{"0", 0, true},
		{"20.5", 20500 * time.Microsecond, true},
		{"0.0019", time.Microsecond, true},
		{"3600000", time.Hour, true},
		{"3599999.9", time.Hour - 100*time.Microsecond, true},
		{"99999999999999999999999", time.Hour, true},
		{"-5", 0, false},
		{"5.", 0, false},
		{".5", 0, false},
		{"1e3", 0, false},
		{"abc", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := ParseRetryAfterMS(tt.in)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ParseRetryAfterMS(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// FuzzParseRetryAfter checks that no upstream header value escapes the bounds.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"5", "0", "-1", "abc", "Sun, 01 Mar 2026 12:00:30 GMT", "1.5", "99999999999999999999", "20.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for name, parse := range map[string]func(string) (time.Duration, bool){
			"ParseRetryAfter":   func(s string) (time.Duration, bool) { return ParseRetryAfter(s, t0) },
			"ParseRetryAfterMS": ParseRetryAfterMS,
		} {
			d, ok := parse(v)
			if d < 0 || d > MaxRetryAfter || (!ok && d != 0) {
				t.Fatalf("%s(%q) = %v, %v; want 0 ≤ d ≤ 1h, and 0 when not ok", name, v, d, ok)
			}
		}
	})
}

func BenchmarkBackoff(b *testing.B) {
	deadline := t0.Add(time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		Backoff(3, 200*time.Millisecond, time.Second, t0, deadline, rand.Uint64)
	}
}
