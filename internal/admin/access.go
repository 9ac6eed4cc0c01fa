package admin

import (
	"context"
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// maxDeniedPerMinute bounds the audit rows of refused actions per actor and
// minute (403s of writes, the rank rule, and 404s of lookups by id).
const maxDeniedPerMinute = 20

// maxAuditIDLen bounds a resource id that the caller chose (a path segment
// or a GraphQL argument) before it is written to the audit log.
const maxAuditIDLen = 128

// recordDenied records a refused action in the audit log with outcome
// "denied": best effort, outside any transaction, and at most
// maxDeniedPerMinute rows a minute per actor, so that a signed-in user
// cannot grow the audit log without bound by asking for what it may not
// have. The first refusal over the bound is logged, once per window.
func (s *Service) recordDenied(ctx context.Context, p *auth.Principal, c *change) {
	if p == nil {
		return
	}
	actor := p.UserID
	if actor == "" {
		actor = "token:" + p.TokenID
	}
	switch n := s.denials.add(actor, s.now()); {
	case n == maxDeniedPerMinute+1:
		s.log.WarnContext(ctx, "refused actions of this user are no longer audited until the minute ends",
			"user_id", p.UserID, "limit_per_minute", maxDeniedPerMinute, "request_id", p.RequestID)
		return
	case n > maxDeniedPerMinute:
		return
	}
	if err := store.Insert(ctx, s.db, s.auditEntry(p, c, "denied")); err != nil {
		s.log.WarnContext(ctx, "record a denied action in the audit log", "err", err)
	}
}

// missing answers the 404 of a lookup by id that found nothing the caller
// may see — no such resource, or one of another tenant (never a 403 for
// that, so that nothing can be enumerated) — and records it as a denied
// probe (see recordDenied). Both cases do the same work, so their timing
// does not tell them apart either. An Administrator sees every tenant: its
// 404s are plain misses and are not recorded.
func (s *Service) missing(ctx context.Context, p *auth.Principal, kind, id, reason string) error {
	if p != nil && p.Role != auth.Administrator {
		s.recordDenied(ctx, p, &change{Action: kind + ".lookup", ResourceType: kind, ResourceID: clip(id, maxAuditIDLen),
			TenantID: p.TenantID, Changes: store.Changes{"reason": reason}})
	}
	return apierr.NotFound(kind)
}

// Reasons of a recorded 404.
const (
	reasonNotFound    = "not_found"
	reasonOtherTenant = "other_tenant"
	// reasonNotVisible is a miss of a lookup scoped to what the caller
	// sees (a token under one gateway), which cannot tell the two apart.
	reasonNotVisible = "not_found_or_not_visible"
)

// userFor loads the user that op acts on: one p sees (else 404). When op
// writes — the user itself or anything it owns: its tokens, budget, rate
// limit, password, role, status and gateway assignments — the user's
// current role must also be one p may grant (else 403, audited): the rank
// rule, by which a Tenant Administrator can never act on an Administrator.
// This is the one place the rule is applied: every operation on a user or
// on what it owns loads the user here, and Authorize does too.
func (s *Service) userFor(ctx context.Context, p *auth.Principal, op auth.Op, id string) (*store.User, error) {
	u, err := s.user(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if op.Writes() && !p.Role.CanGrant(u.Role) {
		s.recordDenied(ctx, p, &change{Action: string(op), ResourceType: "user", ResourceID: u.ID, TenantID: u.TenantID,
			Changes: store.Changes{"reason": "outranked", "user_role": u.Role}})
		return nil, apierr.New(http.StatusForbidden, apierr.CodeForbidden,
			"the %s role may not change a user with the %s role or anything that user owns", p.Role, u.Role)
	}
	return u, nil
}

// clip returns s cut to at most n bytes of valid UTF-8.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	return strings.ToValidUTF8(s, "")
}
