// Package embeddedtest opens embedded analytics stores for tests of the
// packages that read them (the admin API's GraphQL and REST tests).
package embeddedtest

import (
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/embedded"
)

// Open returns a store in a temporary directory holding recs, closed when
// the test ends.
func Open(tb testing.TB, recs ...*analytics.Record) *embedded.Store {
	tb.Helper()
	s, err := embedded.Open(tb.Context(), filepath.Join(tb.TempDir(), "analytics.db"))
	if err != nil {
		tb.Fatalf("open analytics: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	if err := s.Write(tb.Context(), &analytics.Batch{ID: "embeddedtest", Records: recs}); err != nil {
		tb.Fatalf("write analytics: %v", err)
	}
	return s
}
