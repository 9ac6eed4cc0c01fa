package auth

import (
	"context"

	"github.com/sluicehq/sluice/internal/apierr"
)

// CredentialKind says how a principal authenticated.
type CredentialKind string

// Credential kinds.
const (
	CredUserToken CredentialKind = "user_token"
	CredSession   CredentialKind = "session"
)

// Principal is the authenticated caller of an admin request.
type Principal struct {
	UserID   string
	Email    string
	TenantID string
	Role     Role
	TokenID  string
	Kind     CredentialKind
	IP       string
	// RequestID identifies the request in logs and the audit log.
	RequestID string
}

// Can performs the policy check for op.
func (p *Principal) Can(op Op) error {
	if p == nil {
		return apierr.Unauthenticated(apierr.CodeMissingToken, "an admin credential is required")
	}
	return Check(p.Role, op)
}

// SeesTenant reports whether the principal acts inside tenant t.
// The Administrator acts across all tenants.
func (p *Principal) SeesTenant(t string) bool {
	return p != nil && (p.Role == Administrator || p.TenantID == t)
}

type ctxKey struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the principal of ctx, or nil.
func From(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxKey{}).(*Principal)
	return p
}
