package admin

import (
	"context"
	"time"

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
	rows, next, err := store.ListAudit(ctx, s.db, store.AuditFilter(f), pg)
	if err != nil {
		return nil, err
	}
	return &List[store.AuditEntry]{Data: rows, NextCursor: next}, nil
}
