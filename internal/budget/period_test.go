package budget_test

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/budget"
)

func utc(y int, m time.Month, d, h, mi, s int) time.Time {
	return time.Date(y, m, d, h, mi, s, 0, time.UTC)
}

func TestWindow(t *testing.T) {
	berlin := time.FixedZone("CET", 1*3600)
	tokyo := time.FixedZone("JST", 9*3600)
	newYork := time.FixedZone("EST", -5*3600)
	tests := []struct {
		name      string
		period    string
		now       time.Time
		wantStart time.Time
		wantReset time.Time
	}{
		// daily
		{"daily midnight", "daily", utc(2026, 3, 10, 0, 0, 0), utc(2026, 3, 10, 0, 0, 0), utc(2026, 3, 11, 0, 0, 0)},
		{"daily last second", "daily", utc(2026, 3, 10, 23, 59, 59), utc(2026, 3, 10, 0, 0, 0), utc(2026, 3, 11, 0, 0, 0)},
		{"daily year end", "daily", utc(2026, 12, 31, 12, 0, 0), utc(2026, 12, 31, 0, 0, 0), utc(2027, 1, 1, 0, 0, 0)},
		{"daily leap day", "daily", utc(2028, 2, 29, 5, 0, 0), utc(2028, 2, 29, 0, 0, 0), utc(2028, 3, 1, 0, 0, 0)},
		// weekly: 2026-03-09 is a Monday.
		{"weekly Monday 00:00", "weekly", utc(2026, 3, 9, 0, 0, 0), utc(2026, 3, 9, 0, 0, 0), utc(2026, 3, 16, 0, 0, 0)},
		{"weekly Wednesday", "weekly", utc(2026, 3, 11, 14, 30, 0), utc(2026, 3, 9, 0, 0, 0), utc(2026, 3, 16, 0, 0, 0)},
		{"weekly Sunday 23:59:59", "weekly", utc(2026, 3, 15, 23, 59, 59), utc(2026, 3, 9, 0, 0, 0), utc(2026, 3, 16, 0, 0, 0)},
		{"weekly next Monday 00:00", "weekly", utc(2026, 3, 16, 0, 0, 0), utc(2026, 3, 16, 0, 0, 0), utc(2026, 3, 23, 0, 0, 0)},
		{"weekly across months", "weekly", utc(2026, 4, 2, 8, 0, 0), utc(2026, 3, 30, 0, 0, 0), utc(2026, 4, 6, 0, 0, 0)},
		{"weekly across years", "weekly", utc(2027, 1, 2, 8, 0, 0), utc(2026, 12, 28, 0, 0, 0), utc(2027, 1, 4, 0, 0, 0)},
		// monthly
		{"monthly Jan 31", "monthly", utc(2026, 1, 31, 23, 59, 59), utc(2026, 1, 1, 0, 0, 0), utc(2026, 2, 1, 0, 0, 0)},
		{"monthly Feb 1 00:00", "monthly", utc(2026, 2, 1, 0, 0, 0), utc(2026, 2, 1, 0, 0, 0), utc(2026, 3, 1, 0, 0, 0)},
		{"monthly Feb 28 non-leap", "monthly", utc(2026, 2, 28, 12, 0, 0), utc(2026, 2, 1, 0, 0, 0), utc(2026, 3, 1, 0, 0, 0)},
		{"monthly leap Feb 29", "monthly", utc(2028, 2, 29, 12, 0, 0), utc(2028, 2, 1, 0, 0, 0), utc(2028, 3, 1, 0, 0, 0)},
		{"monthly December", "monthly", utc(2026, 12, 15, 0, 0, 0), utc(2026, 12, 1, 0, 0, 0), utc(2027, 1, 1, 0, 0, 0)},
		// non-UTC input: converted to UTC before the calendar applies.
		{"daily Tokyo morning is previous UTC day", "daily",
			time.Date(2026, 3, 11, 8, 0, 0, 0, tokyo), utc(2026, 3, 10, 0, 0, 0), utc(2026, 3, 11, 0, 0, 0)},
		{"weekly New York Sunday evening is UTC Monday", "weekly",
			time.Date(2026, 3, 15, 20, 0, 0, 0, newYork), utc(2026, 3, 16, 0, 0, 0), utc(2026, 3, 23, 0, 0, 0)},
		{"weekly Berlin Monday 00:30 is UTC Sunday", "weekly",
			time.Date(2026, 3, 16, 0, 30, 0, 0, berlin), utc(2026, 3, 9, 0, 0, 0), utc(2026, 3, 16, 0, 0, 0)},
		{"monthly Berlin Feb 1 00:30 is UTC Jan 31", "monthly",
			time.Date(2026, 2, 1, 0, 30, 0, 0, berlin), utc(2026, 1, 1, 0, 0, 0), utc(2026, 2, 1, 0, 0, 0)},
		{"monthly New York Jan 31 20:00 is UTC Feb 1", "monthly",
			time.Date(2026, 1, 31, 20, 0, 0, 0, newYork), utc(2026, 2, 1, 0, 0, 0), utc(2026, 3, 1, 0, 0, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, reset := budget.Window(tt.period, tt.now)
			if !start.Equal(tt.wantStart) {
				t.Errorf("start: got %v, want %v", start, tt.wantStart)
			}
			if start.Location() != time.UTC {
				t.Errorf("start location: got %v, want UTC", start.Location())
			}
			if reset == nil {
				t.Fatalf("resetsAt: got nil, want %v", tt.wantReset)
			}
			if !reset.Equal(tt.wantReset) {
				t.Errorf("resetsAt: got %v, want %v", *reset, tt.wantReset)
			}
			if reset.Location() != time.UTC {
				t.Errorf("resetsAt location: got %v, want UTC", reset.Location())
			}
			if tt.now.Before(start) || !tt.now.Before(*reset) {
				t.Errorf("now %v outside [%v, %v)", tt.now, start, *reset)
			}
		})
	}
}

func TestWindowTotal(t *testing.T) {
	for _, now := range []time.Time{utc(2026, 3, 10, 12, 0, 0), time.Date(2030, 1, 1, 0, 0, 0, 0, time.FixedZone("X", 3600))} {
		t.Run(now.String(), func(t *testing.T) {
			start, reset := budget.Window("total", now)
			if !start.IsZero() {
				t.Errorf("start: got %v, want the zero time", start)
			}
			if reset != nil {
				t.Errorf("resetsAt: got %v, want nil", *reset)
			}
		})
	}
}

func TestValidPeriod(t *testing.T) {
	tests := []struct {
		period string
		want   bool
	}{
		{"daily", true},
		{"weekly", true},
		{"monthly", true},
		{"total", true},
		{"", false},
		{"Daily", false},
		{"yearly", false},
		{"hourly", false},
		{" daily", false},
	}
	for _, tt := range tests {
		t.Run(tt.period, func(t *testing.T) {
			if got := budget.ValidPeriod(tt.period); got != tt.want {
				t.Errorf("ValidPeriod(%q): got %v, want %v", tt.period, got, tt.want)
			}
		})
	}
}
