package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/sluicehq/sluice/internal/page"
)

// Cond is one equality condition of a query; values are always bound as
// parameters, never spliced into SQL.
type Cond struct {
	col  string
	op   string
	args []any
}

// Eq matches rows whose column equals v.
func Eq(col string, v any) Cond { return Cond{col: col, op: "= ?", args: []any{v}} }

// Ne matches rows whose column differs from v.
func Ne(col string, v any) Cond { return Cond{col: col, op: "<> ?", args: []any{v}} }

// In matches rows whose column is one of vs.
func In(col string, vs any) Cond { return Cond{col: col, op: "IN (?)", args: []any{bun.In(vs)}} }

// IsNull matches rows whose column is NULL.
func IsNull(col string) Cond { return Cond{col: col, op: "IS NULL"} }

func where[Q interface {
	Where(string, ...any) Q
}](q Q, conds []Cond) Q {
	for _, c := range conds {
		q = q.Where("? "+c.op, append([]any{bun.Ident(c.col)}, c.args...)...)
	}
	return q
}

// Page selects a slice of a listing ordered by a unique key.
type Page struct {
	Limit  int    // 1..page.MaxLimit; 0 means page.DefaultLimit
	Cursor string // opaque, from a previous page's next cursor
}

// EncodeCursor makes an opaque cursor from the last key of a page.
func EncodeCursor(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

// DecodeCursor reads a cursor made by EncodeCursor.
func DecodeCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", fmt.Errorf("cursor is not valid")
	}
	return string(b), nil
}

// Get reads the row of type T matching every condition.
func Get[T any](ctx context.Context, db bun.IDB, conds ...Cond) (*T, error) {
	v := new(T)
	err := where(db.NewSelect().Model(v), conds).Limit(1).Scan(ctx)
	if err != nil {
		return nil, classify(err)
	}
	return v, nil
}

// Exists reports whether a row of type T matches every condition.
func Exists[T any](ctx context.Context, db bun.IDB, conds ...Cond) (bool, error) {
	ok, err := where(db.NewSelect().Model((*T)(nil)), conds).Exists(ctx)
	return ok, classify(err)
}

// Count counts the rows of type T matching every condition.
func Count[T any](ctx context.Context, db bun.IDB, conds ...Cond) (int, error) {
	n, err := where(db.NewSelect().Model((*T)(nil)), conds).Count(ctx)
	return int(n), classify(err)
}

// List returns one page of rows of type T matching every condition, ordered
// by keyCol ascending, and the cursor of the next page (nil at the end).
func List[T any](ctx context.Context, db bun.IDB, keyCol string, key func(*T) string, pg Page, conds ...Cond) ([]T, *string, error) {
	limit := pg.Limit
	if limit <= 0 {
		limit = page.DefaultLimit
	}
	var rows []T
	q := where(db.NewSelect().Model(&rows), conds).OrderExpr("? ASC", bun.Ident(keyCol)).Limit(int64(limit + 1))
	if pg.Cursor != "" {
		after, err := DecodeCursor(pg.Cursor)
		if err != nil {
			return nil, nil, err
		}
		q = q.Where("? > ?", bun.Ident(keyCol), after)
	}
	if err := q.Scan(ctx); err != nil && err != sql.ErrNoRows {
		return nil, nil, classify(err)
	}
	if rows == nil {
		rows = []T{}
	}
	if len(rows) > limit {
		rows = rows[:limit]
		c := EncodeCursor(key(&rows[limit-1]))
		return rows, &c, nil
	}
	return rows, nil, nil
}

// All returns every row of type T matching the conditions, ordered by orderCol.
func All[T any](ctx context.Context, db bun.IDB, orderCol string, conds ...Cond) ([]T, error) {
	var rows []T
	err := where(db.NewSelect().Model(&rows), conds).OrderExpr("? ASC", bun.Ident(orderCol)).Scan(ctx)
	if err != nil && err != sql.ErrNoRows {
		return nil, classify(err)
	}
	if rows == nil {
		rows = []T{}
	}
	return rows, nil
}

// Insert inserts v.
func Insert[T any](ctx context.Context, db bun.IDB, v *T) error {
	_, err := db.NewInsert().Model(v).Exec(ctx)
	return classify(err)
}

// Update writes the named columns of v, found by its primary key. It
// returns ErrNotFound when no row was changed.
func Update[T any](ctx context.Context, db bun.IDB, v *T, cols ...string) error {
	res, err := db.NewUpdate().Model(v).Column(cols...).WherePK().Exec(ctx)
	if err != nil {
		return classify(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// Delete deletes the rows of type T matching every condition and returns
// how many were deleted. Without conditions it refuses, to keep a bug from
// emptying a table.
func Delete[T any](ctx context.Context, db bun.IDB, conds ...Cond) (int64, error) {
	if len(conds) == 0 {
		return 0, fmt.Errorf("delete without conditions refused")
	}
	res, err := where(db.NewDelete().Model((*T)(nil)), conds).Exec(ctx)
	if err != nil {
		return 0, classify(err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// Lock locks the rows of type T matching every condition until the end of
// the transaction tx, so that a count-then-insert under them (a cap on a
// user's tokens) cannot be raced past. On PostgreSQL it is SELECT … FOR
// UPDATE; SQLite needs nothing, its write transactions run one at a time
// (the store opens them IMMEDIATE).
func Lock[T any](ctx context.Context, tx bun.Tx, conds ...Cond) error {
	if tx.Dialect().Name() != dialect.PG {
		return nil
	}
	var n []int
	err := where(tx.NewSelect().Model((*T)(nil)).ColumnExpr("1"), conds).For("UPDATE").Scan(ctx, &n)
	if err != nil && err != sql.ErrNoRows {
		return classify(err)
	}
	return nil
}
