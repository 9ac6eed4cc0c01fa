// Package budget holds the arithmetic of budgets: their periods on the UTC
// calendar.
package budget

import "time"

// Window returns the start of the current period of a budget and when it
// resets. Periods follow the UTC calendar: days start at 00:00, weeks on
// Monday, months on the 1st. A "total" budget never resets: its start is
// the zero time and resetsAt is nil.
func Window(period string, now time.Time) (start time.Time, resetsAt *time.Time) {
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	var end time.Time
	switch period {
	case "daily":
		start, end = day, day.AddDate(0, 0, 1)
	case "weekly":
		offset := (int(day.Weekday()) + 6) % 7 // days since Monday
		start = day.AddDate(0, 0, -offset)
		end = start.AddDate(0, 0, 7)
	case "monthly":
		start = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		end = start.AddDate(0, 1, 0)
	default: // total
		return time.Time{}, nil
	}
	return start, &end
}

// ValidPeriod reports whether p is a budget period.
func ValidPeriod(p string) bool {
	switch p {
	case "daily", "weekly", "monthly", "total":
		return true
	}
	return false
}
