package clickhouse_test

import (
	"strings"
	"testing"
)

// TestCheckSchema: a migrated table fits; a table without a column of
// logColumns, or with one of another type, is refused with the columns
// named, by CheckSchema and so by Migrate.
func TestCheckSchema(t *testing.T) {
	ctx := t.Context()
	s := open(t)
	if err := s.CheckSchema(ctx); err != nil {
		t.Fatalf("CheckSchema after Migrate: %v", err)
	}
	if err := s.Exec(ctx, "ALTER TABLE request_logs DROP COLUMN spans"); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, "ALTER TABLE request_logs MODIFY COLUMN ttfb_ms Int32"); err != nil {
		t.Fatal(err)
	}
	err := s.CheckSchema(ctx)
	if err == nil {
		t.Fatal("CheckSchema of a changed table: no error")
	}
	for _, want := range []string{"spans is missing", "ttfb_ms is Int32, want Int64"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckSchema: %v, want it to say %q", err, want)
		}
	}
	if _, err := s.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "spans is missing") {
		t.Errorf("Migrate on the changed table: %v, want the schema error", err)
	}
}
