// Package migrations holds the relational schema as SQL files embedded in
// the binary. One set serves SQLite and PostgreSQL: the files use only
// statements and types both accept.
package migrations

import (
	"embed"
	"fmt"

	"github.com/uptrace/bun/migrate"
)

//go:embed *.sql
var files embed.FS

// New returns the migrations, discovered from the embedded files.
func New() (*migrate.Migrations, error) {
	m := migrate.NewMigrations()
	if err := m.Discover(files); err != nil {
		return nil, fmt.Errorf("discover migrations: %w", err)
	}
	return m, nil
}
