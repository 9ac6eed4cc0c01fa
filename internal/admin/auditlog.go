package admin

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// AuditFilter selects audit entries; empty fields match everything. From is
// inclusive, To exclusive.
type AuditFilter struct {
	TenantID, ActorID, Action, ResourceType string
	From, To                                *time.Time
}

// ListAudit lists the platform audit log, newest first.
func (s *Service) ListAudit(ctx context.Context, p *auth.Principal, f AuditFilter, pg Page) (*List[store.AuditEntry], error) {
	if err := s.can(ctx, p, auth.OpAuditLog); err != nil {
		return nil, err
	}
	pg, err := checkPage(pg)
	if err != nil {
		return nil, err
	}
	if f.From != nil && f.To != nil && !f.From.Before(*f.To) {
		return nil, apierr.Invalid("from", "from must be before to")
	}
	var rows []store.AuditEntry
	q := s.db.NewSelect().Model(&rows)
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
	return listNewestFirst(ctx, "audit log", q, &rows, pg, func(e *store.AuditEntry) string { return e.ID })
}

// listNewestFirst runs q (a select into rows with its filters set) as one
// page ordered by the time-ordered id column descending: newest first. The
// cursor is the last id of the page. pg must have passed checkPage.
func listNewestFirst[T any](ctx context.Context, what string, q *bun.SelectQuery, rows *[]T, pg Page, id func(*T) string) (*List[T], error) {
	if pg.Cursor != "" {
		before, _ := store.DecodeCursor(pg.Cursor) // checked by checkPage
		q = q.Where("id < ?", before)
	}
	if err := q.OrderExpr("id DESC").Limit(int64(pg.Limit + 1)).Scan(ctx); err != nil && !isNoRows(err) {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	out := &List[T]{Data: *rows}
	if out.Data == nil {
		out.Data = []T{}
	}
	if len(out.Data) > pg.Limit {
		out.Data = out.Data[:pg.Limit]
		c := store.EncodeCursor(id(&out.Data[pg.Limit-1]))
		out.NextCursor = &c
	}
	return out, nil
}

// isNoRows reports whether err is a select that found nothing.
func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
