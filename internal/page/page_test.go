package page

import (
	"strings"
	"testing"
	"time"
)

func TestLimit(t *testing.T) {
	tests := []struct {
		n      int
		want   int
		wantOK bool
	}{
		{0, DefaultLimit, true},
		{1, 1, true},
		{50, 50, true},
		{MaxLimit, MaxLimit, true},
		{MaxLimit + 1, 0, false},
		{-1, 0, false},
		{-1 << 62, 0, false},
		{1 << 62, 0, false},
	}
	for _, tt := range tests {
		got, ok := Limit(tt.n)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("Limit(%d) = %d, %v; want %d, %v", tt.n, got, ok, tt.want, tt.wantOK)
		}
		// Valid is Limit without the default: only an explicit size.
		if want := tt.wantOK && tt.n != 0; Valid(tt.n) != want {
			t.Errorf("Valid(%d) = %v, want %v", tt.n, !want, want)
		}
	}
}

func TestClamp(t *testing.T) {
	for _, tt := range []struct{ n, want int }{
		{0, DefaultLimit}, {-5, DefaultLimit}, {1, 1}, {999, 999}, {MaxLimit, MaxLimit}, {MaxLimit + 1, MaxLimit}, {5000, MaxLimit},
	} {
		if got := Clamp(tt.n); got != tt.want {
			t.Errorf("Clamp(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

func TestPages(t *testing.T) {
	for _, tt := range []struct{ n, want int }{
		{0, 1}, {-1, 1}, {1, 1}, {DefaultLimit, 1}, {DefaultLimit + 1, 2}, {MaxLimit, MaxLimit / DefaultLimit}, {MaxLimit + 1, 1},
	} {
		if got := Pages(tt.n); got != tt.want {
			t.Errorf("Pages(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

func TestCursorOK(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    string
		want bool
	}{
		{"empty (first page)", "", true},
		{"short", "YWJj", true},
		{"at the bound", strings.Repeat("c", MaxCursorLen), true},
		{"over the bound", strings.Repeat("c", MaxCursorLen+1), false},
		{"not UTF-8", "\xff", false},
	} {
		if got := CursorOK(tt.c); got != tt.want {
			t.Errorf("CursorOK(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRange(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name             string
		from, to         time.Time
		wantFrom, wantTo time.Time
		wantOK           bool
	}{
		{"neither: the default range up to now", time.Time{}, time.Time{}, now.Add(-DefaultRange), now, true},
		{"to only", time.Time{}, at("2025-01-02T00:00:00Z"), at("2025-01-01T00:00:00Z"), at("2025-01-02T00:00:00Z"), true},
		{"from only", at("2025-05-01T00:00:00Z"), time.Time{}, at("2025-05-01T00:00:00Z"), now, true},
		{"both, converted to UTC", at("2025-05-01T02:00:00+02:00"), at("2025-05-02T00:00:00Z"), at("2025-05-01T00:00:00Z"), at("2025-05-02T00:00:00Z"), true},
		{"from equal to to", at("2025-05-01T00:00:00Z"), at("2025-05-01T00:00:00Z"), time.Time{}, time.Time{}, false},
		{"from after to", at("2025-05-02T00:00:00Z"), at("2025-05-01T00:00:00Z"), time.Time{}, time.Time{}, false},
		{"from after now, no to", now.Add(time.Hour), time.Time{}, time.Time{}, time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to, ok := Range(tt.from, tt.to, now)
			if ok != tt.wantOK || !from.Equal(tt.wantFrom) || !to.Equal(tt.wantTo) {
				t.Fatalf("Range = %v, %v, %v; want %v, %v, %v", from, to, ok, tt.wantFrom, tt.wantTo, tt.wantOK)
			}
			if ok && (from.Location() != time.UTC || to.Location() != time.UTC) {
				t.Errorf("Range = %v, %v; want UTC times", from, to)
			}
		})
	}
}
