// Package sqlitebackup copies a live SQLite database to a new file: the
// online backup of Sluice's embedded stores (sluice backup).
package sqlitebackup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
)

// Execer is the part of a database handle Into needs (*sql.DB, bun.DB).
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Into writes a consistent copy of db's main database to path with
// VACUUM INTO: one read transaction, so writers of a serving process go
// on meanwhile and the copy is what was committed when it began. The file
// is created owner-only (it may hold sealed keys, token hashes or request
// bodies) and must not exist yet; on failure it is removed.
func Into(ctx context.Context, db Execer, path string) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create backup file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create backup file: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, removeIfExists(path))
		}
	}()
	// An empty file is what VACUUM INTO accepts as its target.
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", path); err != nil {
		return fmt.Errorf("vacuum into %s: %w", path, err)
	}
	return nil
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove partial backup: %w", err)
	}
	return nil
}
