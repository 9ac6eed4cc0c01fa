// Package migrations holds the ClickHouse schema of the analytics store as
// SQL files embedded in the binary, named NNNN_name.sql and applied in
// version order (analytics/clickhouse.Store.Migrate). The statements keep to
// what ClickHouse 18.16 and current releases both accept: no Map,
// DateTime64, TTL, CODEC or ADD COLUMN IF NOT EXISTS.
package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.sql
var files embed.FS

// Migration is one versioned file of statements.
type Migration struct {
	Version uint32
	Name    string // the file name without .sql, e.g. "0001_request_logs"
	// Statements are the file's statements, one per element: the native
	// protocol runs one statement per query.
	Statements []string
}

// All returns the migrations in version order.
func All() ([]Migration, error) {
	names, err := fs.Glob(files, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	ms := make([]Migration, 0, len(names))
	seen := map[uint32]string{}
	for _, n := range names {
		num, _, ok := strings.Cut(n, "_")
		v, err := strconv.ParseUint(num, 10, 32)
		if !ok || err != nil || v == 0 {
			return nil, fmt.Errorf("migration %s: the name must start with a version number and _", n)
		}
		if prev, dup := seen[uint32(v)]; dup {
			return nil, fmt.Errorf("migrations %s and %s share version %d", prev, n, v)
		}
		seen[uint32(v)] = n
		b, err := files.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", n, err)
		}
		stmts := Split(string(b))
		if len(stmts) == 0 {
			return nil, fmt.Errorf("migration %s has no statements", n)
		}
		ms = append(ms, Migration{Version: uint32(v), Name: strings.TrimSuffix(n, ".sql"), Statements: stmts})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

// Split cuts SQL text into statements at semicolons that end a line, and
// drops "--" comment lines. The migration files keep semicolons out of
// string literals and comments mid-statement, which this relies on.
func Split(sql string) []string {
	var (
		out []string
		cur strings.Builder
	)
	for line := range strings.Lines(sql) {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(line)
		if strings.HasSuffix(t, ";") {
			if s := strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}
