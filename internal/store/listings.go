package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// AuditFilter selects audit log rows: each non-empty field must match, and
// ts lies in [From, To) when they are given.
type AuditFilter struct {
	TenantID, ActorID, Action, ResourceType string
	From, To                                *time.Time
}

// ListAudit returns one page of the audit log matching f, newest first,
// and the cursor of the next page (nil at the end). pg must have a limit
// of at least 1 and a cursor made by EncodeCursor (or none).
func ListAudit(ctx context.Context, db bun.IDB, f AuditFilter, pg Page) ([]AuditEntry, *string, error) {
	var rows []AuditEntry
	q := db.NewSelect().Model(&rows)
	for _, c := range []struct{ col, v string }{
		{"tenant_id", f.TenantID}, {"actor_id", f.ActorID}, {"action", f.Action}, {"resource_type", f.ResourceType},
	} {
		if c.v != "" {
			q = q.Where("? = ?", bun.Ident(c.col), c.v)
		}
	}
	if f.From != nil {
		q = q.Where("ts >= ?", f.From.UTC())
	}
	if f.To != nil {
		q = q.Where("ts < ?", f.To.UTC())
	}
	return listNewestFirst(ctx, "audit log", q, &rows, pg, func(e *AuditEntry) string { return e.ID })
}

// ListClientErrors returns one page of the reported client errors, newest
// first, as ListAudit does.
func ListClientErrors(ctx context.Context, db bun.IDB, pg Page) ([]ClientError, *string, error) {
	var rows []ClientError
	q := db.NewSelect().Model(&rows)
	return listNewestFirst(ctx, "client errors", q, &rows, pg, func(e *ClientError) string { return e.ID })
}

// listNewestFirst runs q (a select into rows with its filters set) as one
// page ordered by the time-ordered id column descending: newest first. The
// cursor is the last id of the page.
func listNewestFirst[T any](ctx context.Context, what string, q *bun.SelectQuery, rows *[]T, pg Page, id func(*T) string) ([]T, *string, error) {
	if pg.Cursor != "" {
		before, err := DecodeCursor(pg.Cursor)
		if err != nil {
			return nil, nil, err
		}
		q = q.Where("id < ?", before)
	}
	if err := q.OrderExpr("id DESC").Limit(int64(pg.Limit + 1)).Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, nil, fmt.Errorf("list %s: %w", what, err)
	}
	data := *rows
	if data == nil {
		data = []T{}
	}
	if len(data) > pg.Limit {
		data = data[:pg.Limit]
		c := EncodeCursor(id(&data[pg.Limit-1]))
		return data, &c, nil
	}
	return data, nil, nil
}

// ErrBadCursor is a cursor that decodes but was not made by the listing it
// is given to.
var ErrBadCursor = errors.New("cursor is not valid")

// ListModelPrices returns one page of model prices ordered by provider and
// model (provider "" for every provider's) and the cursor of the next page.
// A cursor of another listing is ErrBadCursor.
func ListModelPrices(ctx context.Context, db bun.IDB, provider string, pg Page) ([]ModelPrice, *string, error) {
	var rows []ModelPrice
	q := db.NewSelect().Model(&rows).OrderExpr("provider ASC, model ASC").Limit(int64(pg.Limit + 1))
	if provider != "" {
		q = q.Where("provider = ?", provider)
	}
	if pg.Cursor != "" {
		key, err := DecodeCursor(pg.Cursor)
		if err != nil {
			return nil, nil, err
		}
		prov, model, ok := strings.Cut(key, "\x00")
		if !ok {
			return nil, nil, ErrBadCursor
		}
		q = q.Where("(provider > ? OR (provider = ? AND model > ?))", prov, prov, model)
	}
	if err := q.Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, nil, fmt.Errorf("list model prices: %w", err)
	}
	if rows == nil {
		rows = []ModelPrice{}
	}
	if len(rows) > pg.Limit {
		rows = rows[:pg.Limit]
		last := rows[pg.Limit-1]
		c := EncodeCursor(last.Provider + "\x00" + last.Model)
		return rows, &c, nil
	}
	return rows, nil, nil
}

// GatewayScope selects the gateways of UsableGateways: every gateway when
// TenantID is "", else those of TenantID, and of those only the ones
// assigned to AssignedTo when it is not "".
type GatewayScope struct {
	TenantID   string
	AssignedTo string // a user id
}

// UsableGateways returns the gateways of tenants that are not deleted
// within scope, ordered by id.
func UsableGateways(ctx context.Context, db bun.IDB, scope GatewayScope) ([]Gateway, error) {
	var rows []Gateway
	q := db.NewSelect().Model(&rows).
		Where("tenant_id IN (?)", db.NewSelect().Table("tenants").Column("id").Where("status <> ?", TenantDeleted)).
		OrderExpr("id ASC")
	if scope.TenantID != "" {
		q = q.Where("tenant_id = ?", scope.TenantID)
	}
	if scope.AssignedTo != "" {
		q = q.Where("id IN (?)", db.NewSelect().Table("user_gateways").Column("gateway_id").Where("user_id = ?", scope.AssignedTo))
	}
	if err := q.Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("list gateways of active tenants: %w", err)
	}
	return rows, nil
}
