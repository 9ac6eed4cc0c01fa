package migrations

import (
	"slices"
	"testing"
)

func TestAll(t *testing.T) {
	ms, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations")
	}
	for i, m := range ms {
		if i > 0 && m.Version <= ms[i-1].Version {
			t.Errorf("migration %s: version %d after %d", m.Name, m.Version, ms[i-1].Version)
		}
		if len(m.Statements) == 0 {
			t.Errorf("migration %s has no statements", m.Name)
		}
	}
}

func TestSplit(t *testing.T) {
	got := Split("-- a comment; still a comment\nCREATE TABLE a (x String);\n\n  -- another\nCREATE TABLE b (\n  y String\n);\nSELECT 1")
	want := []string{"CREATE TABLE a (x String)", "CREATE TABLE b (\n  y String\n)", "SELECT 1"}
	if !slices.Equal(got, want) {
		t.Errorf("Split: got %q, want %q", got, want)
	}
}
