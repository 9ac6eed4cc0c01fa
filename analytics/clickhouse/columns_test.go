package clickhouse

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/clickhouse/migrations"
)

// TestLogColumnsMatchMigrations holds logColumns, which drives the writer
// and the reader, to the DDL of the migrations: the same columns, in the
// same order, of the same types. It needs no server; CheckSchema does the
// same against a server's table at start.
func TestLogColumnsMatchMigrations(t *testing.T) {
	ms, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	create := regexp.MustCompile(`(?s)^CREATE TABLE IF NOT EXISTS request_logs \((.*)\) ENGINE`)
	alter := regexp.MustCompile(`(?s)^ALTER TABLE request_logs\s+(.*)$`)
	var ddl [][2]string
	column := func(def string) {
		def = strings.TrimSpace(def)
		name, typ, ok := strings.Cut(def, " ")
		if !ok {
			t.Fatalf("column definition %q", def)
		}
		ddl = append(ddl, [2]string{name, strings.TrimSpace(typ)})
	}
	for _, m := range ms {
		for _, stmt := range m.Statements {
			if g := create.FindStringSubmatch(stmt); g != nil {
				for _, line := range strings.Split(g[1], "\n") {
					if line = strings.TrimSuffix(strings.TrimSpace(line), ","); line != "" {
						column(line)
					}
				}
			}
			if g := alter.FindStringSubmatch(stmt); g != nil {
				for _, cmd := range strings.Split(g[1], ",") {
					def, ok := strings.CutPrefix(strings.TrimSpace(cmd), "ADD COLUMN ")
					if !ok {
						t.Fatalf("migration %s: request_logs command %q is not an ADD COLUMN; extend this test", m.Name, cmd)
					}
					column(def)
				}
			}
		}
	}
	var described [][2]string
	for _, c := range logColumns {
		described = append(described, [2]string{c.name, c.chType})
	}
	if diff := cmp.Diff(ddl, described); diff != "" {
		t.Errorf("logColumns against the migrations' request_logs (-migrations +logColumns):\n%s", diff)
	}
	for _, c := range logColumns {
		if (c.read == writeOnly) != (c.cell == nil) {
			t.Errorf("column %s: read %d with a cell %v", c.name, c.read, c.cell != nil)
		}
	}
}

// TestFieldOffset: the writer reads a field at the offset its accessor
// gives; an accessor that returns no field of its record is refused when
// the table is built, not read out of bounds later.
func TestFieldOffset(t *testing.T) {
	r := &analytics.Record{Model: "m", TokensIn: 7}
	if got := *fieldAt[string](r, fieldOffset(func(r *analytics.Record) *string { return &r.Model })); got != "m" {
		t.Errorf("Model at its offset = %q, want m", got)
	}
	if got := *fieldAt[int64](r, fieldOffset(func(r *analytics.Record) *int64 { return &r.TokensIn })); got != 7 {
		t.Errorf("TokensIn at its offset = %d, want 7", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("fieldOffset of an accessor returning another variable: no panic")
		}
	}()
	other := new(string)
	fieldOffset(func(*analytics.Record) *string { return other })
}
